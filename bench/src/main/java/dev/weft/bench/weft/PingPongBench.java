package dev.weft.bench.weft;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import java.io.PrintStream;

/**
 * Case 9: an eager ping-pong of an f32[2] (8 B) between ranks 0 and 1 whose receives come late: before each of its
 * receives, rank 1 works DELAY_US microseconds, so rank 0's blocking send always waits for a receive posted after
 * it. Usage: {@code ROUNDS DELAY_US REPS WARMUP}; a sample is the seconds per round trip over ROUNDS rounds, the
 * delay included. On fake ranks a sender left asleep until a poll instead of woken when its receive is posted
 * shows here as milliseconds per round. The check is the last value rank 0 received, {@code ROUNDS + 1}.
 */
public final class PingPongBench {
    private PingPongBench() {
    }

    private static float rounds(Comm world, long rounds, long delayNanos) {
        Tensor x = Tensor.of(new float[] {1, 2});
        for (long r = 0; r < rounds; r++) {
            if (world.rank() == 0) {
                world.send(x, 1, 0);
                x = world.recv(DType.F32, new long[] {2}, 1, 0);
            } else if (world.rank() == 1) {
                long until = System.nanoTime() + delayNanos;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
                x = world.recv(DType.F32, new long[] {2}, 0, 0).add(1);
                world.send(x, 0, 0);
            }
        }
        return x.toFloatArray()[0];
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("PingPongBench", "ROUNDS DELAY_US REPS WARMUP", args);
        Comm world = Comm.world();
        if (world.size() < 2) {
            throw new IllegalArgumentException("PingPongBench needs two ranks, got " + world.size());
        }
        Report report = new Report(out, world.rank() == 0);
        long delay = p[1] * 1000;
        for (long r = 0; r < p[3]; r++) {
            rounds(world, p[0], delay);
        }
        Report.settle();
        world.barrier();
        float last = 0;
        for (long r = 0; r < p[2]; r++) {
            world.barrier();
            long t0 = System.nanoTime();
            last = rounds(world, p[0], delay);
            report.sample(Report.since(t0) / p[0]);
        }
        report.check(last);
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
