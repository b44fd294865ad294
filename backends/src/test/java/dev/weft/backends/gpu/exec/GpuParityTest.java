package dev.weft.backends.gpu.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.cpu.exec.CpuExecutable;
import dev.weft.backends.cpu.exec.CustomCallRegistry;
import dev.weft.lowering.ir.Module;
import dev.weft.spi.CommBindings;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** On a machine with a CUDA device: the GPU executor's results match the CPU executor's for the same module. */
@Tag("gpu")
@EnabledIf("deviceAvailable")
class GpuParityTest {
    static boolean deviceAvailable() {
        return GpuExecutable.unavailableReason().isEmpty();
    }

    @BeforeAll
    static void install() {
        Weft.install();
    }

    private static Tensor random(DType t, Random r, long... shape) {
        int n = (int) java.util.Arrays.stream(shape).reduce(1, (a, b) -> a * b);
        return switch (t) {
            case F32 -> {
                float[] v = new float[n];
                for (int i = 0; i < n; i++) {
                    v[i] = (float) (r.nextDouble() * 4 - 2);
                }
                yield Tensor.of(v, shape);
            }
            case F64 -> Tensor.of(r.doubles(n, -2, 2).toArray(), shape);
            case I32 -> Tensor.of(r.ints(n, -50, 50).toArray(), shape);
            default -> throw new IllegalArgumentException(t.toString());
        };
    }

    /** Runs {@code method} lowered for each target on the same arguments; compares within {@code tolerance}. */
    private static void check(double tolerance, String method, Object... args) {
        Random r = new Random(42);
        Object[] specs = new Object[args.length];
        List<Tensor> tensors = new java.util.ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i] instanceof Tensor t) {
                specs[i] = TensorSpec.of(t.dtype(), t.shape());
                tensors.add(random(t.dtype(), r, t.shape()));
            } else {
                specs[i] = args[i];
            }
        }
        Module cpu = (Module) Weft.lower("cpu", Programs.class, method, specs);
        Module gpu = (Module) Weft.lower("gpu", Programs.class, method, specs);
        Tensor expected = new CpuExecutable(cpu, CustomCallRegistry.of(cpu, CommBindings.NONE)).run(tensors)
                .getFirst();
        GpuExecutable exe = new GpuExecutable(gpu, CommBindings.NONE);
        for (int run = 0; run < 2; run++) {
            Tensor actual = exe.run(tensors).getFirst();
            assertThat(actual.shape()).isEqualTo(expected.shape());
            double[] a = actual.cast(DType.F64).toDoubleArray(), e = expected.cast(DType.F64).toDoubleArray();
            for (int i = 0; i < e.length; i++) {
                if (Double.isNaN(e[i])) {
                    assertThat(a[i]).as("%s element %d", method, i).isNaN();
                } else {
                    assertThat(a[i]).as("%s element %d", method, i).isCloseTo(e[i],
                            org.assertj.core.data.Offset.offset(tolerance * Math.max(1, Math.abs(e[i]))));
                }
            }
        }
    }

    @Test
    void fusedTranscendentals() {
        check(2e-6, "smooth", Tensor.zeros(DType.F32, 3000));
        check(1e-14, "smooth", Tensor.zeros(DType.F64, 17, 5));
    }

    @Test
    void matmulThenFusionThenReduction() {
        check(1e-5, "logistic", Tensor.zeros(DType.F32, 37, 20), Tensor.zeros(DType.F32, 20, 9));
    }

    @Test
    void reductionsOverAnAxis() {
        check(1e-12, "reductions", Tensor.zeros(DType.F64, 600, 7));
    }

    @Test
    void fullSumOverManyBlocks() {
        check(1e-9, "total", Tensor.zeros(DType.F64, 1 << 20));
        check(1e-4, "total", Tensor.zeros(DType.F32, 3_000_001));
    }

    @Test
    void aWhileLoopAndSelectionCompositions() {
        check(1e-6, "halveUntilSmall", Tensor.zeros(DType.F32, 64));
        check(1e-12, "lookups", Tensor.zeros(DType.F64, 6, 5));
    }

    @Test
    void dataMovement() {
        check(0, "shuffle", Tensor.zeros(DType.F32, 4, 4));
    }

    @Test
    void countedLoopUsingItsIndex() {
        check(1e-6, "iterate", Tensor.zeros(DType.F32, 5), 20);
    }

    @Test
    void dynamicSlicesInALoop() {
        check(1e-5, "prefixRows", Tensor.zeros(DType.F32, 50, 33));
    }

    @Test
    void loopWithConditional() {
        check(1e-6, "loop", Tensor.zeros(DType.F32, 5), 10);
    }

    @Test
    void integerArithmeticAndIota() {
        check(0, "integers", Tensor.zeros(DType.I32, 8), Tensor.zeros(DType.I32, 8));
    }

    @Test
    void conversions() {
        check(1e-6, "casts", Tensor.zeros(DType.F32, 7).add(3));
    }
}
