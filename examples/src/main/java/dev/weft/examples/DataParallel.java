package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.optim.Sgd;
import java.util.List;

/**
 * Least-squares regression trained by full-batch gradient descent: samples are split over ranks, the weights are
 * {@code replicated} (the same on every rank), and {@code Weft.grad} of the global loss (the ranks' shares summed by
 * {@code allreduce}) gives every rank the gradient of the global loss, as JAX's {@code shard_map} does: no
 * hand-written gradient allreduce.
 * The final loss must equal that of the exact least-squares fit, computed in plain Java.
 */
public final class DataParallel {
    static final int SAMPLES = 240;
    static final int FEATURES = 4;
    static final int EPOCHS = 200;
    static final double LEARNING_RATE = 0.5;
    private static final double[] TRUE_WEIGHTS = {1.5, -2.0, 0.5, 3.0};
    private static final double NOISE = 0.05;
    private static final double TOLERANCE = 1e-9;

    private DataParallel() {
    }

    /** {@code epochs} steps of gradient descent from {@code w}; returns the weights and the final global loss. */
    @Compile
    static List<Tensor> train(Comm comm, Tensor x, Tensor y, Tensor w, int epochs, double lr) {
        double n = SAMPLES;
        Tensor trained = Weft.fori(0, epochs, w, (i, wi) -> {
            // The weights are the same on every rank: their gradient sums every rank's use of them.
            Tensor grad = Weft.grad(v -> comm.allreduce(shareOfLoss(x, y, v, n), ReduceOp.SUM))
                    .apply(comm.replicated(wi));
            Sgd sgd = Sgd.of(lr);
            return sgd.update(grad, sgd.init(wi), wi).params();
        });
        Tensor residual = x.matmul(trained).sub(y);
        Tensor loss = comm.allreduce(residual.mul(residual).sum(), ReduceOp.SUM).div(n);
        return List.of(trained, loss);
    }

    /** This rank's share of the mean squared error over all {@code n} samples. */
    static Tensor shareOfLoss(Tensor x, Tensor y, Tensor w, double n) {
        Tensor residual = x.matmul(w).sub(y);
        return residual.mul(residual).sum().div(n);
    }

    /** Rank {@code r}'s samples of {@code size}: features {@code [SAMPLES / size, FEATURES]} and targets. */
    static List<Tensor> shard(int r, int size) {
        if (SAMPLES % size != 0) {
            throw new IllegalArgumentException(SAMPLES + " samples do not split over " + size + " ranks");
        }
        int mine = SAMPLES / size;
        double[] xs = new double[mine * FEATURES];
        double[] ys = new double[mine];
        for (int i = 0; i < mine; i++) {
            sample(r * mine + i, xs, i * FEATURES);
            ys[i] = target(r * mine + i, xs, i * FEATURES);
        }
        return List.of(Tensor.of(xs, mine, FEATURES), Tensor.of(ys, mine));
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        int r = world.rank();
        List<Tensor> data = shard(r, world.size());
        List<Tensor> out = train(world, data.get(0), data.get(1), Tensor.zeros(DType.F64, FEATURES), EPOCHS,
                LEARNING_RATE);
        double loss = out.get(1).item();
        double optimum = leastSquaresLoss();
        if (r == 0) {
            System.out.printf("loss = %.6e%n", loss);
        }
        if (!(Math.abs(loss - optimum) <= TOLERANCE * optimum)) {
            throw new IllegalStateException("rank " + r + ": loss " + loss + " is not the least-squares optimum "
                    + optimum);
        }
    }

    /** Features of sample {@code s}, written at {@code x[at..at+FEATURES)}. */
    static void sample(int s, double[] x, int at) {
        for (int f = 0; f < FEATURES; f++) {
            x[at + f] = Math.sin(s * (0.37 + 0.61 * f) + f);
        }
    }

    /** The noisy target of sample {@code s} with features at {@code x[at..]}. */
    static double target(int s, double[] x, int at) {
        double y = NOISE * Math.sin(5.1 * s + 0.3);
        for (int f = 0; f < FEATURES; f++) {
            y += x[at + f] * TRUE_WEIGHTS[f];
        }
        return y;
    }

    /** The mean squared error of the exact least-squares fit over all samples (normal equations, in plain Java). */
    private static double leastSquaresLoss() {
        double[][] a = new double[FEATURES][FEATURES + 1];
        double[] x = new double[FEATURES];
        for (int s = 0; s < SAMPLES; s++) {
            sample(s, x, 0);
            double y = target(s, x, 0);
            for (int i = 0; i < FEATURES; i++) {
                for (int j = 0; j < FEATURES; j++) {
                    a[i][j] += x[i] * x[j];
                }
                a[i][FEATURES] += x[i] * y;
            }
        }
        for (int c = 0; c < FEATURES; c++) {
            for (int i = c + 1; i < FEATURES; i++) {
                double m = a[i][c] / a[c][c];
                for (int j = c; j <= FEATURES; j++) {
                    a[i][j] -= m * a[c][j];
                }
            }
        }
        double[] w = new double[FEATURES];
        for (int i = FEATURES - 1; i >= 0; i--) {
            double v = a[i][FEATURES];
            for (int j = i + 1; j < FEATURES; j++) {
                v -= a[i][j] * w[j];
            }
            w[i] = v / a[i][i];
        }
        double sum = 0;
        for (int s = 0; s < SAMPLES; s++) {
            sample(s, x, 0);
            double e = target(s, x, 0);
            for (int f = 0; f < FEATURES; f++) {
                e -= x[f] * w[f];
            }
            sum += e * e;
        }
        return sum / SAMPLES;
    }
}
