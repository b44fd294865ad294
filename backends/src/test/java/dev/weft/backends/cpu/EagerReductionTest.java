package dev.weft.backends.cpu;

import static dev.weft.backends.cpu.EagerElementwiseTest.tensor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.Tensor;
import java.util.Arrays;
import java.util.function.DoubleBinaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EagerReductionTest {
    private static final long[] SHAPE = {2, 3, 4};

    private static double[] data() {
        double[] v = new double[24];
        for (int i = 0; i < v.length; i++) {
            v[i] = (i * 7 % 11) - 5 + (i % 5 == 0 ? 1 : 0);
        }
        return v;
    }

    /** Reference: visits every input element and folds it into its output position. */
    private static double[] reference(double[] x, int[] axes, double init, DoubleBinaryOperator op) {
        boolean[] reduced = new boolean[3];
        for (int a : axes) {
            reduced[a] = true;
        }
        long[] outDims = new long[3];
        int outSize = 1;
        for (int d = 0; d < 3; d++) {
            outDims[d] = reduced[d] ? 1 : SHAPE[d];
            outSize *= (int) outDims[d];
        }
        double[] out = new double[outSize];
        Arrays.fill(out, init);
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 3; j++) {
                for (int k = 0; k < 4; k++) {
                    int oi = reduced[0] ? 0 : i, oj = reduced[1] ? 0 : j, ok = reduced[2] ? 0 : k;
                    int o = (int) ((oi * outDims[1] + oj) * outDims[2] + ok);
                    out[o] = op.applyAsDouble(out[o], x[(i * 3 + j) * 4 + k]);
                }
            }
        }
        return out;
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"F32", "F64", "I32", "I64"})
    void reductionsOverEverySubsetOfAxes(DType t) {
        double[] x = data();
        Tensor in = tensor(t, x, SHAPE);
        int[][] subsets = {{}, {0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}};
        for (int[] axes : subsets) {
            int[] effective = axes.length == 0 ? new int[] {0, 1, 2} : axes;
            assertClose(in.sum(axes), reference(x, effective, 0, Double::sum), "sum", axes);
            assertClose(in.max(axes), reference(x, effective, Double.NEGATIVE_INFINITY, Math::max), "max", axes);
            assertClose(in.min(axes), reference(x, effective, Double.POSITIVE_INFINITY, Math::min), "min", axes);
            assertClose(in.div(in.abs().add(1)).add(1).prod(axes),
                    reference(in.div(in.abs().add(1)).add(1).toDoubleArray(), effective, 1, (a, b) -> a * b),
                    "prod", axes);
        }
    }

    private static void assertClose(Tensor got, double[] want, String what, int[] axes) {
        double[] g = got.toDoubleArray();
        assertThat(g).as("%s over %s", what, Arrays.toString(axes)).hasSize(want.length);
        for (int i = 0; i < want.length; i++) {
            assertThat(g[i]).as("%s over %s [%d]", what, Arrays.toString(axes), i)
                    .isCloseTo(want[i], within(1e-4 * Math.max(1, Math.abs(want[i]))));
        }
    }

    @Test
    void handDerivedValues() {
        Tensor x = Tensor.of(new int[] {1, 2, 3, 4, 5, 6}, 2, 3);
        assertThat(x.sum().toIntArray()).containsExactly(21);
        assertThat(x.sum(0).toIntArray()).containsExactly(5, 7, 9);
        assertThat(x.sum(-1).toIntArray()).containsExactly(6, 15);
        assertThat(x.prod(1).toIntArray()).containsExactly(6, 120);
        assertThat(x.max(0).toIntArray()).containsExactly(4, 5, 6);
        assertThat(x.min(1).toIntArray()).containsExactly(1, 4);
        assertThat(x.sum().rank()).isZero();
        assertThat(Tensor.of(new double[] {1, 2, 3, 4}, 2, 2).mean(1).toDoubleArray()).containsExactly(1.5, 3.5);
        assertThat(Tensor.of(new float[] {1, 2, 3, 4}).mean().item()).isEqualTo(2.5);
    }

    @Test
    void maxAndMinPropagateNaN() {
        Tensor x = Tensor.of(new double[] {1, Double.NaN, 3, 4, 5, 6}, 2, 3);
        assertThat(x.max(1).toDoubleArray()).containsExactly(Double.NaN, 6);
        assertThat(x.min(0).toDoubleArray()).containsExactly(1, Double.NaN, 3);
        assertThat(Tensor.of(new float[] {Float.NaN, 1}).min().item()).isNaN();
    }

    @Test
    void largeF32SumIsAccurate() {
        int n = 1 << 20;
        assertThat(Tensor.full(DType.F32, 0.1, n).sum().item()).isCloseTo(n * 0.1, within(1.0));
    }

    @Test
    void reductionOfEmptyAxisGivesIdentity() {
        Tensor empty = Tensor.zeros(DType.F64, 0, 3);
        assertThat(empty.sum(0).toDoubleArray()).containsExactly(0, 0, 0);
        assertThat(empty.prod(0).toDoubleArray()).containsExactly(1, 1, 1);
        assertThat(empty.max(0).toDoubleArray()).containsExactly(Double.NEGATIVE_INFINITY,
                Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY);
    }
}
