package dev.weft.backends.gpu.exec.ext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.it.gpu.NcclPrograms;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Module;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link KernelLocalReduce}: one combining kernel launch per call, a kernel per function, count and rank count. */
class KernelLocalReduceTest {
    private static final long STREAM = FakeResources.STREAM;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static Func reduction(ReduceOp op, DType t, long count) {
        Module m = (Module) Weft.lower("gpu", NcclPrograms.class, "allreduce", TensorSpec.of(t, count),
                Comm.world(), op);
        return m.functions().get(1);
    }

    @Test
    void eachCallLaunchesTheCombiningKernelOnGatheredAndOut() {
        FakeResources res = new FakeResources();
        KernelLocalReduce reduce = new KernelLocalReduce(res);
        Func f = reduction(NcclPrograms.XPLUS, DType.I32, 8);
        reduce.apply(STREAM, f, DType.I32, 8, 4, 5000, 6000);
        reduce.apply(STREAM, f, DType.I32, 8, 4, 7000, 8000);
        reduce.apply(STREAM, f, DType.I32, 2, 4, 5000, 6000);
        reduce.apply(STREAM, f, DType.I32, 0, 4, 5000, 6000);
        assertThat(res.lines).containsExactly(
                "launch weft_combine_4_8_weft_reduce_xplus_i32_8 [5000, 6000]",
                "launch weft_combine_4_8_weft_reduce_xplus_i32_8 [7000, 8000]",
                "launch weft_combine_4_2_weft_reduce_xplus_i32_8 [5000, 6000]");
        assertThat(res.launched.get(1)).isSameAs(res.launched.get(0));
        assertThat(res.launched.get(2).launch().gridX()).isEqualTo(1);
    }

    @Test
    void theStreamAndDtypeMustMatch() {
        KernelLocalReduce reduce = new KernelLocalReduce(new FakeResources());
        Func f = reduction(NcclPrograms.WHERE_MAX, DType.F64, 3);
        assertThatThrownBy(() -> reduce.apply(1, f, DType.F64, 3, 2, 0, 0))
                .hasMessage("stream 0x1 is not the executable's stream");
        assertThatThrownBy(() -> reduce.apply(STREAM, f, DType.F32, 3, 2, 0, 0))
                .hasMessage("reduce function weft_reduce_where_max_f64_3 combines f64, not f32");
    }

    @Test
    void checkRejectsAFunctionThatIsNotElementwise() {
        assertThatThrownBy(() -> KernelLocalReduce.check(reduction(NcclPrograms.PLUS_TOTAL, DType.F32, 4)))
                .hasMessage("non-elementwise op stablehlo.reduce in an elementwise body");
        KernelLocalReduce.check(reduction(NcclPrograms.XPLUS, DType.F32, 4));
    }
}
