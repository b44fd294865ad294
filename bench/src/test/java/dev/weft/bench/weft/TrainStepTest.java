package dev.weft.bench.weft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.comm.Comm;
import dev.weft.optim.Sgd;
import dev.weft.spi.CommBinding;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Case 12's compiled step ({@link TrainBench#step}) on a small network, two steps on one and on two fake ranks,
 * against the same training computed in plain Java in f64 over the whole batch: forward, softmax cross-entropy,
 * backpropagation and the SGD update written out by hand.
 */
class TrainStepTest {
    private static final int IN = 5;
    private static final int HIDDEN = 4;
    private static final int CLASSES = 3;
    private static final int SAMPLES = 6;
    private static final int STEPS = 2;
    private static final double TOLERANCE = 1e-5;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Test
    void twoStepsOnOneAndTwoRanksEqualAPlainJavaComputation() {
        double[][][] w = {weights(IN, HIDDEN, 0.3), weights(HIDDEN, HIDDEN, 1.1), weights(HIDDEN, CLASSES, 2.3)};
        double[][] b = {bias(HIDDEN, 0.7), bias(HIDDEN, 1.9), bias(CLASSES, 2.9)};
        double[][] x = new double[SAMPLES][IN];
        int[] y = new int[SAMPLES];
        for (int i = 0; i < SAMPLES; i++) {
            for (int j = 0; j < IN; j++) {
                x[i][j] = (float) Math.sin(1.7 * i + 0.9 * j + 0.2);
            }
            y[i] = (i * 7 + 1) % CLASSES;
        }
        double[] expected = new double[STEPS];
        for (int s = 0; s < STEPS; s++) {
            expected[s] = plainStep(w, b, x, y);
        }
        for (int ranks : new int[] {1, 2}) {
            double[][] losses = new double[ranks][];
            float[][] w1 = new float[ranks][];
            int n = ranks;
            FakeWorld.run(n, world -> CommBinding.with(world, () -> {
                Comm comm = Comm.world();
                int r = comm.rank();
                int mine = SAMPLES / n;
                float[] xs = new float[mine * IN];
                long[] ys = new long[mine];
                for (int i = 0; i < mine; i++) {
                    for (int j = 0; j < IN; j++) {
                        xs[i * IN + j] = (float) x[r * mine + i][j];
                    }
                    ys[i] = y[r * mine + i];
                }
                Tensor xt = Tensor.of(xs, mine, IN);
                Tensor yt = Tensor.of(ys, mine);
                TrainBench.Params p = initial();
                Sgd.State<TrainBench.Params> opt = Sgd.of(TrainBench.LEARNING_RATE).init(p);
                losses[r] = new double[STEPS];
                for (int s = 0; s < STEPS; s++) {
                    TrainBench.Step next = TrainBench.step(comm, p, opt, xt, yt);
                    losses[r][s] = next.loss().item();
                    p = next.params();
                    opt = next.opt();
                }
                w1[r] = p.w1().toFloatArray();
                return null;
            }));
            for (int r = 0; r < ranks; r++) {
                for (int s = 0; s < STEPS; s++) {
                    assertThat(losses[r][s]).as("%d ranks, rank %d, step %d", ranks, r, s + 1)
                            .isCloseTo(expected[s], within(TOLERANCE * expected[s]));
                }
                for (int i = 0; i < IN; i++) {
                    for (int j = 0; j < HIDDEN; j++) {
                        assertThat((double) w1[r][i * HIDDEN + j]).as("%d ranks, rank %d, w1[%d,%d]", ranks, r, i, j)
                                .isCloseTo(w[0][i][j], within(TOLERANCE));
                    }
                }
            }
        }
    }

    /**
     * Donating each step's parameters (as {@code TrainBench ... donate} does) gives the same losses and parameters,
     * bit for bit, as keeping them, on two fake ranks; a donated parameter can no longer be used.
     */
    @Test
    void donatedParametersGiveTheSameStepsBitForBit() {
        FakeWorld.run(2, world -> CommBinding.with(world, () -> {
            Comm comm = Comm.world();
            Tensor xt = Tensor.arange(DType.F32, 3 * IN).reshape(3, IN).add(comm.rank()).mul(0.3).sin();
            Tensor yt = Tensor.arange(DType.I64, 3).add(comm.rank()).rem(CLASSES);
            TrainBench.Params kept = initial();
            TrainBench.Params donated = initial();
            Sgd.State<TrainBench.Params> optKept = Sgd.of(TrainBench.LEARNING_RATE).init(kept);
            Sgd.State<TrainBench.Params> optDonated = Sgd.of(TrainBench.LEARNING_RATE).init(donated);
            for (int s = 0; s < 4; s++) {
                TrainBench.Step a = TrainBench.step(comm, kept, optKept, xt, yt);
                TrainBench.Params given = donated;
                TrainBench.Step b = TrainBench.step(comm, Trees.map(donated, Tensor::donate), optDonated, xt, yt);
                assertThat(Double.doubleToRawLongBits(b.loss().item())).as("rank %d, step %d", comm.rank(), s + 1)
                        .isEqualTo(Double.doubleToRawLongBits(a.loss().item()));
                assertThatThrownBy(() -> given.w1().item()).isInstanceOf(WeftException.class);
                kept = a.params();
                optKept = a.opt();
                donated = b.params();
                optDonated = b.opt();
            }
            List<Tensor> want = Trees.leaves(kept);
            List<Tensor> got = Trees.leaves(donated);
            for (int i = 0; i < want.size(); i++) {
                assertThat(got.get(i).toFloatArray()).as("rank %d, parameter %d", comm.rank(), i)
                        .isEqualTo(want.get(i).toFloatArray());
            }
            return null;
        }));
    }

    /** The starting parameters as f32 tensors: {@link #weights} and {@link #bias}, rounded to f32. */
    private static TrainBench.Params initial() {
        return new TrainBench.Params(tensor(weights(IN, HIDDEN, 0.3)), Tensor.of(floats(bias(HIDDEN, 0.7)), HIDDEN),
                tensor(weights(HIDDEN, HIDDEN, 1.1)), Tensor.of(floats(bias(HIDDEN, 1.9)), HIDDEN),
                tensor(weights(HIDDEN, CLASSES, 2.3)), Tensor.of(floats(bias(CLASSES, 2.9)), CLASSES));
    }

    private static double[][] weights(int in, int out, double phase) {
        double[][] w = new double[in][out];
        for (int i = 0; i < in; i++) {
            for (int j = 0; j < out; j++) {
                w[i][j] = (float) (0.6 * Math.sin(phase + 1.3 * i + 0.7 * j));
            }
        }
        return w;
    }

    private static double[] bias(int n, double phase) {
        double[] b = new double[n];
        for (int j = 0; j < n; j++) {
            b[j] = (float) (0.1 * Math.cos(phase + j));
        }
        return b;
    }

    private static Tensor tensor(double[][] w) {
        float[] f = new float[w.length * w[0].length];
        for (int i = 0; i < w.length; i++) {
            for (int j = 0; j < w[0].length; j++) {
                f[i * w[0].length + j] = (float) w[i][j];
            }
        }
        return Tensor.of(f, w.length, w[0].length);
    }

    private static float[] floats(double[] d) {
        float[] f = new float[d.length];
        for (int i = 0; i < d.length; i++) {
            f[i] = (float) d[i];
        }
        return f;
    }

    /** One SGD step on the whole batch, in place; returns the mean cross-entropy before the update. */
    private static double plainStep(double[][][] w, double[][] b, double[][] x, int[] y) {
        int n = x.length;
        double[][][] act = new double[4][][];
        act[0] = x;
        for (int l = 0; l < 3; l++) {
            act[l + 1] = new double[n][b[l].length];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < b[l].length; j++) {
                    double v = b[l][j];
                    for (int k = 0; k < w[l].length; k++) {
                        v += act[l][i][k] * w[l][k][j];
                    }
                    act[l + 1][i][j] = l < 2 ? Math.max(v, 0) : v;
                }
            }
        }
        double loss = 0;
        double[][] delta = new double[n][CLASSES];
        for (int i = 0; i < n; i++) {
            double max = Double.NEGATIVE_INFINITY;
            for (double z : act[3][i]) {
                max = Math.max(max, z);
            }
            double sum = 0;
            for (double z : act[3][i]) {
                sum += Math.exp(z - max);
            }
            loss += -(act[3][i][y[i]] - max - Math.log(sum)) / n;
            for (int c = 0; c < CLASSES; c++) {
                delta[i][c] = (Math.exp(act[3][i][c] - max) / sum - (c == y[i] ? 1 : 0)) / n;
            }
        }
        for (int l = 2; l >= 0; l--) {
            double[][] gw = new double[w[l].length][b[l].length];
            double[] gb = new double[b[l].length];
            double[][] back = new double[n][w[l].length];
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < b[l].length; j++) {
                    gb[j] += delta[i][j];
                    for (int k = 0; k < w[l].length; k++) {
                        gw[k][j] += act[l][i][k] * delta[i][j];
                        back[i][k] += w[l][k][j] * delta[i][j];
                    }
                }
            }
            for (int i = 0; l > 0 && i < n; i++) {
                for (int k = 0; k < w[l].length; k++) {
                    back[i][k] = act[l][i][k] > 0 ? back[i][k] : 0;
                }
            }
            for (int k = 0; k < w[l].length; k++) {
                for (int j = 0; j < b[l].length; j++) {
                    w[l][k][j] -= TrainBench.LEARNING_RATE * gw[k][j];
                }
            }
            for (int j = 0; j < b[l].length; j++) {
                b[l][j] -= TrainBench.LEARNING_RATE * gb[j];
            }
            delta = back;
        }
        return loss;
    }
}
