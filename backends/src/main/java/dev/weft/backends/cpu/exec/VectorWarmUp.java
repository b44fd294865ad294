package dev.weft.backends.cpu.exec;

import java.lang.foreign.MemorySegment;

/**
 * When a vectorized fused loop ({@link VectorLoopEmitter}) starts running its Vector API loop. Until C2 has
 * compiled that loop, every vector operation runs the Vector API's Java fallback: ~10 µs per element interpreted
 * and 30-300 ns compiled by C1, against ~1 ns for the scalar loop. Run whole from the first call, an 8 MiB scale
 * took 280, 70 and 55 ms in its first runs (the scalar loop 50, 30 and 30 ms), and the JIT compiles that loop only
 * after hundreds of calls or, for a long range, in the middle of one (on-stack, the loop's exit not yet seen, so
 * that it is soon thrown away).
 *
 * <p>So until the vector loop is ready, a range of at least {@code 2 * }{@value #SLICE} elements runs scalar but
 * for a few vectors, in three phases:
 * <ol>
 *   <li>Warm-up: {@value #TINY_CALLS} calls of the vector loop per range (one per {@code 2 * SLICE} elements of a
 *       shorter range; one per {@value #ELEMENTS_PER_CALL} elements of a longer one, up to {@value #RANGE_CALLS}),
 *       a quarter of them on a slice of {@value #SLICE} elements each and the others on an empty range, then the
 *       scalar loop over the rest. The JIT compiles a method by its calls: after {@value #WARM_CALLS} of them (more
 *       than C2's threshold of 5,000) the vector loop has been queued for C2, with its loop and its exit seen:
 *       within four ranges of 2 Mi elements, as a one-thread loop (one MPI rank per core) runs them, or 24 of a
 *       loop split into chunks of up to 256 Ki elements over threads.
 *       <ul>
 *         <li>Empty calls, because until C2 compiles the loop with its intrinsics, every vector operation runs the
 *             Vector API's Java fallback. Run once per call, its methods reached C2's threshold too, and C2 spent
 *             ~130 ms per rank compiling them on their own (useless once the loop is compiled), in the first calls
 *             of an 8 MiB allreduce+scale loop on 2 ranks. Not more of them: with 15 empty calls in 16, C2
 *             compiled the loop as rarely entered, to code 4× slower per element than the scalar loop.</li>
 *         <li>The scalar loop in calls of at most {@value #PIECE} elements, whose exits the JIT sees: run over a
 *             whole range of millions of elements, it was compiled on the stack (exit not seen) and again up to
 *             four times after deoptimizations, ~50 ms of C2 each on a busy node.</li>
 *       </ul></li>
 *   <li>Measuring, for ranges of at least {@value #MEASURED} elements: the slices as before, timed, then the
 *       scalar loop over the rest, timed. Once a slice's call takes at most {@value #COMPILED_CALL_NANOS} ns (C2
 *       has compiled the vector loop: a call then takes ~15-25 ns here, compiled by C1 300 ns or more; the scalar
 *       loop's time is no yardstick, as a slice's call costs more than its 8 elements), the vector loop also runs
 *       the next sixteenth of the range (at most {@value #MEASURE_MOST} elements), timed; until then, the empty
 *       calls as before (C2 counts calls from C1's profiling code on, not from the first).
 *       When the vector loop costs no more per element than the scalar loop in {@value #CONFIRM} ranges in a row,
 *       it is ready. A shorter range runs the vector loop whole.</li>
 *   <li>Ready: every range runs the vector loop whole.</li>
 * </ol>
 * Both loops write the same bits ({@link VectorLoopEmitter} vectorizes only bit-exact ops), so the phases change
 * speed only; a memory-bound loop, as fast either way, may stay in the second phase. Threads share one state per
 * loop class without locks: a race can only delay a phase.
 */
final class VectorWarmUp {
    /** The two loops of a vectorized fused loop class, each as {@link FusedLoop#run} specifies. */
    interface Paths {
        /** The vector loop over the whole vectors of the range, then the scalar loop over the rest. */
        void vector(MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results, long[] resultOffsets,
                    long from, long to);

        /** The scalar loop over the whole range. */
        void scalar(MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results, long[] resultOffsets,
                    long from, long to);
    }

    /** Elements per warm-up call of the vector loop: one f32 vector, two f64 ones. */
    static final long SLICE = 8;
    static final long WARM_CALLS = 6144;
    static final long TINY_CALLS = 256;
    static final long RANGE_CALLS = WARM_CALLS / 4;
    static final long ELEMENTS_PER_CALL = 1024;
    static final long PIECE = 8192;
    /** Shortest range that is measured; three clock reads cost ~2% of its scalar loop. */
    static final long MEASURED = 4096;
    static final long MEASURE_MOST = 8192;
    static final long COMPILED_CALL_NANOS = 150;
    static final int CONFIRM = 3;

    /**
     * Ranges shorter than this run the vector loop whole, without this class: read by the generated {@code run} on
     * every call. Too short to warm it at first, shorter than {@link #MEASURED} after the warm-up, all once ready.
     */
    long vectorBelow = 2 * SLICE;
    private long calls;
    private int noSlower;

    /** Runs {@code [from, to)} of {@code loop}, at least {@link #vectorBelow} elements, in the phase it is in. */
    void run(Paths loop, MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results, long[] resultOffsets,
             long from, long to) {
        long n = to - from;
        boolean warm = calls >= WARM_CALLS;
        if (warm && n < MEASURED) {
            // from now on the generated run calls the vector loop for such a range itself
            vectorBelow = Math.max(vectorBelow, MEASURED);
            loop.vector(inputs, inputOffsets, results, resultOffsets, from, to);
            return;
        }
        long invocations = Math.max(Math.min(TINY_CALLS, n / (2 * SLICE)),
                Math.min(RANGE_CALLS, n / ELEMENTS_PER_CALL));
        long sliced = invocations / 4;
        long end = from + sliced * SLICE;
        if (!warm) {
            slices(loop, inputs, inputOffsets, results, resultOffsets, from, end);
            empty(loop, inputs, inputOffsets, results, resultOffsets, end, invocations - sliced);
            calls += invocations;
            pieces(loop, inputs, inputOffsets, results, resultOffsets, end, to);
            return;
        }
        long t0 = System.nanoTime();
        slices(loop, inputs, inputOffsets, results, resultOffsets, from, end);
        long t1 = System.nanoTime();
        long measured = end;
        if (t1 - t0 <= COMPILED_CALL_NANOS * sliced) {
            measured = end + Math.min(MEASURE_MOST, (to - end) / 16 / SLICE * SLICE);
            loop.vector(inputs, inputOffsets, results, resultOffsets, end, measured);
        } else {
            empty(loop, inputs, inputOffsets, results, resultOffsets, end, invocations - sliced);
        }
        long t2 = System.nanoTime();
        pieces(loop, inputs, inputOffsets, results, resultOffsets, measured, to);
        long t3 = System.nanoTime();
        if (measured > end) {
            weigh(t2 - t1, measured - end, t3 - t2, to - measured);
        }
    }

    /** {@code [from, end)} as one call of the vector loop per slice. */
    private static void slices(Paths loop, MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results,
                               long[] resultOffsets, long from, long end) {
        for (long s = from; s < end; s += SLICE) {
            loop.vector(inputs, inputOffsets, results, resultOffsets, s, s + SLICE);
        }
    }

    /** {@code count} calls of the vector loop on the empty range at {@code at}. */
    private static void empty(Paths loop, MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results,
                              long[] resultOffsets, long at, long count) {
        for (long k = 0; k < count; k++) {
            loop.vector(inputs, inputOffsets, results, resultOffsets, at, at);
        }
    }

    /** {@code [from, to)} as calls of the scalar loop on at most {@value #PIECE} elements each. */
    private static void pieces(Paths loop, MemorySegment[] inputs, long[] inputOffsets, MemorySegment[] results,
                               long[] resultOffsets, long from, long to) {
        for (long s = from; s < to; s += PIECE) {
            loop.scalar(inputs, inputOffsets, results, resultOffsets, s, Math.min(to, s + PIECE));
        }
    }

    /** Records one measured range: vector elements and their nanoseconds, scalar ones and theirs. */
    void weigh(long vectorNanos, long vectorElements, long scalarNanos, long scalarElements) {
        if ((double) vectorNanos * scalarElements <= (double) scalarNanos * vectorElements) {
            if (++noSlower >= CONFIRM) {
                vectorBelow = Long.MAX_VALUE;
            }
        } else {
            noSlower = 0;
        }
    }
}
