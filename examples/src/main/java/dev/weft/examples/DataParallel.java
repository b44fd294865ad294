package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.util.List;

/**
 * Least-squares regression trained by full-batch gradient descent: samples are split over ranks, each rank
 * computes the gradient of its shard and {@code allreduce} averages them, so every rank keeps the same weights.
 */
public final class DataParallel {
    private static final int SAMPLES = 240;
    private static final int FEATURES = 4;
    private static final int EPOCHS = 200;
    private static final double LEARNING_RATE = 0.5;
    private static final double[] TRUE_WEIGHTS = {1.5, -2.0, 0.5, 3.0};
    private static final double MAX_LOSS = 1e-20;

    private DataParallel() {
    }

    /** {@code epochs} steps of gradient descent from {@code w}; returns the weights and the final global loss. */
    @Compile
    static List<Tensor> train(Comm comm, Tensor x, Tensor y, Tensor w, int epochs, double lr) {
        double n = SAMPLES;
        Tensor trained = Weft.fori(0, epochs, w, (i, wi) -> {
            Tensor residual = x.matmul(wi).sub(y);
            Tensor grad = comm.allreduce(x.transpose().matmul(residual), ReduceOp.SUM).mul(2 / n);
            return wi.sub(grad.mul(lr));
        });
        Tensor residual = x.matmul(trained).sub(y);
        Tensor loss = comm.allreduce(residual.mul(residual).sum(), ReduceOp.SUM).div(n);
        return List.of(trained, loss);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        int r = world.rank(), size = world.size();
        if (SAMPLES % size != 0) {
            throw new IllegalArgumentException(SAMPLES + " samples do not split over " + size + " ranks");
        }
        int mine = SAMPLES / size;
        double[] xs = new double[mine * FEATURES];
        double[] ys = new double[mine];
        for (int i = 0; i < mine; i++) {
            int s = r * mine + i;
            for (int f = 0; f < FEATURES; f++) {
                xs[i * FEATURES + f] = Math.sin(s * (0.37 + 0.61 * f) + f);
                ys[i] += xs[i * FEATURES + f] * TRUE_WEIGHTS[f];
            }
        }
        List<Tensor> out = train(world, Tensor.of(xs, mine, FEATURES), Tensor.of(ys, mine),
                Tensor.zeros(DType.F64, FEATURES), EPOCHS, LEARNING_RATE);
        double loss = out.get(1).item();
        if (r == 0) {
            System.out.printf("loss = %.3e%n", loss);
        }
        if (!(loss < MAX_LOSS)) {
            throw new IllegalStateException("rank " + r + ": loss " + loss + " did not fall below " + MAX_LOSS);
        }
    }
}
