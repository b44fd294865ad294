package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import jcuda.driver.CUjit_option;
import org.junit.jupiter.api.Test;

/** A module the driver's JIT rejects is reported with the JIT's log and the kernels its line numbers fall in. */
class PtxModulesTest {
    private static final String PTX = String.join("\n", ".version 6.3", ".target sm_75", ".address_size 64", "",
            ".visible .entry weft_k0_add(", "    .param .u64 p0)", "{", "    ret;", "}", "",
            ".visible .entry weft_k1_maximum(", "    .param .u64 p0)", "{", "    .reg .f32 %f<3>;",
            "    max.NaN.f32 %f2, %f1, %f1;", "    ret;", "}", "");

    @Test
    void theErrorNamesTheKernelHoldingEachCitedLine() {
        String log = "ptxas application ptx input, line 15; error   : Modifier '.NaN' requires .target sm_80 or"
                + " higher\nptxas fatal   : Ptx assembly aborted due to errors\n";
        assertThat(PtxModules.kernelsAt(PTX, log)).containsExactly("weft_k1_maximum");
        assertThat(PtxModules.failure("CUDA_ERROR_INVALID_PTX", PTX, log, "info: 0 bytes stack frame"))
                .isEqualTo("the CUDA driver cannot load the generated PTX (CUDA_ERROR_INVALID_PTX) in kernel"
                        + " weft_k1_maximum: ptxas application ptx input, line 15; error   : Modifier '.NaN'"
                        + " requires .target sm_80 or higher\nptxas fatal   : Ptx assembly aborted due to errors"
                        + "\nJIT info log: info: 0 bytes stack frame");
    }

    @Test
    void eachLogBufferComesWithItsOwnSize() {
        jcuda.driver.JITOptions o = PtxModules.logOptions();
        assertThat(o.getBytes(CUjit_option.CU_JIT_ERROR_LOG_BUFFER))
                .hasSize(o.getInt(CUjit_option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES));
        assertThat(o.getBytes(CUjit_option.CU_JIT_INFO_LOG_BUFFER))
                .hasSize(o.getInt(CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES));
        assertThat(CUjit_option.CU_JIT_ERROR_LOG_BUFFER).isEqualTo(5);
        assertThat(CUjit_option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES).isEqualTo(4);
    }

    @Test
    void linesOutsideAnyKernelOrAnEmptyLogStillGiveTheError() {
        assertThat(PtxModules.kernelsAt(PTX, "line 2; error: unsupported .target")).isEmpty();
        assertThat(PtxModules.failure("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", PTX, "", ""))
                .isEqualTo("the CUDA driver cannot load the generated PTX (CUDA_ERROR_UNSUPPORTED_PTX_VERSION):"
                        + " no JIT error log");
    }
}
