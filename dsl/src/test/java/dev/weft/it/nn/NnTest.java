package dev.weft.it.nn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.nn.Nn;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * {@link Nn} and the Tensor additions an ML user reaches for (keepDims, argmax/argmin, take, broadcasting matmul,
 * slice along an axis, where with a number) against plain-Java references written from PyTorch's and NumPy's
 * definitions, in f64: values to 1e-12, gradients against central differences, no NaN at extreme inputs (compiled:
 * the backends' NnCompiledTest).
 */
class NnTest {
    private static final double[][] LOGITS = {{1, 2, 3, -1}, {1000, -1000, 0, 5}, {-1e3, -1e3, -1e3, -1e3}};

    static Tensor logits() {
        double[] flat = new double[12];
        for (int i = 0; i < 3; i++) {
            System.arraycopy(LOGITS[i], 0, flat, 4 * i, 4);
        }
        return Tensor.of(flat, 3, 4);
    }

    static double logsumexp(double[] row) {
        double m = Double.NEGATIVE_INFINITY;
        for (double v : row) {
            m = Math.max(m, v);
        }
        double s = 0;
        for (double v : row) {
            s += Math.exp(v - m);
        }
        return m + Math.log(s);
    }

    @Test
    void softmaxFamilyMatchesItsDefinitionWithoutOverflow() {
        Tensor x = logits();
        double[] lse = Nn.logsumexp(x, 1).toDoubleArray();
        double[] sm = Nn.softmax(x, 1).toDoubleArray(), lsm = Nn.logSoftmax(x, 1).toDoubleArray();
        for (int i = 0; i < 3; i++) {
            double l = logsumexp(LOGITS[i]);
            assertThat(lse[i]).isCloseTo(l, within(1e-12 * Math.max(1, Math.abs(l))));
            for (int j = 0; j < 4; j++) {
                assertThat(lsm[4 * i + j]).isCloseTo(LOGITS[i][j] - l, within(1e-9));
                assertThat(sm[4 * i + j]).isCloseTo(Math.exp(LOGITS[i][j] - l), within(1e-12));
            }
        }
        Tensor labels = Tensor.of(new long[] {2, 0, 3});
        double expected = 0;
        for (int i = 0; i < 3; i++) {
            expected += logsumexp(LOGITS[i]) - LOGITS[i][(int) labels.toLongArray()[i]];
        }
        assertThat(Nn.crossEntropy(x, labels).item()).isCloseTo(expected / 3, within(1e-12));
        Tensor g = Weft.grad((Tensor v) -> Nn.crossEntropy(v, labels)).apply(x);
        double[] gs = g.toDoubleArray();
        for (double v : gs) {
            assertThat(v).isFinite();
        }
        // d/dx of mean cross-entropy: (softmax - onehot) / N
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 4; j++) {
                double want = (sm[4 * i + j] - (j == labels.toLongArray()[i] ? 1 : 0)) / 3;
                assertThat(gs[4 * i + j]).isCloseTo(want, within(1e-12));
            }
        }
        assertThat(Nn.logsumexp(Tensor.full(DType.F64, Double.NEGATIVE_INFINITY, 2, 3), 1).toDoubleArray())
                .containsExactly(Double.NEGATIVE_INFINITY, Double.NEGATIVE_INFINITY);
    }

    @Test
    void activationsAndLayerNorm() {
        double[] xs = {-800, -3, -0.5, 0, 0.5, 3, 800};
        Tensor x = Tensor.of(xs);
        double[] relu = Nn.relu(x).toDoubleArray(), sig = Nn.sigmoid(x).toDoubleArray();
        double[] gelu = Nn.gelu(x).toDoubleArray();
        for (int i = 0; i < xs.length; i++) {
            double v = xs[i];
            assertThat(relu[i]).isEqualTo(Math.max(v, 0));
            assertThat(sig[i]).isCloseTo(1 / (1 + Math.exp(-v)), within(1e-15));
            double t = Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v));
            assertThat(gelu[i]).isCloseTo(0.5 * v * (1 + t), within(1e-12 * Math.max(1, Math.abs(v))));
        }
        double[] gs = Weft.grad((Tensor v) -> Nn.sigmoid(v).sum()).apply(x).toDoubleArray();
        for (int i = 0; i < xs.length; i++) {
            double s = 1 / (1 + Math.exp(-xs[i]));
            assertThat(gs[i]).isCloseTo(s * (1 - s), within(1e-15));
        }
        Tensor rows = Tensor.of(new double[] {1, 2, 3, 4, -1, 0, 1, 10}, 2, 4);
        Tensor gamma = Tensor.of(new double[] {1, 2, 0.5, -1}), beta = Tensor.of(new double[] {0, 1, 0, -2});
        double[] ln = Nn.layerNorm(rows, gamma, beta, 1e-5).toDoubleArray();
        double[] r = rows.toDoubleArray(), gm = gamma.toDoubleArray(), bt = beta.toDoubleArray();
        for (int i = 0; i < 2; i++) {
            double mean = 0, var = 0;
            for (int j = 0; j < 4; j++) {
                mean += r[4 * i + j] / 4;
            }
            for (int j = 0; j < 4; j++) {
                var += (r[4 * i + j] - mean) * (r[4 * i + j] - mean) / 4;
            }
            for (int j = 0; j < 4; j++) {
                double want = (r[4 * i + j] - mean) / Math.sqrt(var + 1e-5) * gm[j] + bt[j];
                assertThat(ln[4 * i + j]).isCloseTo(want, within(1e-12));
            }
        }
        checkGradient(v -> Nn.layerNorm(v, gamma, beta, 1e-5).mul(v).sum(), rows);
        checkGradient(v -> Nn.gelu(v).mul(v).sum(), Tensor.of(new double[] {-2, -0.3, 0.1, 1.7}));
    }

    @Test
    void oneHotArgmaxAndTake() {
        Tensor idx = Tensor.of(new int[] {2, 0, 5, -1});
        assertThat(Nn.oneHot(idx, 3, DType.F32).toFloatArray()).containsExactly(0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
        Tensor x = Tensor.of(new double[] {1, 5, 5, 2, Double.NaN, 0, -1, -3, -3}, 3, 3);
        assertThat(x.argmax(1).toLongArray()).containsExactly(1, 1, 0);
        assertThat(x.argmin(1).toLongArray()).containsExactly(0, 1, 1);
        assertThat(x.argmax(0).toLongArray()).containsExactly(1, 1, 0);
        assertThat(x.argmax(1).dtype()).isEqualTo(DType.I64);
        Tensor table = Tensor.of(new double[] {0, 1, 10, 11, Double.POSITIVE_INFINITY, 21}, 3, 2);
        Tensor rows = table.take(Tensor.of(new long[] {1, -3, 1}, 3), 0);
        assertThat(rows.shape()).containsExactly(3, 2);
        assertThat(rows.toDoubleArray()).containsExactly(10, 11, 0, 1, 10, 11);
        Tensor cols = table.take(Tensor.of(new int[] {1, 1, 0, 0}, 2, 2), 1);
        assertThat(cols.shape()).containsExactly(3, 2, 2);
        assertThat(cols.toDoubleArray()).containsExactly(1, 1, 0, 0, 11, 11, 10, 10, 21, 21,
                Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY);
        assertThatThrownBy(() -> table.take(Tensor.of(new int[] {3}), 0)).isInstanceOf(ShapeException.class)
                .hasMessageContaining("index 3 is out of range").hasMessageStartingWith("NnTest.java:");
        // the gradient of a lookup scatters back, and an infinity in an unused row stays out of it
        Tensor g = Weft.grad((Tensor t) -> t.take(Tensor.of(new long[] {0, 0, 2}), 0).sum()).apply(table);
        assertThat(g.toDoubleArray()).containsExactly(2, 2, 0, 0, 1, 1);
    }

    @Test
    void keepDimsSliceWhereAndBroadcastingMatmul() {
        Tensor x = Tensor.of(new double[] {1, 2, 3, 4, 5, 6}, 2, 3);
        assertThat(x.sum(true, 1).shape()).containsExactly(2, 1);
        assertThat(x.sub(x.max(true, 1)).toDoubleArray()).containsExactly(-2, -1, 0, -2, -1, 0);
        assertThat(x.mean(true).shape()).containsExactly(1, 1);
        assertThat(x.slice(1, -2, 100).toDoubleArray()).containsExactly(2, 3, 5, 6);
        assertThat(x.slice(0, 1, -5).shape()).containsExactly(0, 3);
        assertThat(Tensor.where(x.gt(3), x, -1).toDoubleArray()).containsExactly(-1, -1, -1, 4, 5, 6);
        assertThat(Tensor.where(x.gt(3), 0, x).toDoubleArray()).containsExactly(1, 2, 3, 0, 0, 0);
        Tensor a = Tensor.arange(DType.F64, 24).reshape(2, 4, 3), b = Tensor.arange(DType.F64, 6).reshape(3, 2);
        Tensor ab = a.matmul(b);
        assertThat(ab.shape()).containsExactly(2, 4, 2);
        double[] av = a.toDoubleArray(), bv = b.toDoubleArray(), abv = ab.toDoubleArray();
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 2; j++) {
                    double want = 0;
                    for (int k = 0; k < 3; k++) {
                        want += av[s * 12 + i * 3 + k] * bv[k * 2 + j];
                    }
                    assertThat(abv[s * 8 + i * 2 + j]).isEqualTo(want);
                }
            }
        }
        assertThat(Tensor.of(new double[] {1, 1, 1, 1}).matmul(a).shape()).containsExactly(2, 3);
        assertThat(a.matmul(Tensor.of(new double[] {1, 0, 0})).toDoubleArray())
                .containsExactly(0, 3, 6, 9, 12, 15, 18, 21);
        assertThat(Tensor.zeros(DType.F64, 2, 1, 4, 3).matmul(Tensor.zeros(DType.F64, 5, 3, 2)).shape())
                .containsExactly(2, 5, 4, 2);
        assertThat(Tensor.of(new double[] {1, 2}).dot(Tensor.of(new double[] {3, 4})).item()).isEqualTo(11);
        assertThatThrownBy(() -> a.matmul(Tensor.zeros(DType.F64, 3, 3, 2))).isInstanceOf(ShapeException.class)
                .hasMessageContaining("not broadcast-compatible");
    }

    /** {@code f}'s gradient at {@code x} against central differences. */
    private static void checkGradient(UnaryOperator<Tensor> f, Tensor x) {
        double[] g = Weft.grad((Tensor v) -> f.apply(v)).apply(x).toDoubleArray();
        double[] xs = x.toDoubleArray();
        double h = 1e-6;
        for (int i = 0; i < xs.length; i++) {
            double[] up = xs.clone(), down = xs.clone();
            up[i] += h;
            down[i] -= h;
            double fd = (f.apply(Tensor.of(up, x.shape())).item() - f.apply(Tensor.of(down, x.shape())).item())
                    / (2 * h);
            assertThat(g[i]).as("d/dx%d", i).isCloseTo(fd, within(1e-6 * (1 + Math.abs(fd))));
        }
    }

}
