package dev.weft.backends.cpu.exec;

import dev.weft.spi.CoreShare;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs a {@link FusedLoop} over all {@code n} elements: on the calling thread below {@value #PARALLEL_MIN}
 * elements, else in chunks claimed by the caller and by a shared pool's workers, one per other core of this
 * process's share ({@link CoreShare}). Chunks are multiples of {@value #ALIGN} elements, so no two share a cache
 * line of a 64-byte-aligned buffer (a fusion with views splits by rows instead). Buffers confined to the calling
 * thread are never handed to the pool.
 */
final class FusedLoopRunner {
    static final long PARALLEL_MIN = 1 << 20;
    private static final long ALIGN = 64;
    private static final long ALIGN_ROWS = 1;
    private static final int CHUNKS_PER_CORE = 8;
    private static final int CORES = CoreShare.CORES;
    /** Never started: a segment it may access is one any thread may access. */
    private static final Thread ANOTHER_THREAD = Thread.ofPlatform().unstarted(() -> { });

    private FusedLoopRunner() {
    }

    /** Created on first use, so that a JVM that never runs a large fusion starts no threads. */
    private static final class Pool {
        static final ForkJoinPool POOL = new ForkJoinPool(CORES - 1, Pool::worker, null, false);

        /**
         * A worker in the root thread group that inherits no thread locals: otherwise the rank thread that first
         * starts the pool would lend its workers its {@code Comm.world()} binding and thread group, keeping a
         * finished fake world reachable as long as the pool lives.
         */
        private static ForkJoinWorkerThread worker(ForkJoinPool pool) {
            ThreadGroup root = Thread.currentThread().getThreadGroup();
            while (root.getParent() != null) {
                root = root.getParent();
            }
            return new ForkJoinWorkerThread(root, pool, false) { };
        }
    }

    static void run(FusedLoop loop, MemorySegment[] in, MemorySegment[] out, long n) {
        if (serial(n, in, out)) {
            loop.run(in, null, out, null, 0, n);
            return;
        }
        split(loop, null, in, out, n, ALIGN);
    }

    /** Runs {@code loop} row by row over the fused shape of {@code views}, in chunks of rows as above. */
    static void run(FusionViews views, FusedLoop loop, MemorySegment[] in, MemorySegment[] out) {
        long rows = views.rows();
        if (serial(rows * views.rowLength(), in, out)) {
            views.run(loop, in, out, 0, rows, 0);
            return;
        }
        split(loop, views, in, out, rows, ALIGN_ROWS);
    }

    /**
     * The chunks of one split loop, claimed in turn by the caller and the pool's workers: elements, or rows of
     * {@code views} if not null. A thread that shares its core with another (a collector's concurrent cycle, another
     * process) claims fewer chunks instead of holding the whole call back: with one block per core, a loop that drops
     * a 64 MiB result per call ran the call that overlapped G1's concurrent cycle 10–16 ms longer (of 20 ms). The
     * caller and the workers call the generated loop from here, a few frames deep: called through lambdas from a
     * worker's loop (which C2 compiles on the stack, inlining what it calls), the loop's segment accesses sat deeper
     * than C2 inlines ({@code MaxInlineLevel}), and a worker ran an 8 MiB scale at 2.8 ns per element instead of 0.3.
     */
    private static final class Chunks extends RecursiveAction {
        private final FusedLoop loop;
        private final FusionViews views;
        private final MemorySegment[] in;
        private final MemorySegment[] out;
        private final long n;
        private final long chunk;
        private final AtomicLong next;

        Chunks(FusedLoop loop, FusionViews views, MemorySegment[] in, MemorySegment[] out, long n, long chunk,
                AtomicLong next) {
            this.loop = loop;
            this.views = views;
            this.in = in;
            this.out = out;
            this.n = n;
            this.chunk = chunk;
            this.next = next;
        }

        /** Another claimant of the same chunks. */
        Chunks claimant() {
            return new Chunks(loop, views, in, out, n, chunk, next);
        }

        @Override
        protected void compute() {
            for (long from = next.getAndAdd(chunk); from < n; from = next.getAndAdd(chunk)) {
                long to = Math.min(n, from + chunk);
                if (views == null) {
                    loop.run(in, null, out, null, from, to);
                } else {
                    views.run(loop, in, out, from, to, 0);
                }
            }
        }
    }

    /**
     * Runs {@code loop} over {@code [0, n)} (elements, or rows of {@code views}) in {@value #CHUNKS_PER_CORE}
     * chunks per core, multiples of {@code align}, claimed by the caller and one pool task per other core.
     */
    private static void split(FusedLoop loop, FusionViews views, MemorySegment[] in, MemorySegment[] out, long n,
            long align) {
        long chunk = ((n + CORES * CHUNKS_PER_CORE - 1) / (CORES * CHUNKS_PER_CORE) + align - 1) / align * align;
        Chunks caller = new Chunks(loop, views, in, out, n, chunk, new AtomicLong());
        Chunks[] rest = new Chunks[CORES - 1];
        for (int b = 0; b < rest.length; b++) {
            rest[b] = caller.claimant();
            Pool.POOL.execute(rest[b]);
        }
        RuntimeException failure = null;
        try {
            caller.compute();
        } catch (RuntimeException e) {
            failure = e;
        }
        for (Chunks t : rest) {
            try {
                t.join();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Whether a loop over {@code elements} elements of these buffers runs whole on the calling thread. */
    private static boolean serial(long elements, MemorySegment[] in, MemorySegment[] out) {
        return elements < PARALLEL_MIN || CORES < 2 || !shared(in) || !shared(out);
    }

    private static boolean shared(MemorySegment[] segments) {
        for (MemorySegment s : segments) {
            if (!s.isAccessibleBy(ANOTHER_THREAD)) {
                return false;
            }
        }
        return true;
    }
}
