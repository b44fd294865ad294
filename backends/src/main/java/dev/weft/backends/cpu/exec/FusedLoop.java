package dev.weft.backends.cpu.exec;

import java.lang.foreign.MemorySegment;

/**
 * A fusion region compiled to one loop ({@link FusedLoopGenerator}): for each element index {@code i} in
 * {@code [from, to)} it reads element {@code i} of every full-size input once, computes the region in locals and
 * writes element {@code i} of every result once. Rank-0 inputs are read once per call. A result may be one of
 * the inputs: element {@code i} is read before it is written. Integer division or remainder by zero throws
 * {@link ArithmeticException}.
 */
interface FusedLoop {
    /**
     * Runs the loop over elements {@code [from, to)}. Element {@code i} of full-size input {@code k} is read at byte
     * {@code inputOffsets[k] + i * size} of {@code inputs[k]} (an offset may be negative: only the elements of the
     * range are read), and element {@code i} of result {@code r} written at {@code resultOffsets[r] + i * size} of
     * {@code results[r]}; a null offsets array means all zero. Rank-0 inputs are read at byte 0.
     */
    void run(MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results, long[] resultOffsets, long from,
             long to);

    /**
     * {@link #run} over {@code rows} rows: after each, every input offset grows by its entry of
     * {@code inputRowStrides} and every result offset by its entry of {@code resultRowStrides} (bytes). The offsets
     * arrays must not be null; they are left as after the last row.
     */
    void runRows(MemorySegment[] inputs, long[] inputOffsets, long[] inputRowStrides, MemorySegment[] results,
                 long[] resultOffsets, long[] resultRowStrides, long rows, long from, long to);

    /** {@link #run} with every offset zero. */
    default void run(MemorySegment[] inputs, MemorySegment[] results, long from, long to) {
        run(inputs, null, results, null, from, to);
    }
}
