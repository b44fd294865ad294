package dev.weft.it.gpu;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.cpu.exec.CpuExecutable;
import dev.weft.backends.cpu.exec.CustomCallRegistry;
import dev.weft.backends.gpu.exec.GpuExecutable;
import dev.weft.backends.gpu.nccl.NcclLibrary;
import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBindings;
import dev.weft.testing.RankRunner;
import java.util.List;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * On a machine with CUDA devices and NCCL: {@link NcclPrograms#collectives} through the GPU executor (NCCL, the
 * combining kernels of custom reduce ops, CUDA events for nonblocking requests) gives exactly the CPU executor's
 * result, on one rank and on one fake rank per device.
 */
@Tag("gpu")
@EnabledIf("deviceAvailable")
class NcclOnGpuTest {
    static boolean deviceAvailable() {
        return GpuExecutable.unavailableReason().isEmpty();
    }

    @BeforeAll
    static void install() {
        Weft.install();
        try {
            NcclLibrary.load();
        } catch (IllegalStateException e) {
            assumeTrue(false, e.getMessage());
        }
    }

    @Test
    void collectivesOnOneRankMatchTheCpu() {
        check(1);
    }

    @Test
    void collectivesOnEveryDeviceMatchTheCpu() {
        int[] devices = new int[1];
        JCudaDriver.cuDeviceGetCount(devices);
        assumeTrue(devices[0] > 1, "one CUDA device: NCCL needs a device per rank");
        check(Math.min(devices[0], 8));
    }

    /** Inputs are small integers, so that every dtype and every order of summation gives exact results. */
    private static void check(int ranks) {
        RankRunner.run(ranks, world -> {
            float[] v = new float[4 * ranks];
            for (int i = 0; i < v.length; i++) {
                v[i] = (world.rank() * 7 + i * 3) % 5 + 1;
            }
            List<Tensor> x = List.of(Tensor.of(v, v.length));
            TensorSpec spec = TensorSpec.of(DType.F32, v.length);
            Module cpu = (Module) Weft.lower("cpu", NcclPrograms.class, "collectives", spec, world);
            Module gpu = (Module) Weft.lower("gpu", NcclPrograms.class, "collectives", spec, world);
            CommBindings comms = CommBindings.of(List.of(world.handle()));
            float[] expected = new CpuExecutable(cpu, CustomCallRegistry.of(cpu, comms)).run(x).getFirst()
                    .toFloatArray();
            GpuExecutable exe = new GpuExecutable(gpu, comms);
            for (int run = 0; run < 2; run++) {
                assertThat(exe.run(x).getFirst().toFloatArray()).as("rank %d, run %d", world.rank(), run)
                        .containsExactly(expected);
            }
        });
    }
}
