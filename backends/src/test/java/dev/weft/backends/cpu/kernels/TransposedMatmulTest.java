package dev.weft.backends.cpu.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A matmul side stored transposed (what {@code fold-transposes} makes of {@code transpose} then {@code dot_general})
 * computes what the product of the explicit transpose does, on OpenBLAS and on the Java kernel; a compiled program
 * multiplying transposes folds them (no {@code transpose} left in its IR) and equals eager.
 */
class TransposedMatmulTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @ParameterizedTest(name = "{0} {1} transA={2} transB={3}")
    @CsvSource({"F64, native, true, false", "F64, native, false, true", "F64, native, true, true",
            "F32, native, true, true", "F64, java, true, false", "F64, java, false, true", "F32, java, true, true"})
    void aTransposedSideEqualsTheExplicitTranspose(DType t, String blas, boolean transA, boolean transB) {
        String previous = System.getProperty("weft.blas");
        System.setProperty("weft.blas", blas);
        try {
            int batch = 2, m = 5, k = 7, n = 3;
            Random rnd = new Random(m * 31 + k);
            MemorySegment a = random(t, batch * m * k, rnd), b = random(t, batch * k * n, rnd);
            // the stored forms: each batch's A as k x m, B as n x k
            MemorySegment as = transposeEach(t, a, batch, m, k, transA), bs = transposeEach(t, b, batch, k, n, transB);
            MemorySegment expected = Arena.ofAuto().allocate((long) batch * m * n * t.byteSize());
            MemorySegment actual = Arena.ofAuto().allocate((long) batch * m * n * t.byteSize());
            DotGeneral.matmul(t, a, b, expected, batch, m, k, n);
            DotGeneral.matmul(t, as, bs, actual, batch, m, k, n, transA, transB);
            for (long i = 0; i < (long) batch * m * n; i++) {
                assertThat(get(t, actual, i)).isCloseTo(get(t, expected, i), within(t == DType.F32 ? 1e-5 : 1e-13));
            }
        } finally {
            if (previous == null) {
                System.clearProperty("weft.blas");
            } else {
                System.setProperty("weft.blas", previous);
            }
        }
    }

    @Compile
    static Tensor gramAndOuter(Tensor a, Tensor b) {
        return a.transpose().matmul(b).matmul(b.transpose());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"F64", "F32"})
    void compiledTransposedProductsFoldAndEqualEager(DType t) {
        Random rnd = new Random(5);
        Tensor a = tensor(t, random(t, 6 * 4, rnd), 6, 4), b = tensor(t, random(t, 6 * 3, rnd), 6, 3);
        Tensor eager = a.transpose().matmul(b).matmul(b.transpose());
        double[] e = eager.cast(DType.F64).toDoubleArray(), c = gramAndOuter(a, b).cast(DType.F64).toDoubleArray();
        assertThat(c).containsExactly(e, within(t == DType.F32 ? 1e-5 : 1e-13));
        // Weft.lower runs the target's pipeline: the two transposes the program makes are gone
        String optimized = Weft.lower(TransposedMatmulTest.class, "gramAndOuter", TensorSpec.of(t, 6, 4),
                TensorSpec.of(t, 6, 3)).toMlir();
        assertThat(optimized).doesNotContain("stablehlo.transpose").contains("lhs_contracting_dimensions = [0]")
                .contains("rhs_contracting_dimensions = [1]");
    }

    private static Tensor tensor(DType t, MemorySegment data, long... shape) {
        return TensorAccess.concrete(new dev.weft.spi.Aval(t, dev.weft.spi.Shape.of(shape)), data);
    }

    private static MemorySegment random(DType t, int n, Random rnd) {
        MemorySegment s = Arena.ofAuto().allocate((long) n * t.byteSize());
        for (int i = 0; i < n; i++) {
            double v = rnd.nextDouble() * 2 - 1;
            if (t == DType.F32) {
                s.setAtIndex(Layouts.F32, i, (float) v);
            } else {
                s.setAtIndex(Layouts.F64, i, v);
            }
        }
        return s;
    }

    private static double get(DType t, MemorySegment s, long i) {
        return t == DType.F32 ? s.getAtIndex(Layouts.F32, i) : s.getAtIndex(Layouts.F64, i);
    }

    /** Each batch's rows x cols matrix as its transpose, or {@code s} itself when not {@code transpose}. */
    private static MemorySegment transposeEach(DType t, MemorySegment s, int batch, int rows, int cols,
                                               boolean transpose) {
        if (!transpose) {
            return s;
        }
        long es = t.byteSize(), size = (long) rows * cols * es;
        MemorySegment out = Arena.ofAuto().allocate(batch * size);
        for (int b = 0; b < batch; b++) {
            DataMovement.transpose(t, s.asSlice(b * size, size), new long[] {rows, cols}, new int[] {1, 0},
                    out.asSlice(b * size, size));
        }
        return out;
    }
}
