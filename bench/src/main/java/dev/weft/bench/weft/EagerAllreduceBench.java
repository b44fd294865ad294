package dev.weft.bench.weft;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * Case 10: the cost of the schedule check on eager collectives. ITERS eager {@code allreduce} (SUM) calls of COUNT
 * f32 values then a scale by 1/P, carried, with the check on (the default) and with {@code weft.check=off}, in turn
 * in every repetition of one job ({@code [off]} samples), and the C loop of case 5 in the same turns when
 * C_LIBRARY is given ({@code [C]}). Usage: {@code COUNT ITERS REPS WARMUP [C_LIBRARY]}; samples are seconds per
 * step. The check is the carried sum, which every mode keeps equal to {@code COUNT * (P + 1) / 2}.
 */
public final class EagerAllreduceBench {
    private static final String CHECK = "weft.check";

    private EagerAllreduceBench() {
    }

    private static double steps(Comm world, Tensor[] carried, long iters, String mode) {
        String before = System.getProperty(CHECK);
        System.setProperty(CHECK, mode);
        try {
            double scale = 1.0 / world.size();
            world.barrier();
            long t0 = System.nanoTime();
            Tensor y = carried[0];
            for (long i = 0; i < iters; i++) {
                y = world.allreduce(y, ReduceOp.SUM).mul(scale);
            }
            double seconds = Report.since(t0) / iters;
            carried[0] = y;
            return seconds;
        } finally {
            if (before == null) {
                System.clearProperty(CHECK);
            } else {
                System.setProperty(CHECK, before);
            }
        }
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("EagerAllreduceBench", "COUNT ITERS REPS WARMUP", args);
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        Report off = report.alongside("off");
        int count = Math.toIntExact(p[0]);
        CAllreduceLoop c = args.length > 4 ? new CAllreduceLoop(Path.of(args[4]), count, world.rank() + 1,
                1f / world.size()) : null;
        Tensor[] checked = {Tensor.full(DType.F32, world.rank() + 1, count)};
        Tensor[] unchecked = {Tensor.full(DType.F32, world.rank() + 1, count)};
        for (long r = 0; r < p[3] + p[2]; r++) {
            if (r == p[3]) {
                Report.settle();
            }
            // the modes take turns going first, so that neither always follows the other
            boolean offFirst = r % 2 == 1;
            double offSeconds = offFirst ? steps(world, unchecked, p[1], "off") : 0;
            double seconds = steps(world, checked, p[1], "schedule");
            if (!offFirst) {
                offSeconds = steps(world, unchecked, p[1], "off");
            }
            double cSeconds = c == null ? 0 : c.seconds(p[1]);
            if (r >= p[3]) {
                report.sample(seconds);
                off.sample(offSeconds);
                if (c != null) {
                    report.alongside("C").sample(cSeconds);
                }
            }
        }
        report.check(AllreduceBench.sum(checked[0].toFloatArray()));
        off.check(AllreduceBench.sum(unchecked[0].toFloatArray()));
        if (c != null) {
            report.alongside("C").check(c.sum());
        }
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
