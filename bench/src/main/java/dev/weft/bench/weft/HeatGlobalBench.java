package dev.weft.bench.weft;

import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.examples.HeatGlobal;
import dev.weft.shard.Mesh;
import dev.weft.shard.Sharding;
import java.io.PrintStream;
import java.util.List;

/**
 * Case 6, global view: {@link HeatGlobal#simulate} (the stencil written on the whole grid, partitioned by Weft) on
 * the grid of {@link HeatBench}, rows sharded over the ranks of {@code Comm.world()}, timed in turn with
 * {@link HeatBench}'s hand-written {@code Heat} in every repetition (its lines prefixed {@code [Heat] }), so the two
 * are compared under the same load. Usage: {@code ROWS COLS STEPS REPS WARMUP}; rank 0 reports seconds per step
 * (barrier to barrier) and the sum of the final grid, for each.
 */
public final class HeatGlobalBench {
    private static final double ALPHA = 0.1;

    private HeatGlobalBench() {
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("HeatGlobalBench", "ROWS COLS STEPS REPS WARMUP", args);
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0), heatReport = report.alongside("Heat");
        int rows = Math.toIntExact(p[0]), steps = Math.toIntExact(p[2]);
        Tensor u0 = Sharding.put(HeatBench.initial(0, rows, rows, Math.toIntExact(p[1])),
                Sharding.of(Mesh.of(world, "rows"), "rows", null));
        List<Tensor> last = HeatBench.timeInTurn(world, p, List.of(
                new HeatBench.Timed(report, () -> HeatGlobal.simulate(u0, steps, ALPHA)),
                new HeatBench.Timed(heatReport, HeatBench.simulation(world, p))));
        report.check(Sharding.gather(last.get(0)).sum().item());
        heatReport.check(world.allreduce(last.get(1).sum(), ReduceOp.SUM).item());
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
