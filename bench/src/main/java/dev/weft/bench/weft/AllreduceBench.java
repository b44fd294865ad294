package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Case 5: ITERS steps of an allreduce (SUM) of COUNT f32 values then a scale by 1/P (P ranks), carried, inside one
 * compiled {@code Weft.fori}, rank r starting from r+1 everywhere, on {@code Comm.world()} (fake ranks or MPI, as
 * launched). Usage: {@code COUNT ITERS REPS WARMUP COLD WINDOWS [C_LIBRARY]}; rank 0 reports seconds per step
 * and the sum of the result.
 *
 * <p>Before the warm-up it measures the loop cold: a first call compiles a loop of {@code COLD / WINDOWS / 20}
 * steps (reported as {@code info}); the next {@code COLD} steps after it, calls of that loop, are reported as
 * {@code WINDOWS} windows ({@code [cold]} samples: seconds per step, in the order they ran). Each of those calls
 * carries the previous one's result, donated ({@code y = allreduces(world, y.donate(), steps)}), as the C loop
 * carries its buffer from call to call: so the windows time the loop's warm-up, not a fresh result buffer every
 * few steps (an 8 MiB one costs ~12 ms of page faults on this VM until the first collection returns dropped
 * ones; {@link FreshLoopBench} measures that pattern).
 *
 * <p>Under MPI, C_LIBRARY (the C reference {@code allreduce.c} built as a shared library) adds the C loop, timed
 * in turn with Weft's in every window and repetition and reported as {@code [C cold]} and {@code [C]}. Both then
 * run in one job on the same rank placement: on a VM whose vCPUs move between placements, MPI's round trip can
 * change twofold between two jobs.
 */
public final class AllreduceBench {
    private AllreduceBench() {
    }

    @Compile
    static Tensor allreduces(Comm comm, Tensor x, int iters) {
        double scale = 1.0 / comm.size();
        return Weft.fori(0, iters, x, (i, acc) -> comm.allreduce(acc, ReduceOp.SUM).mul(scale));
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("AllreduceBench", "COUNT ITERS REPS WARMUP COLD WINDOWS", args);
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        int iters = Math.toIntExact(p[1]);
        Tensor x = Tensor.full(DType.F32, world.rank() + 1, p[0]);
        CAllreduceLoop c = args.length > 6 ? new CAllreduceLoop(Path.of(args[6]), Math.toIntExact(p[0]),
                world.rank() + 1, 1f / world.size()) : null;
        cold(world, x, Math.toIntExact(p[4]), Math.toIntExact(p[5]), c, report);
        Tensor y = x;
        // warm-up runs the timed loop's own code (the barrier included), so that nothing compiles while timing
        for (long r = 0; r < p[3] + p[2]; r++) {
            if (r == p[3]) {
                Report.settle();
            }
            // the C loop goes first in every other repetition, so that neither always follows the other
            double cSeconds = c != null && r % 2 == 1 ? c.seconds(iters) : 0;
            world.barrier();
            long t0 = System.nanoTime();
            y = allreduces(world, x, iters);
            double seconds = Report.since(t0) / iters;
            if (c != null && r % 2 == 0) {
                cSeconds = c.seconds(iters);
            }
            if (r >= p[3]) {
                report.sample(seconds);
                if (c != null) {
                    report.alongside("C").sample(cSeconds);
                }
            }
        }
        report.check(sum(y.toFloatArray()));
        if (c != null) {
            report.alongside("C").check(c.sum());
        }
    }

    /**
     * The first {@code steps} steps after compiling, in {@code windows} windows, each several calls of one compiled
     * loop, with a window of the C loop in turn after each (before, every other window).
     */
    private static void cold(Comm world, Tensor x, int steps, int windows, CAllreduceLoop c, Report report) {
        int window = Math.max(1, steps / windows);
        int perCall = Math.max(1, window / 20);
        int calls = window / perCall;
        window = calls * perCall;
        Report weft = report.alongside("cold");
        Report cReport = report.alongside("C cold");
        world.barrier();
        long t0 = System.nanoTime();
        Tensor y = allreduces(world, x, perCall);
        weft.info(String.format(Locale.ROOT, "first call (trace, lower, compile, %d steps): %.1f ms", perCall,
                Report.since(t0) * 1e3));
        double weftTotal = 0;
        double cTotal = 0;
        StringBuilder weftWindows = new StringBuilder();
        StringBuilder cWindows = new StringBuilder();
        for (int w = 0; w < windows; w++) {
            double cSeconds = c != null && w % 2 == 1 ? c.seconds(window) : 0;
            world.barrier();
            t0 = System.nanoTime();
            for (int k = 0; k < calls; k++) {
                y = allreduces(world, y.donate(), perCall);
            }
            double seconds = Report.since(t0) / window;
            if (c != null && w % 2 == 0) {
                cSeconds = c.seconds(window);
            }
            weft.sample(seconds);
            weftTotal += seconds * window;
            weftWindows.append(w == 0 ? "" : ", ").append(ns(seconds));
            if (c != null) {
                cReport.sample(cSeconds);
                cTotal += cSeconds * window;
                cWindows.append(w == 0 ? "" : ", ").append(ns(cSeconds));
            }
        }
        weft.info(String.format(Locale.ROOT, "%d steps after it in windows of %d (%d calls): %.2f ms; per step: %s",
                windows * window, window, calls, weftTotal * 1e3, weftWindows));
        if (c != null) {
            cReport.info(String.format(Locale.ROOT, "the same windows of C: %.2f ms; per step: %s; Weft / C: %.2f",
                    cTotal * 1e3, cWindows, weftTotal / cTotal));
        }
        weft.check(sum(y.toFloatArray()));
        if (c != null) {
            cReport.check(c.sum());
        }
    }

    /** {@code seconds} in whole nanoseconds, for the window lists. */
    private static String ns(double seconds) {
        return String.format(Locale.ROOT, "%.0f ns", seconds * 1e9);
    }

    static double sum(float[] values) {
        double sum = 0;
        for (float v : values) {
            sum += v;
        }
        return sum;
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
