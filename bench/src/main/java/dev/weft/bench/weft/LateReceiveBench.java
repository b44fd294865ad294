package dev.weft.bench.weft;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import java.io.PrintStream;

/**
 * Case 9: rank 0 sends MESSAGES f32[2] (8 B) to rank 1 with blocking sends, and rank 1 posts each receive late:
 * before each, it works DELAY_US microseconds, so rank 0's send always waits for a receive posted after it; rank 1
 * then answers once. Usage: {@code MESSAGES DELAY_US REPS WARMUP}; a sample is the seconds per message, the delay
 * included. A fake rank blocked in a send that is not woken when its receive is posted sleeps until the fake
 * world's poll (50 ms) here, since nothing else happens meanwhile. The check is the sum rank 1 received, which
 * it answers: {@code MESSAGES * 3}.
 */
public final class LateReceiveBench {
    private LateReceiveBench() {
    }

    private static float burst(Comm world, long messages, long delayNanos) {
        Tensor x = Tensor.of(new float[] {1, 2});
        if (world.rank() == 0) {
            for (long m = 0; m < messages; m++) {
                world.send(x, 1, 0);
            }
            return (float) world.recv(DType.F32, new long[] {1}, 1, 1).item();
        }
        if (world.rank() == 1) {
            float sum = 0;
            for (long m = 0; m < messages; m++) {
                long until = System.nanoTime() + delayNanos;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                sum += (float) world.recv(DType.F32, new long[] {2}, 0, 0).sum().item();
            }
            world.send(Tensor.of(new float[] {sum}), 0, 1);
            return sum;
        }
        return 0;
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("LateReceiveBench", "MESSAGES DELAY_US REPS WARMUP", args);
        Comm world = Comm.world();
        if (world.size() < 2) {
            throw new IllegalArgumentException("LateReceiveBench needs two ranks, got " + world.size());
        }
        Report report = new Report(out, world.rank() == 0);
        long delay = p[1] * 1000;
        for (long r = 0; r < p[3]; r++) {
            burst(world, p[0], delay);
        }
        Report.settle();
        float last = 0;
        for (long r = 0; r < p[2]; r++) {
            world.barrier();
            long t0 = System.nanoTime();
            last = burst(world, p[0], delay);
            report.sample(Report.since(t0) / p[0]);
        }
        report.check(last);
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
