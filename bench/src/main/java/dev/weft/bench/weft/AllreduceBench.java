package dev.weft.bench.weft;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * Case 5: ITERS allreduces (SUM) of COUNT f32 values inside one compiled {@code Weft.fori}, rank r contributing
 * r+1 everywhere, on {@code Comm.world()} (fake ranks or MPI, as launched). Usage:
 * {@code COUNT ITERS REPS WARMUP [C_LIBRARY]}; rank 0 reports seconds per allreduce and the sum of the result.
 *
 * <p>Under MPI, C_LIBRARY (the C reference {@code allreduce.c} built as a shared library) adds the C loop, timed
 * in turn with Weft's in every repetition and reported as {@code [C]}. Both then run in one job on the same rank
 * placement: on a VM whose vCPUs move between placements, MPI's round trip can change twofold between two jobs.
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
        CLoop c = args.length > 4 ? new CLoop(Path.of(args[4]), Math.toIntExact(p[0]), world.rank() + 1) : null;
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

    private static double sum(float[] values) {
        double sum = 0;
        for (float v : values) {
            sum += v;
        }
        return sum;
    }

    /** The C reference's timed loop, {@code double allreduce_seconds(in, out, count, iters)}, called through FFM. */
    private static final class CLoop {
        private final MethodHandle seconds;
        private final MemorySegment in;
        private final MemorySegment out;
        private final int count;

        CLoop(Path library, int count, float value) {
            Linker linker = Linker.nativeLinker();
            MemorySegment symbol = SymbolLookup.libraryLookup(library, Arena.global()).find("allreduce_seconds")
                    .orElseThrow(() -> new IllegalArgumentException(library + " has no allreduce_seconds"));
            this.seconds = linker.downcallHandle(symbol, FunctionDescriptor.of(ValueLayout.JAVA_DOUBLE,
                    ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
            this.in = Arena.global().allocate(ValueLayout.JAVA_FLOAT, count);
            this.out = Arena.global().allocate(ValueLayout.JAVA_FLOAT, count);
            this.count = count;
            for (long i = 0; i < count; i++) {
                in.setAtIndex(ValueLayout.JAVA_FLOAT, i, value);
            }
        }

        double seconds(long iters) {
            try {
                return (double) seconds.invokeExact(in, out, count, iters);
            } catch (Throwable t) {
                throw new IllegalStateException("the C allreduce loop failed", t);
            }
        }

        double sum() {
            return AllreduceBench.sum(out.toArray(ValueLayout.JAVA_FLOAT));
        }
    }

    public static void main(String[] args) {
        Weft.install();
        run(args, System.out);
    }
}
