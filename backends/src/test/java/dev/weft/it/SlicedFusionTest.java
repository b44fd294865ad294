package dev.weft.it;

import static dev.weft.it.Ref.assertExact;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.cpu.kernels.FloatMath;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Slices that only a fusion reads are absorbed into it as views of their source: the compiled program reads the
 * windows in place and equals the eager program (which materialises each slice) exactly, and a plain-loop
 * reference.
 */
class SlicedFusionTest {
    private static final long ROWS = 4;
    private static final long COLS = 5;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    static Tensor body2d(Tensor x, Tensor y, int r0, int c0, int r1, int c1) {
        Tensor a = x.slice(new long[] {r0, c0}, new long[] {r0 + ROWS, c0 + COLS});
        Tensor b = x.slice(new long[] {r1, c1}, new long[] {r1 + ROWS, c1 + COLS});
        Tensor c = y.slice(new long[] {0, c1}, new long[] {ROWS, c1 + COLS});
        return a.mul(b).add(c).sub(a.mul(3));
    }

    @Compile
    static Tensor sliced2d(Tensor x, Tensor y, int r0, int c0, int r1, int c1) {
        return body2d(x, y, r0, c0, r1, c1);
    }

    static Tensor body3d(Tensor x, int d, int r, int c) {
        Tensor a = x.slice(new long[] {d, r, c}, new long[] {d + 2, r + 3, c + 4});
        Tensor b = x.slice(new long[] {0, 0, 0}, new long[] {2, 3, 4});
        return a.sub(b).mul(a.add(1.0));
    }

    @Compile
    static Tensor sliced3d(Tensor x, int d, int r, int c) {
        return body3d(x, d, r, c);
    }

    static Tensor bodyLarge(Tensor x) {
        long n = x.shape()[0] - 1, m = x.shape()[1] - 1;
        Tensor a = x.slice(new long[] {1, 0}, new long[] {n + 1, m});
        Tensor b = x.slice(new long[] {0, 1}, new long[] {n, m + 1});
        return a.add(b).mul(0.25);
    }

    @Compile
    static Tensor slicedLarge(Tensor x) {
        return bodyLarge(x);
    }

    static Tensor bodyWave(Tensor x) {
        long n = x.shape()[0] - 1, m = x.shape()[1] - 1;
        Tensor a = x.slice(new long[] {1, 0}, new long[] {n + 1, m});
        Tensor b = x.slice(new long[] {0, 1}, new long[] {n, m + 1});
        return a.sin().mul(b).add(b.exp().mul(0.5)).sub(a.cos());
    }

    @Compile
    static Tensor slicedWave(Tensor x) {
        return bodyWave(x);
    }

    private static Tensor random(DType dtype, long... shape) {
        Random rnd = new Random(shape.length * 31L + shape[0]);
        double[] v = new double[(int) Ref.size(shape)];
        for (int i = 0; i < v.length; i++) {
            v[i] = dtype.isFloating() ? rnd.nextGaussian() : rnd.nextInt(19) - 9;
        }
        return Ref.make(dtype, v, shape);
    }

    @ParameterizedTest
    @CsvSource({"F64,0,0,0,0", "F64,3,4,1,2", "F64,2,1,3,4", "F32,1,3,0,4", "I32,3,0,2,1", "I64,0,4,3,3"})
    void twoDimensionalWindowsEqualEagerAndLoops(DType dtype, int r0, int c0, int r1, int c1) {
        Tensor x = random(dtype, 7, 9);
        Tensor y = random(dtype, 4, 9);
        Tensor got = sliced2d(x, y, r0, c0, r1, c1);
        assertExact("compiled vs eager", got, body2d(x, y, r0, c0, r1, c1));
        if (dtype == DType.F64) {
            double[] xv = x.toDoubleArray(), yv = y.toDoubleArray(), want = new double[(int) (ROWS * COLS)];
            for (int i = 0; i < ROWS; i++) {
                for (int j = 0; j < COLS; j++) {
                    double a = xv[(r0 + i) * 9 + c0 + j], b = xv[(r1 + i) * 9 + c1 + j], c = yv[i * 9 + c1 + j];
                    want[(int) (i * COLS + j)] = a * b + c - a * 3;
                }
            }
            assertThat(got.toDoubleArray()).containsExactly(want);
        }
    }

    @ParameterizedTest
    @CsvSource({"0,0,0", "1,1,2", "2,0,1", "1,2,0"})
    void threeDimensionalWindowsEqualEager(int d, int r, int c) {
        Tensor x = random(DType.F64, 4, 5, 6);
        assertExact("compiled vs eager", sliced3d(x, d, r, c), body3d(x, d, r, c));
    }

    @Test
    void windowsOfAFusionRunInParallelEqualEager() {
        Tensor x = random(DType.F64, 1101, 1001);
        assertExact("compiled vs eager", slicedLarge(x), bodyLarge(x));
    }

    /** Rows shorter than a fused loop's blocks, rows of one block and a tail, and rows split over threads. */
    @ParameterizedTest
    @CsvSource({"9,7", "40,700", "700,1600"})
    void f32SinesCosinesAndExponentialsOfWindowsEqualEagerAndLoops(int rows, int cols) {
        assertThat(Weft.lower(SlicedFusionTest.class, "slicedWave", TensorSpec.of(DType.F32, rows, cols)).toMlir())
                .doesNotContain("stablehlo.slice")
                .contains("\"weft.fusion\"", "stablehlo.sine", "stablehlo.exponential", "stablehlo.cosine");
        Tensor x = random(DType.F32, rows, cols);
        Tensor got = slicedWave(x);
        assertExact("compiled vs eager", got, bodyWave(x));
        float[] xv = x.toFloatArray(), g = got.toFloatArray();
        int m = cols - 1;
        for (int i = 0; i < rows - 1; i++) {
            for (int j = 0; j < m; j++) {
                float a = xv[(i + 1) * cols + j], b = xv[i * cols + j + 1];
                float want = FloatMath.sin(a) * b + FloatMath.exp(b) * 0.5f - FloatMath.cos(a);
                assertThat(Float.floatToRawIntBits(g[i * m + j])).as("[%d, %d]", i, j)
                        .isEqualTo(Float.floatToRawIntBits(want));
            }
        }
    }

    @Test
    void theLoweredModuleViewsTheSourceInsteadOfSlicing() {
        String mlir = Weft.lower(SlicedFusionTest.class, "sliced2d", TensorSpec.of(DType.F64, 7, 9),
                TensorSpec.of(DType.F64, 4, 9), 1, 2, 3, 4).toMlir();
        assertThat(mlir).doesNotContain("stablehlo.slice").contains("\"weft.fusion\"")
                .contains("weft.slice_starts = [array<i64: 1, 2>, array<i64: 3, 4>, array<i64: 0, 4>, array<i64>]");
    }
}
