package dev.weft.bench.weft;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.backends.comm.check.CommStep;
import dev.weft.comm.Comm;
import dev.weft.prim.CommOp;
import dev.weft.spi.Aval;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * Case 10: what the schedule check costs an eager collective. ITERS steps of an allreduce (SUM) of COUNT f32
 * values then a scale by 1/P, carried, four ways in turn in every repetition of one job: {@code Comm.allreduce}
 * and {@code mul} as a user writes them (checked, the default; the main samples); the runtime's allreduce on
 * native buffers with the check before it ({@code [checked]}) and without ({@code [unchecked]}), the two differing
 * only by the check; and, when C_LIBRARY is given, the C loop of case 5 ({@code [C]}). The check runs under every
 * {@code WEFT_CHECK} (collectives are always checked: MPI corrupts memory when counts differ), so the runtime
 * series are what isolates it. Usage: {@code COUNT ITERS REPS WARMUP [C_LIBRARY]}; samples are seconds per step;
 * each series checks its carried sum, {@code COUNT * (P + 1) / 2}.
 */
public final class EagerAllreduceBench {
    private EagerAllreduceBench() {
    }

    /** The runtime's allreduce and scale on one native buffer, with or without the check before each. */
    private static final class RuntimeLoop {
        private final Communicator comm;
        private final CommCheck check;
        private final CommStep step;
        private final MemorySegment in;
        private final MemorySegment out;
        private final int count;
        private final float scale;

        RuntimeLoop(Comm world, int count, boolean checked) {
            this.comm = (Communicator) world.handle();
            SourceLocation where = SourceLocation.capture();
            this.check = checked ? CommCheck.of(comm) : null;
            this.step = CommStep.of(new CommOp.AllReduce(world.handle(), dev.weft.comm.ReduceOp.SUM),
                    new Aval(DType.F32, Shape.of(count)), where);
            this.in = Arena.global().allocate(ValueLayout.JAVA_FLOAT, count);
            this.out = Arena.global().allocate(ValueLayout.JAVA_FLOAT, count);
            this.count = count;
            this.scale = 1f / world.size();
            for (int i = 0; i < count; i++) {
                in.setAtIndex(ValueLayout.JAVA_FLOAT, i, world.rank() + 1);
            }
        }

        double seconds(Comm world, long iters) {
            SourceLocation where = step.where();
            world.barrier();
            long t0 = System.nanoTime();
            for (long i = 0; i < iters; i++) {
                if (check != null) {
                    check.collective(step);
                }
                comm.allreduce(in, out, DType.F32, count, RuntimeReduceOp.SUM, where);
                for (int j = 0; j < count; j++) {
                    in.setAtIndex(ValueLayout.JAVA_FLOAT, j, out.getAtIndex(ValueLayout.JAVA_FLOAT, j) * scale);
                }
            }
            return Report.since(t0) / iters;
        }

        double sum() {
            return AllreduceBench.sum(in.toArray(ValueLayout.JAVA_FLOAT));
        }
    }

    private static double eager(Comm world, Tensor[] carried, long iters) {
        double scale = 1.0 / world.size();
        world.barrier();
        long t0 = System.nanoTime();
        Tensor y = carried[0];
        for (long i = 0; i < iters; i++) {
            y = world.allreduce(y, dev.weft.comm.ReduceOp.SUM).mul(scale);
        }
        double seconds = Report.since(t0) / iters;
        carried[0] = y;
        return seconds;
    }

    static void run(String[] args, PrintStream out) {
        long[] p = Report.args("EagerAllreduceBench", "COUNT ITERS REPS WARMUP", args);
        Comm world = Comm.world();
        Report report = new Report(out, world.rank() == 0);
        int count = Math.toIntExact(p[0]);
        CAllreduceLoop c = args.length > 4 ? new CAllreduceLoop(Path.of(args[4]), count, world.rank() + 1,
                1f / world.size()) : null;
        RuntimeLoop checked = new RuntimeLoop(world, count, true);
        RuntimeLoop unchecked = new RuntimeLoop(world, count, false);
        Tensor[] carried = {Tensor.full(DType.F32, world.rank() + 1, count)};
        for (long r = 0; r < p[3] + p[2]; r++) {
            if (r == p[3]) {
                Report.settle();
            }
            // the runtime series take turns going first, so that neither always follows the other
            boolean swap = r % 2 == 1;
            double uncheckedSeconds = swap ? unchecked.seconds(world, p[1]) : 0;
            double checkedSeconds = checked.seconds(world, p[1]);
            if (!swap) {
                uncheckedSeconds = unchecked.seconds(world, p[1]);
            }
            double seconds = eager(world, carried, p[1]);
            double cSeconds = c == null ? 0 : c.seconds(p[1]);
            if (r >= p[3]) {
                report.sample(seconds);
                report.alongside("checked").sample(checkedSeconds);
                report.alongside("unchecked").sample(uncheckedSeconds);
                if (c != null) {
                    report.alongside("C").sample(cSeconds);
                }
            }
        }
        report.check(AllreduceBench.sum(carried[0].toFloatArray()));
        report.alongside("checked").check(checked.sum());
        report.alongside("unchecked").check(unchecked.sum());
        if (c != null) {
            report.alongside("C").check(c.sum());
        }
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
