package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Trees;
import dev.weft.ValueAndGrad;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.io.Npy;
import dev.weft.nn.Nn;
import dev.weft.optim.Sgd;
import dev.weft.optim.Update;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Case 12: a data-parallel training step of a 784-512-512-10 relu MLP (cross-entropy, plain SGD, f32, a batch of
 * {@link #BATCH} samples per rank) written as a user writes it: the parameters a record, {@code replicated} over
 * the ranks, the global loss the ranks' shares summed by {@code allreduce}, {@code Weft.valueAndGrad} of it (the
 * varying/invariant rule turns the replicated parameters' gradients into allreduces: none by hand), and
 * {@code dev.weft.optim.Sgd}, the whole step one {@code @Compile} method. Starts from the parameters and data
 * {@link TrainData} wrote to DIR (the PyTorch reference, {@code bench/python/train.py}, loads the same files) and
 * runs STEPS steps, timing each on rank 0 from the call to its loss read back. With {@code donate}, each step's
 * parameters are donated to it ({@code Trees.map(params, Tensor::donate)}, as JAX's {@code donate_argnums}), so the
 * next ones are written over them instead of into fresh memory. Usage: {@code DIR STEPS [donate]}; prints one
 * sample per step, in order (seconds: the driver splits them into first step, steps 2-20 and the steady window),
 * the first step's global loss as the check, the last one's as info.
 */
public final class TrainBench {
    static final int IN = 784;
    static final int HIDDEN = 512;
    static final int CLASSES = 10;
    public static final int BATCH = 128;
    /** The argument that donates each step's parameters. */
    public static final String DONATE = "donate";
    static final double LEARNING_RATE = 0.01;

    /** The network's parameters, {@code x @ w + b} per layer ({@code w} is {@code [in, out]}). */
    record Params(Tensor w1, Tensor b1, Tensor w2, Tensor b2, Tensor w3, Tensor b3) {
    }

    /** What a step gives: the next parameters and optimizer state, and the global loss before the update. */
    record Step(Params params, Sgd.State<Params> opt, Tensor loss) {
    }

    private TrainBench() {
    }

    static Tensor logits(Params p, Tensor x) {
        Tensor h = Nn.relu(x.matmul(p.w1()).add(p.b1()));
        h = Nn.relu(h.matmul(p.w2()).add(p.b2()));
        return h.matmul(p.w3()).add(p.b3());
    }

    /** One SGD step on this rank's batch {@code x} (f32 {@code [n, 784]}) with integer labels {@code y}. */
    @Compile
    static Step step(Comm comm, Params params, Sgd.State<Params> opt, Tensor x, Tensor y) {
        Sgd sgd = Sgd.of(LEARNING_RATE);
        // The mean over every rank's samples: each rank's mean, over the ranks.
        ValueAndGrad.Of<Params> vg = Weft.valueAndGrad(comm.replicated(params),
                p -> comm.allreduce(Nn.crossEntropy(logits(p, x), y).div(comm.size()), ReduceOp.SUM));
        Update<Params, Sgd.State<Params>> u = sgd.update(vg.grad(), opt, params);
        return new Step(u.params(), u.state(), vg.value());
    }

    /** The parameters {@link TrainData} wrote to {@code dir}. */
    static Params load(Path dir) {
        return new Params(Npy.load(dir.resolve("w1.npy")), Npy.load(dir.resolve("b1.npy")),
                Npy.load(dir.resolve("w2.npy")), Npy.load(dir.resolve("b2.npy")), Npy.load(dir.resolve("w3.npy")),
                Npy.load(dir.resolve("b3.npy")));
    }

    static void run(String[] args, PrintStream out) {
        if (args.length < 1) {
            throw new IllegalArgumentException("usage: TrainBench DIR STEPS; got " + Arrays.toString(args));
        }
        Path dir = Path.of(args[0]);
        long steps = Report.args("TrainBench", "STEPS", Arrays.copyOfRange(args, 1, Math.min(args.length, 2)))[0];
        boolean donate = args.length > 2 && args[2].equals(DONATE);
        if (args.length > 2 && !donate) {
            throw new IllegalArgumentException("usage: TrainBench DIR STEPS [" + DONATE + "]; got " + args[2]);
        }
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        Tensor x = Npy.load(dir.resolve("x" + world.rank() + ".npy"));
        Tensor y = Npy.load(dir.resolve("y" + world.rank() + ".npy"));
        Params params = load(dir);
        Sgd.State<Params> opt = Sgd.of(LEARNING_RATE).init(params);
        double first = Double.NaN;
        double loss = Double.NaN;
        for (long s = 0; s < steps; s++) {
            long t0 = System.nanoTime();
            Step next = step(world, donate ? Trees.map(params, Tensor::donate) : params, opt, x, y);
            loss = next.loss().item();
            report.sample(Report.since(t0));
            params = next.params();
            opt = next.opt();
            if (s == 0) {
                first = loss;
            }
        }
        report.check(first);
        report.info(String.format(Locale.ROOT, "loss %.6f at step %d", loss, steps));
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
