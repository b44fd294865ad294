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
 * The C reference's timed loop of {@code allreduce.c} built as a shared library,
 * {@code double allreduce_seconds(in, out, count, iters, scale)}, called through FFM so that it runs in Weft's own
 * MPI job, in turn with Weft's loop; its result is {@code in}, which it scales the reduced values back into.
 */
final class CAllreduceLoop {
    private final MethodHandle seconds;
    private final MemorySegment in;
    private final MemorySegment out;
    private final int count;
    private final float scale;

    CAllreduceLoop(Path library, int count, float value, float scale) {
        Linker linker = Linker.nativeLinker();
        MemorySegment symbol = SymbolLookup.libraryLookup(library, Arena.global()).find("allreduce_seconds")
                .orElseThrow(() -> new IllegalArgumentException(library + " has no allreduce_seconds"));
        this.seconds = linker.downcallHandle(symbol, FunctionDescriptor.of(ValueLayout.JAVA_DOUBLE,
                ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                ValueLayout.JAVA_FLOAT));
        this.in = Arena.global().allocate(ValueLayout.JAVA_FLOAT, count);
        this.out = Arena.global().allocate(ValueLayout.JAVA_FLOAT, count);
        this.count = count;
        this.scale = scale;
        for (long i = 0; i < count; i++) {
            in.setAtIndex(ValueLayout.JAVA_FLOAT, i, value);
        }
    }

    /** Seconds per step of {@code iters} steps, the ranks having entered together. */
    double seconds(long iters) {
        try {
            return (double) seconds.invokeExact(in, out, count, iters, scale);
        } catch (Throwable t) {
            throw new IllegalStateException("the C allreduce loop failed", t);
        }
    }

    /** The sum of the loop's carried values, its check. */
    double sum() {
        return AllreduceBench.sum(in.toArray(ValueLayout.JAVA_FLOAT));
    }
}
