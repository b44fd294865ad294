package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import java.io.PrintStream;

/**
 * Case 11: a training-like step that allreduces a gradient of COUNT f32 values (SUM) while it computes MATMULS
 * products of an N x N matrix on other data, compiled, two ways in turn in every repetition of one job: with
 * {@code iallreduce} started before the products and waited after them (the main samples: the executor lets the
 * transfer progress between the products), and with a blocking {@code allreduce} before them ({@code [blocking]}),
 * the same work in sequence. Alone, the products ({@code [compute]}), the allreduce ({@code [allreduce]}) and the
 * iallreduce waited at once ({@code [iallreduce]}) show how the step's time divides. Usage: {@code COUNT N MATMULS REPS WARMUP}; samples are seconds per step; the check
 * is the step's sum, alike in both ways.
 */
public final class OverlapBench {
    private OverlapBench() {
    }

    /** The step with the allreduce overlapping the products. */
    @Compile
    static Tensor overlapped(Comm c, Tensor grad, Tensor a, int matmuls) {
        Request r = c.iallreduce(grad, ReduceOp.SUM);
        Tensor p = products(a, matmuls);
        return c.wait(r).sum().add(p.sum());
    }

    /** The same step with a blocking allreduce. */
    @Compile
    static Tensor blocking(Comm c, Tensor grad, Tensor a, int matmuls) {
        Tensor g = c.allreduce(grad, ReduceOp.SUM);
        Tensor p = products(a, matmuls);
        return g.sum().add(p.sum());
    }

    @Compile
    static Tensor computeOnly(Tensor a, int matmuls) {
        return products(a, matmuls).sum();
    }

    @Compile
    static Tensor iallreduceOnly(Comm c, Tensor grad) {
        return c.wait(c.iallreduce(grad, ReduceOp.SUM)).sum();
    }

    @Compile
    static Tensor allreduceOnly(Comm c, Tensor grad) {
        return c.allreduce(grad, ReduceOp.SUM).sum();
    }

    /** {@code matmuls} products, each a kernel of its own, scaled to stay near 1. */
    private static Tensor products(Tensor a, int matmuls) {
        Tensor p = a;
        for (int i = 0; i < matmuls; i++) {
            p = p.matmul(a).mul(1.0 / a.shape()[0]);
        }
        return p;
    }

    private static double time(Comm world, Runnable step) {
        world.barrier();
        long t0 = System.nanoTime();
        step.run();
        return Report.since(t0);
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("OverlapBench", "COUNT N MATMULS REPS WARMUP", args);
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        int count = Math.toIntExact(p[0]);
        int n = Math.toIntExact(p[1]);
        int matmuls = Math.toIntExact(p[2]);
        Tensor grad = Tensor.full(DType.F32, world.rank() + 1, count);
        Tensor a = Tensor.arange(DType.F32, (long) n * n).reshape(n, n).mul(1.0 / ((double) n * n));
        double[] sums = new double[4];
        for (long r = 0; r < p[4] + p[3]; r++) {
            if (r == p[4]) {
                Report.settle();
            }
            // the two ways take turns going first, so that neither always follows the other
            boolean swap = r % 2 == 1;
            double blockingSeconds = swap ? time(world, () -> sums[1] = blocking(world, grad, a, matmuls).item()) : 0;
            double seconds = time(world, () -> sums[0] = overlapped(world, grad, a, matmuls).item());
            if (!swap) {
                blockingSeconds = time(world, () -> sums[1] = blocking(world, grad, a, matmuls).item());
            }
            double computeSeconds = time(world, () -> sums[2] = computeOnly(a, matmuls).item());
            double allreduceSeconds = time(world, () -> sums[3] = allreduceOnly(world, grad).item());
            double iallreduceSeconds = time(world, () -> sums[3] = iallreduceOnly(world, grad).item());
            if (r >= p[4]) {
                report.sample(seconds);
                report.alongside("blocking").sample(blockingSeconds);
                report.alongside("compute").sample(computeSeconds);
                report.alongside("allreduce").sample(allreduceSeconds);
                report.alongside("iallreduce").sample(iallreduceSeconds);
            }
        }
        report.check(sums[0]);
        report.alongside("blocking").check(sums[1]);
        report.info(String.format(java.util.Locale.ROOT, "products alone sum to %.6g, the allreduce alone to %.6g",
                sums[2], sums[3]));
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
