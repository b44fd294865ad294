package dev.weft.bench.weft;

import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.examples.Heat;
import java.io.PrintStream;
import java.util.List;
import java.util.function.Supplier;

/**
 * Case 6: {@link Heat#simulate} (the example's compiled stencil with halo exchange) on a ROWS x COLS f64 grid,
 * rows split over the ranks of {@code Comm.world()}. Usage: {@code ROWS COLS STEPS REPS WARMUP}; rank 0 reports
 * seconds per step (barrier to barrier) and the sum of the final grid.
 */
public final class HeatBench {
    private static final double ALPHA = 0.1;

    private HeatBench() {
    }

    /** Rows {@code first .. first+n-1} of the initial grid every implementation of case 6 uses: a Gaussian bump. */
    static Tensor initial(long first, int n, long rows, int cols) {
        double[] a = new double[n * cols];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < cols; j++) {
                double y = (first + i + 0.5) / rows, x = (j + 0.5) / cols;
                a[i * cols + j] = Math.exp(-40 * ((x - 0.3) * (x - 0.3) + (y - 0.6) * (y - 0.6)));
            }
        }
        return Tensor.of(a, n, cols);
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("HeatBench", "ROWS COLS STEPS REPS WARMUP", args);
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        Supplier<Tensor> heat = simulation(world, p);
        report.check(world.allreduce(timeSteps(world, report, p, heat).sum(), ReduceOp.SUM).item());
    }

    /** {@link Heat#simulate} of STEPS steps on this rank's rows of the grid; {@code p} is ROWS COLS STEPS ... */
    static Supplier<Tensor> simulation(Comm world, long[] p) {
        if (p[0] % world.size() != 0) {
            throw new IllegalArgumentException(p[0] + " rows do not split over " + world.size() + " ranks");
        }
        int n = Math.toIntExact(p[0] / world.size()), steps = Math.toIntExact(p[2]);
        Tensor u0 = initial((long) world.rank() * n, n, p[0], Math.toIntExact(p[1]));
        return () -> Heat.simulate(world, u0, steps, ALPHA);
    }

    /**
     * Runs {@code simulation} (STEPS steps) WARMUP then REPS times between barriers, reporting seconds per step of
     * the timed runs; returns the last result. {@code p} is ROWS COLS STEPS REPS WARMUP.
     */
    static Tensor timeSteps(Comm world, Report report, long[] p, Supplier<Tensor> simulation) {
        return timeInTurn(world, p, List.of(new Timed(report, simulation))).getFirst();
    }

    /** A simulation and the report of its samples. */
    record Timed(Report report, Supplier<Tensor> simulation) {
    }

    /**
     * {@link #timeSteps} for several simulations in turn within every repetition (the first of them first in even
     * repetitions, last in odd ones), so that they share the machine's state alike; returns each one's last result.
     */
    static List<Tensor> timeInTurn(Comm world, long[] p, List<Timed> programs) {
        Tensor[] last = new Tensor[programs.size()];
        for (long r = 0; r < p[4] + p[3]; r++) {
            if (r == p[4]) {
                Report.settle();
            }
            for (int k = 0; k < programs.size(); k++) {
                int i = r % 2 == 0 ? k : programs.size() - 1 - k;
                world.barrier();
                long t0 = System.nanoTime();
                last[i] = programs.get(i).simulation().get();
                world.barrier();
                if (r >= p[4]) {
                    programs.get(i).report().sample(Report.since(t0) / p[2]);
                }
            }
        }
        return List.of(last);
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
