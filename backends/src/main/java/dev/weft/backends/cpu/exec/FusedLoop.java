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
    void run(MemorySegment[] inputs, MemorySegment[] results, long from, long to);
}
