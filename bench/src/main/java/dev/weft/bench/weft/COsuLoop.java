package dev.weft.bench.weft;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The C reference's timed loop of {@code osu.c} built as a shared library,
 * {@code double osu_seconds(routine, in, out, count, iters)}, called through FFM so that it runs in Weft's own MPI
 * job, in turn with Weft's calls: one routine on one message size, on native buffers made once and filled with
 * the input Weft's calls get.
 */
final class COsuLoop implements AutoCloseable {
    private final MethodHandle seconds;
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment routine;
    private final MemorySegment in;
    private final MemorySegment out;
    private final int count;

    /**
     * @param library the shared library
     * @param routine the routine's name in {@code osu.c}
     * @param input   this rank's input (its length is the routine's input count)
     * @param count   the message size in f32 values
     * @param results the length of this rank's result
     */
    COsuLoop(Path library, String routine, float[] input, int count, long results) {
        MemorySegment symbol = SymbolLookup.libraryLookup(library, Arena.global()).find("osu_seconds")
                .orElseThrow(() -> new IllegalArgumentException(library + " has no osu_seconds"));
        this.seconds = Linker.nativeLinker().downcallHandle(symbol, FunctionDescriptor.of(ValueLayout.JAVA_DOUBLE,
                ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_LONG));
        this.routine = arena.allocateFrom(routine);
        this.in = arena.allocateFrom(ValueLayout.JAVA_FLOAT, input);
        this.out = arena.allocate(ValueLayout.JAVA_FLOAT, Math.max(1, Math.max(results, input.length)));
        this.count = count;
    }

    /** Seconds per call of {@code iters} calls, the ranks having entered together. */
    double seconds(long iters) {
        double s;
        try {
            s = (double) seconds.invokeExact(routine, in, out, count, iters);
        } catch (Throwable t) {
            throw new IllegalStateException("the C loop of osu.c failed", t);
        }
        if (s < 0) {
            throw new IllegalStateException("osu.c does not know the routine " + routine.getString(0));
        }
        return s;
    }

    /** The sum of the first {@code results} values of the result buffer. */
    double sum(long results) {
        double sum = 0;
        for (long i = 0; i < results; i++) {
            sum += out.getAtIndex(ValueLayout.JAVA_FLOAT, i);
        }
        return sum;
    }

    @Override
    public void close() {
        arena.close();
    }
}
