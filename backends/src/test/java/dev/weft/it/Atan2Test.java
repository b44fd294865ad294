package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.testing.Ranks;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code Tensor.atan2} equals {@link Math#atan2}, evaluated here element by element (signed zeros included), eagerly
 * and compiled: as one op, fused with others, with a scalar, and on fake ranks; its derivative equals central
 * finite differences of {@link Math#atan2} in every quadrant, eagerly and compiled.
 */
class Atan2Test {
    private static final double INF = Double.POSITIVE_INFINITY;
    /** Points {@code (Y[i], X[i])}: the four quadrants, the axes, signed zeros, infinities, NaN, extreme ratios. */
    private static final double[] Y = {1, 1, -1, -1, 3, -2.5, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 1, -1, 1,
        -1, INF, INF, -INF, -INF, 1, 1, -1, INF, -INF, Double.NaN, 1, 1e-30, 1e30, -7e-40, 0.75};
    private static final double[] X = {1, -1, -1, 1, -4, 0.5, 1, 1, -1, -1, 0.0, 0.0, -0.0, -0.0, 0.0, 0.0, -0.0,
        -0.0, INF, -INF, INF, -INF, INF, -INF, -INF, 1, -2, 1, Double.NaN, 2, -3e-30, -5, 0.75};

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor lone(Tensor y, Tensor x) {
        return y.atan2(x);
    }

    /** atan2 among other elementwise ops (multiplying by 1 keeps every value, -0.0 and NaN included). */
    @Compile
    static Tensor fused(Tensor y, Tensor x) {
        return y.mul(1).atan2(x.mul(1)).mul(1);
    }

    @Compile
    static Tensor withScalar(Tensor y, double x) {
        return y.atan2(x);
    }

    @Compile
    static Tensor gathered(Comm c, Tensor y, Tensor x) {
        return c.allgather(y).atan2(c.allgather(x));
    }

    @Compile
    static Tensor gradY(Tensor y, Tensor x) {
        return Weft.grad(v -> v.atan2(x).sum()).apply(y);
    }

    @Compile
    static Tensor gradX(Tensor y, Tensor x) {
        return Weft.grad(v -> y.atan2(v).sum()).apply(x);
    }

    private static Tensor tensor(DType t, double[] v) {
        return Tensor.of(v, v.length).cast(t);
    }

    /** Math.atan2 of each point, on the points as {@code t} holds them, rounded to {@code t}. */
    private static double[] expected(DType t, double[] y, double[] x) {
        double[] out = new double[y.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = t == DType.F32 ? (float) Math.atan2((float) y[i], (float) x[i]) : Math.atan2(y[i], x[i]);
        }
        return out;
    }

    /** Equal bit for bit, except that any NaN matches any NaN. */
    private static void assertSame(Tensor actual, double[] expected, String what) {
        double[] got = actual.toDoubleArray();
        assertThat(got).hasSameSizeAs(expected);
        for (int i = 0; i < got.length; i++) {
            String at = what + " at (" + Y[i % Y.length] + ", " + X[i % X.length] + "): " + got[i] + " vs "
                    + expected[i];
            if (Double.isNaN(expected[i])) {
                assertThat(got[i]).as(at).isNaN();
            } else {
                assertThat(Double.doubleToRawLongBits(got[i])).as(at)
                        .isEqualTo(Double.doubleToRawLongBits(expected[i]));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64"})
    void equalsMathAtan2EagerAndCompiled(DType t) {
        Tensor y = tensor(t, Y), x = tensor(t, X);
        double[] expected = expected(t, Y, X);
        assertThat(y.atan2(x).dtype()).isEqualTo(t);
        assertSame(y.atan2(x), expected, "eager");
        assertSame(lone(y, x), expected, "compiled");
        assertSame(fused(y, x), expected, "compiled, fused");
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64"})
    void theFusedCaseComputesAtan2InsideAFusion(DType t) {
        TensorSpec s = TensorSpec.of(t, Y.length);
        String fused = Weft.lower(Atan2Test.class, "fused", s, s).toMlir();
        assertThat(fused).contains("\"weft.fusion\"");
        assertThat(fused.substring(fused.indexOf("\"weft.fusion\""))).contains("\"stablehlo.atan2\"");
        assertThat(Weft.lower(Atan2Test.class, "lone", s, s).toMlir()).contains("\"stablehlo.atan2\"");
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64"})
    void aScalarIsTheSecondOperandEverywhere(DType t) {
        for (double x : new double[] {2, -2, 0.0, -0.0, INF}) {
            double[] xs = new double[Y.length];
            Arrays.fill(xs, x);
            double[] expected = expected(t, Y, xs);
            assertSame(tensor(t, Y).atan2(x), expected, "eager, x = " + x);
            assertSame(withScalar(tensor(t, Y), x), expected, "compiled, x = " + x);
        }
    }

    @Test
    void broadcastsLikeTheOtherBinaryOps() {
        Tensor y = Tensor.of(new double[] {1, -1}, 2, 1), x = Tensor.of(new double[] {1, -1, 0.0});
        Tensor r = lone(y, x);
        assertThat(r.shape()).containsExactly(2, 3);
        double[] expected = new double[6];
        for (int i = 0; i < 6; i++) {
            expected[i] = Math.atan2(i < 3 ? 1 : -1, new double[] {1, -1, 0.0}[i % 3]);
        }
        assertThat(r.toDoubleArray()).containsExactly(expected);
    }

    @Ranks({1, 2, 3})
    void onFakeRanksEveryRankGetsEveryPoint(Comm c) {
        int per = 11;
        int n = per * c.size();
        double[] y = new double[per], x = new double[per], allY = new double[n], allX = new double[n];
        for (int r = 0; r < c.size(); r++) {
            for (int i = 0; i < per; i++) {
                int k = (r * per + i) % Y.length;
                allY[r * per + i] = Y[k];
                allX[r * per + i] = X[k];
                if (r == c.rank()) {
                    y[i] = Y[k];
                    x[i] = X[k];
                }
            }
        }
        for (DType t : List.of(DType.F32, DType.F64)) {
            assertSame(gathered(c, tensor(t, y), tensor(t, x)), expected(t, allY, allX), "rank " + c.rank());
        }
    }

    @Test
    void isNotDefinedOnIntegers() {
        Tensor i = Tensor.of(new int[] {1, 2});
        assertThatThrownBy(() -> i.atan2(i)).isInstanceOf(DTypeException.class).hasMessageContaining("atan2")
                .hasMessageContaining("f32 or f64");
        assertThatThrownBy(() -> i.atan2(1)).isInstanceOf(DTypeException.class);
    }

    /** Points off the origin and off the cut along the negative x axis, one per octant. */
    private static final double[] GY = {0.3, 1.7, 2.0, 0.4, -0.3, -1.7, -2.0, -0.4};
    private static final double[] GX = {1.7, 0.3, -0.4, -2.0, -1.7, -0.3, 0.4, 2.0};

    @Test
    void gradientEqualsFiniteDifferencesOfMathAtan2() {
        Tensor y = Tensor.of(GY, GY.length), x = Tensor.of(GX, GX.length);
        double[] dy = difference(true), dx = difference(false);
        assertClose(Weft.grad(v -> v.atan2(x).sum()).apply(y), dy);
        assertClose(Weft.grad(v -> y.atan2(v).sum()).apply(x), dx);
        assertClose(gradY(y, x), dy);
        assertClose(gradX(y, x), dx);
    }

    /** The central difference of Math.atan2 at each point, in y when {@code inY}, else in x. */
    private static double[] difference(boolean inY) {
        double h = 1e-6, hy = inY ? h : 0, hx = inY ? 0 : h;
        double[] d = new double[GY.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = (Math.atan2(GY[i] + hy, GX[i] + hx) - Math.atan2(GY[i] - hy, GX[i] - hx)) / (2 * h);
        }
        return d;
    }

    private static void assertClose(Tensor actual, double[] expected) {
        double[] got = actual.toDoubleArray();
        assertThat(got).hasSameSizeAs(expected);
        for (int i = 0; i < got.length; i++) {
            assertThat(got[i]).as("at (%s, %s)", GY[i], GX[i]).isCloseTo(expected[i], within(1e-8));
        }
    }
}
