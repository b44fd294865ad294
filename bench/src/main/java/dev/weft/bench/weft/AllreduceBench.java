package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.io.PrintStream;

/**
 * Case 5: ITERS allreduces (SUM) of COUNT f32 values inside one compiled {@code Weft.fori}, rank r contributing
 * r+1 everywhere, on {@code Comm.world()} (fake ranks or MPI, as launched). Usage: {@code COUNT ITERS REPS WARMUP};
 * rank 0 reports seconds per allreduce and the sum of the result.
 */
public final class AllreduceBench {
    private AllreduceBench() {
    }

    @Compile
    static Tensor allreduces(Comm comm, Tensor x, int iters) {
        return Weft.fori(0, iters, x, (i, acc) -> comm.allreduce(x, ReduceOp.SUM));
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("AllreduceBench", "COUNT ITERS REPS WARMUP", args);
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        int iters = Math.toIntExact(p[1]);
        Tensor x = Tensor.full(DType.F32, world.rank() + 1, p[0]);
        Tensor y = x;
        // warm-up runs the timed loop's own code (the barrier included), so that nothing compiles while timing
        for (long r = 0; r < p[3] + p[2]; r++) {
            if (r == p[3]) {
                Report.settle();
            }
            world.barrier();
            long t0 = System.nanoTime();
            y = allreduces(world, x, iters);
            double seconds = Report.since(t0) / iters;
            if (r >= p[3]) {
                report.sample(seconds);
            }
        }
        double sum = 0;
        for (float v : y.toFloatArray()) {
            sum += v;
        }
        report.check(sum);
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
