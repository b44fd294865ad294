package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Vjp;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.util.ArrayList;
import java.util.List;

/**
 * A two-layer network (2 inputs, 16 tanh units, one logit) trained data-parallel by full-batch gradient descent on
 * a synthetic two-class set (points inside a circle against a ring around it), samples split over the ranks. The
 * parameters are {@code replicated}, and {@code Weft.vjp} of the global loss (the ranks' shares summed by
 * {@code allreduce}) gives every rank the global gradient, with no hand-written gradient allreduce.
 * Checks the training accuracy, and that the weights equal those of the same training on one rank with all
 * samples; prints {@code mlp accuracy = <fraction> loss = <value>}.
 */
public final class Mlp {
    static final int SAMPLES = 480;
    static final int HIDDEN = 16;
    static final int EPOCHS = 300;
    static final double LEARNING_RATE = 1.0;
    private static final double MIN_ACCURACY = 0.97;
    private static final double SAME_WEIGHTS = 1e-9;

    private Mlp() {
    }

    /** The logits of samples {@code x} ({@code [n, 2]}) under {@code params} = [w1, b1, w2, b2]. */
    static Tensor logits(List<Tensor> params, Tensor x) {
        Tensor hidden = x.matmul(params.get(0)).add(params.get(1)).tanh();
        return hidden.matmul(params.get(2)).add(params.get(3));
    }

    /** This rank's share of the mean logistic loss {@code log(1 + exp(-y z))} over all {@code total} samples. */
    static Tensor shareOfLoss(List<Tensor> params, Tensor x, Tensor y, double total) {
        return logits(params, x).mul(y).neg().exp().add(1).log().sum().div(total);
    }

    /**
     * {@code epochs} steps of gradient descent from the parameters {@code w1 b1 w2 b2}; returns the trained
     * parameters, then the global loss.
     */
    @Compile
    static List<Tensor> train(Comm comm, Tensor x, Tensor y, Tensor w1, Tensor b1, Tensor w2, Tensor b2, int epochs,
                              double lr) {
        double total = SAMPLES;
        List<Tensor> trained = Weft.fori(0, epochs, List.of(w1, b1, w2, b2), (i, params) -> {
            Vjp step = Weft.vjp(p -> List.of(comm.allreduce(shareOfLoss(p, x, y, total), ReduceOp.SUM)),
                    params.stream().map(comm::replicated).toList());
            List<Tensor> grads = step.pullback(List.of(Tensor.scalar(DType.F64, 1)));
            List<Tensor> next = new ArrayList<>(params.size());
            for (int k = 0; k < params.size(); k++) {
                next.add(params.get(k).sub(grads.get(k).mul(lr)));
            }
            return next;
        });
        List<Tensor> out = new ArrayList<>(trained);
        out.add(comm.allreduce(shareOfLoss(trained, x, y, total), ReduceOp.SUM));
        return out;
    }

    /** Rank {@code r}'s samples of {@code size}: points {@code [SAMPLES / size, 2]} and labels ±1. */
    static List<Tensor> shard(int r, int size) {
        if (SAMPLES % size != 0) {
            throw new IllegalArgumentException(SAMPLES + " samples do not split over " + size + " ranks");
        }
        int mine = SAMPLES / size;
        double[] xs = new double[2 * mine];
        double[] ys = new double[mine];
        for (int i = 0; i < mine; i++) {
            int s = r * mine + i;
            boolean inner = s % 2 == 0;
            double radius = inner ? 0.9 * frac(s * 0.6180339887) : 1.6 + 0.5 * frac(s * 0.4142135623);
            double angle = 2 * Math.PI * frac(s * 0.7548776662);
            xs[2 * i] = radius * Math.cos(angle);
            xs[2 * i + 1] = radius * Math.sin(angle);
            ys[i] = inner ? 1 : -1;
        }
        return List.of(Tensor.of(xs, mine, 2), Tensor.of(ys, mine));
    }

    /** The starting parameters, the same on every rank: small deterministic values. */
    static List<Tensor> init() {
        double[] w1 = new double[2 * HIDDEN], b1 = new double[HIDDEN], w2 = new double[HIDDEN];
        for (int k = 0; k < w1.length; k++) {
            w1[k] = Math.sin(1.3 * k + 0.5);
        }
        for (int k = 0; k < HIDDEN; k++) {
            b1[k] = 0.1 * Math.cos(0.7 * k);
            w2[k] = 0.5 * Math.sin(2.1 * k + 1);
        }
        return List.of(Tensor.of(w1, 2, HIDDEN), Tensor.of(b1, HIDDEN), Tensor.of(w2, HIDDEN),
                Tensor.scalar(DType.F64, 0));
    }

    /** {@link #train} from {@link #init}. */
    static List<Tensor> train(Comm comm, Tensor x, Tensor y, int epochs) {
        List<Tensor> p = init();
        return train(comm, x, y, p.get(0), p.get(1), p.get(2), p.get(3), epochs, LEARNING_RATE);
    }

    private static double frac(double v) {
        return v - Math.floor(v);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        List<Tensor> data = shard(world.rank(), world.size());
        List<Tensor> out = train(world, data.get(0), data.get(1), EPOCHS);
        double loss = out.get(4).item();
        double correct = world.allreduce(Tensor.of(new double[] {accuracyCount(out, data)}), ReduceOp.SUM).item();
        double accuracy = correct / SAMPLES;
        Comm alone = world.split(world.rank(), 0);
        List<Tensor> all = shard(0, 1);
        List<Tensor> oneRank = train(alone, all.get(0), all.get(1), EPOCHS);
        double gap = 0;
        for (int k = 0; k < 4; k++) {
            gap = Math.max(gap, out.get(k).sub(oneRank.get(k)).abs().max().item());
        }
        if (world.rank() == 0) {
            System.out.printf("mlp accuracy = %.4f loss = %.6e%n", accuracy, loss);
        }
        if (!(accuracy >= MIN_ACCURACY) || !(gap <= SAME_WEIGHTS)) {
            throw new IllegalStateException("rank " + world.rank() + ": accuracy " + accuracy + " (at least "
                    + MIN_ACCURACY + " expected), weights differ from the one-rank run's by " + gap);
        }
    }

    /** How many of this rank's samples the trained network classifies right. */
    private static double accuracyCount(List<Tensor> trained, List<Tensor> data) {
        Tensor z = logits(trained.subList(0, 4), data.get(0));
        return z.mul(data.get(1)).gt(0).cast(DType.F64).sum().item();
    }
}
