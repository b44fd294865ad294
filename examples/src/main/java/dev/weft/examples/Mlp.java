package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.io.Checkpoint;
import dev.weft.optim.Adam;
import dev.weft.optim.Update;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A two-layer network (2 inputs, 16 tanh units, one logit) trained data-parallel with Adam on a synthetic two-class
 * set (points inside a circle against a ring around it), samples split over the ranks. The parameters are one
 * record, {@code replicated} over the ranks; {@code Weft.grad} of the global loss (the ranks' shares summed by
 * {@code allreduce}) gives every rank the global gradient, with no hand-written gradient allreduce, and
 * {@code dev.weft.optim.Adam} updates the record inside one compiled loop. Checks the training accuracy, that the
 * parameters equal those of the same training on one rank with all samples, and that they survive a checkpoint
 * round trip; prints {@code mlp accuracy = <fraction> loss = <value>}.
 */
public final class Mlp {
    static final int SAMPLES = 480;
    static final int HIDDEN = 16;
    static final int EPOCHS = 300;
    static final double LEARNING_RATE = 0.05;
    private static final double MIN_ACCURACY = 0.97;
    private static final double SAME_WEIGHTS = 1e-9;

    /** The network's parameters: a tree, so it goes through grad, the optimizer, fori and checkpoints whole. */
    record Params(Tensor w1, Tensor b1, Tensor w2, Tensor b2) {
    }

    private Mlp() {
    }

    /** The logits of samples {@code x} ({@code [n, 2]}). */
    static Tensor logits(Params p, Tensor x) {
        return x.matmul(p.w1()).add(p.b1()).tanh().matmul(p.w2()).add(p.b2());
    }

    /** This rank's share of the mean logistic loss {@code log(1 + exp(-y z))} over all {@code total} samples. */
    static Tensor shareOfLoss(Params p, Tensor x, Tensor y, double total) {
        return logits(p, x).mul(y).neg().exp().add(1).log().sum().div(total);
    }

    /** {@code epochs} Adam steps from {@code start}; returns the trained parameters and the global loss. */
    @Compile
    static List<Object> train(Comm comm, Tensor x, Tensor y, Params start, int epochs, double lr) {
        double total = SAMPLES;
        Adam opt = Adam.of(lr);
        record Step(Params params, Adam.State<Params> state) {
        }
        Step done = Weft.fori(0, epochs, new Step(start, opt.init(start)), (i, s) -> {
            Params g = Weft.grad(comm.replicated(s.params()), p -> comm.allreduce(shareOfLoss(p, x, y, total),
                    ReduceOp.SUM));
            Update<Params, Adam.State<Params>> u = opt.update(g, s.state(), s.params());
            return new Step(u.params(), u.state());
        });
        return List.of(done.params(), comm.allreduce(shareOfLoss(done.params(), x, y, total), ReduceOp.SUM));
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
    static Params init() {
        double[] w1 = new double[2 * HIDDEN], b1 = new double[HIDDEN], w2 = new double[HIDDEN];
        for (int k = 0; k < w1.length; k++) {
            w1[k] = Math.sin(1.3 * k + 0.5);
        }
        for (int k = 0; k < HIDDEN; k++) {
            b1[k] = 0.1 * Math.cos(0.7 * k);
            w2[k] = 0.5 * Math.sin(2.1 * k + 1);
        }
        return new Params(Tensor.of(w1, 2, HIDDEN), Tensor.of(b1, HIDDEN), Tensor.of(w2, HIDDEN),
                Tensor.scalar(DType.F64, 0));
    }

    /** {@link #train} from {@link #init}. */
    static List<Object> train(Comm comm, Tensor x, Tensor y, int epochs) {
        return train(comm, x, y, init(), epochs, LEARNING_RATE);
    }

    private static double frac(double v) {
        return v - Math.floor(v);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        List<Tensor> data = shard(world.rank(), world.size());
        List<Object> out = train(world, data.get(0), data.get(1), EPOCHS);
        Params trained = (Params) out.get(0);
        double loss = ((Tensor) out.get(1)).item();
        double correct = world.allreduce(Tensor.of(new double[] {accuracyCount(trained, data)}), ReduceOp.SUM)
                .item();
        double accuracy = correct / SAMPLES;
        Comm alone = world.split(world.rank(), 0);
        List<Tensor> all = shard(0, 1);
        Params oneRank = (Params) train(alone, all.get(0), all.get(1), EPOCHS).get(0);
        double gap = Trees.leaves(Trees.zip(trained, oneRank, (a, b) -> a.sub(b).abs().max())).stream()
                .mapToDouble(Tensor::item).max().orElseThrow();
        Params restored = checkpointRoundTrip(trained, world);
        gap = Math.max(gap, Trees.leaves(Trees.zip(trained, restored, (a, b) -> a.sub(b).abs().max())).stream()
                .mapToDouble(Tensor::item).max().orElseThrow());
        if (world.rank() == 0) {
            System.out.printf("mlp accuracy = %.4f loss = %.6e%n", accuracy, loss);
        }
        if (!(accuracy >= MIN_ACCURACY) || !(gap <= SAME_WEIGHTS)) {
            throw new IllegalStateException("rank " + world.rank() + ": accuracy " + accuracy + " (at least "
                    + MIN_ACCURACY + " expected), weights differ from the one-rank run's by " + gap);
        }
    }

    /** {@code p} saved as a checkpoint in a temporary directory and loaded back. */
    private static Params checkpointRoundTrip(Params p, Comm world) {
        try {
            Path dir = world.rank() == 0 ? Files.createTempDirectory("weft-mlp") : null;
            String shared = world.rank() == 0 ? dir.toString() : "";
            byte[] name = shared.getBytes(StandardCharsets.UTF_8);
            int length = (int) world.bcast(Tensor.of(new int[] {name.length}), 0).item();
            int[] chars = new int[length];
            for (int i = 0; i < name.length; i++) {
                chars[i] = name[i];
            }
            int[] got = world.bcast(Tensor.of(chars, length), 0).toIntArray();
            byte[] path = new byte[length];
            for (int i = 0; i < length; i++) {
                path[i] = (byte) got[i];
            }
            Path ckpt = Path.of(new String(path, StandardCharsets.UTF_8)).resolve("params");
            Checkpoint.save(ckpt, p, world);
            Params back = Checkpoint.load(ckpt, p, world);
            world.barrier();
            if (world.rank() == 0) {
                try (var files = Files.walk(dir)) {
                    for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                        Files.delete(f);
                    }
                }
            }
            return back;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** How many of this rank's samples the trained network classifies right. */
    private static double accuracyCount(Params trained, List<Tensor> data) {
        Tensor z = logits(trained, data.get(0));
        return z.mul(data.get(1)).gt(0).cast(DType.F64).sum().item();
    }
}
