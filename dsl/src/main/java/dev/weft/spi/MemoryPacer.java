package dev.weft.spi;

import java.time.Duration;

/**
 * Counts the bytes of {@link NativeMemory}'s paced buffers (all but slab-carved ones) handed out and not yet freed,
 * and asks for a collection when they near their budget: see {@link NativeMemory}. The collections run on a thread
 * of their own, so that an allocating thread waits at most until the buffers that one found dead are back, never
 * for the whole cycle.
 *
 * <p>The budget's floor adapts to what collections cost, as G1 sizes its heap to bound the time it spends collecting
 * ({@code GCTimeRatio}). A collection costs a program the cores its concurrent cycle takes only while the program keeps
 * the cores of its share ({@link CoreShare}) busy. So when pacing collections start less than {@value #RATIO} times
 * their own duration apart and the process used at least {@value #BUSY_PERCENT}% of its share's CPU time since the
 * previous one, the floor grows fourfold, up to {@link #CEILING}; when they start more than {@value #SHRINK} times
 * their duration apart, it halves, down to {@link #FLOOR}. Growing in one large step, rather than just enough, keeps a
 * collection that takes a little longer than the others from making it grow again later, which maps fresh buffers in a
 * loop that had settled. A loop dropping a 64 MiB result of a compiled call that runs on both cores for 21 ms collected
 * every third call at 256 MiB (every ~63 ms, each collection ~20 ms), and each collection (a young pause, then G1's
 * concurrent cycle on one of the two cores) made its call 8–9 ms longer: p90 1.33–1.41× the median. At 1 GiB it
 * collects every ~14 calls. A loop that makes and drops 8 MiB tensors on one thread collects as often for its duration,
 * but its program leaves the other core to the collector: grown, it held 0.6 GiB instead of 0.3 for no gain.
 */
final class MemoryPacer {
    static final long FLOOR = NativeMemory.PACING_MIN_MIB << 20;
    static final long CEILING = 4 * FLOOR;
    static final long RATIO = 5;
    static final long SHRINK = 8 * RATIO;
    static final int BUSY_PERCENT = 80;
    /** After a pacing collection: the cleaners are done once no buffer came back for this long. */
    private static final long QUIET_MILLIS = 2;
    /**
     * How long to wait for the first buffer to come back after {@link System#gc} returned before taking silence
     * for "nothing was dead": on a loaded machine the cleaner thread may not run within {@link #QUIET_MILLIS} of
     * the collection, and counting its buffers as live would double the budget each time.
     */
    private static final long FIRST_RETURN_NANOS = 20_000_000L;
    private static final long WAIT_MAX_NANOS = 100_000_000L;
    /** The longest an allocating thread waits for a collection to return its first buffer (or to end). */
    private static final long COLLECTION_MAX_NANOS = 2_000_000_000L;

    private static final Object LOCK = new Object();
    private static long outstanding;
    /**
     * Bytes that the last pacing collection found live, lowered by later frees: the cleaners may still be returning
     * what it found dead after it stopped waiting for them.
     */
    private static long liveAfterCollection;
    private static long returns;
    /** Pacing collections asked for, and those done (the cleaners fell quiet after them). */
    private static long requested;
    private static long finished;
    /** Bytes handed out since the last collection was asked for: it does not judge them, so they are not live. */
    private static long allocatedSinceRequest;
    /** The budget's floor as collections' cost has adapted it, between {@link #FLOOR} and {@link #CEILING}. */
    private static long floor = FLOOR;
    /** When the last pacing collection started ({@link System#nanoTime}); 0 before the first. */
    private static long lastStart;
    /** The process's CPU time then, in nanoseconds; -1 if unknown. */
    private static long lastCpu = -1;
    private static Thread collector;

    private MemoryPacer() {
    }

    /**
     * The most bytes one collection can find dead: the budget (its adapted floor, or twice the bytes live after the
     * last collection if that is more, as a heap grows with its live set) less those live bytes.
     */
    static long headroom() {
        synchronized (LOCK) {
            return budget() - liveAfterCollection;
        }
    }

    /** True if handing out {@code bytes} more would exceed the budget. */
    static boolean overBudget(long bytes) {
        synchronized (LOCK) {
            return outstanding + bytes > budget();
        }
    }

    /**
     * Counts {@code bytes} handed out. If as many again would exceed the budget, asks for a collection without
     * waiting for it: the buffers it finds dead are back, pooled, before the allocation that would exceed the budget.
     * In a loop that drops a 64 MiB result per call they are back 5–10 ms later, at the collection's young pause,
     * well before the next call (~45 ms); the calling thread used to wait 18–30 ms per collection, as
     * {@link System#gc} returns only after G1's whole concurrent cycle, and now does not wait (no wait in 60 calls;
     * a call that overlaps a collection ran ~9 ms longer, 86 ms against 77 at a load of 4).
     *
     * @return whether it asked for a collection
     */
    static boolean allocated(long bytes) {
        synchronized (LOCK) {
            outstanding += bytes;
            allocatedSinceRequest += bytes;
            return outstanding + bytes > budget() && request();
        }
    }

    /**
     * Waits until the buffers that a collection found dead are back: the collection under way, or one asked for
     * now. Returns as soon as the cleaners fall quiet after the first buffer came back. If the collection under way
     * ends with none back (its young pause came before the buffers dropped since), waits for another.
     *
     * @return whether it asked for a collection
     */
    static boolean awaitCollection() {
        synchronized (LOCK) {
            long start = returns;
            boolean asked = request();
            long deadline = System.nanoTime() + COLLECTION_MAX_NANOS;
            try {
                awaitReturnOrEnd(start, deadline);
                if (returns == start && !asked) {
                    asked = request();
                    awaitReturnOrEnd(start, deadline);
                }
                awaitQuiet(System.nanoTime() + WAIT_MAX_NANOS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return asked;
        }
    }

    /** Pacing collections done so far. */
    static long collections() {
        synchronized (LOCK) {
            return finished;
        }
    }

    /** True while a pacing collection asked for is not done. */
    static boolean collecting() {
        synchronized (LOCK) {
            return requested > finished;
        }
    }

    /** Counts {@code bytes} freed; runs on a cleaner thread. */
    static void released(long bytes) {
        synchronized (LOCK) {
            outstanding -= bytes;
            liveAfterCollection = Math.min(liveAfterCollection, outstanding);
            returns++;
            LOCK.notifyAll();
        }
    }

    /** Bytes handed out whose segments the collector has not freed yet. */
    static long outstandingBytes() {
        synchronized (LOCK) {
            return outstanding;
        }
    }

    private static long budget() {
        return Math.max(floor, 2 * liveAfterCollection);
    }

    /** The budget's floor now: {@link #FLOOR} unless collections came too often for their cost. */
    static long floor() {
        synchronized (LOCK) {
            return floor;
        }
    }

    /**
     * The floor after a collection that took {@code tookNanos} and started {@code sinceLastNanos} after the previous
     * one, in which time the process used {@code busyPercent}% of its share's CPU time: see the class comment.
     */
    static long adapted(long floor, long sinceLastNanos, long tookNanos, long busyPercent) {
        if (sinceLastNanos < RATIO * tookNanos && busyPercent >= BUSY_PERCENT) {
            return Math.min(CEILING, 4 * floor);
        }
        if (sinceLastNanos > SHRINK * tookNanos) {
            return Math.max(FLOOR, floor / 2);
        }
        return floor;
    }

    /** Asks the collector thread for a collection unless one is under way; the caller holds {@link #LOCK}. */
    private static boolean request() {
        if (requested > finished) {
            return false;
        }
        requested++;
        allocatedSinceRequest = 0;
        if (collector == null) {
            collector = Thread.ofPlatform().daemon().name("weft-memory-pacer").start(MemoryPacer::collectLoop);
        }
        LOCK.notifyAll();
        return true;
    }

    private static void collectLoop() {
        while (true) {
            long start;
            synchronized (LOCK) {
                while (requested == finished) {
                    waitUninterruptibly(0);
                }
                start = returns;
            }
            long began = System.nanoTime();
            long cpu = processCpuNanos();
            System.gc();
            long took = System.nanoTime() - began;
            synchronized (LOCK) {
                if (lastStart != 0) {
                    long busy = cpu < 0 || lastCpu < 0 ? 0
                            : 100 * (cpu - lastCpu) / Math.max(1, (began - lastStart) * CoreShare.CORES);
                    floor = adapted(floor, began - lastStart, took, busy);
                }
                lastStart = began;
                lastCpu = cpu;
                long first = System.nanoTime() + FIRST_RETURN_NANOS;
                long now;
                while (returns == start && (now = System.nanoTime()) < first) {
                    waitUninterruptibly(Math.max(1, (first - now) / 1_000_000));
                }
                try {
                    awaitQuiet(System.nanoTime() + WAIT_MAX_NANOS);
                } catch (InterruptedException e) {
                    Thread.interrupted();
                }
                liveAfterCollection = Math.max(0, outstanding - allocatedSinceRequest);
                finished = requested;
                LOCK.notifyAll();
            }
        }
    }

    /** The CPU time this process has used, in nanoseconds (to the kernel's tick, ~10 ms); -1 if unknown. */
    private static long processCpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
    }

    /**
     * Waits until a buffer came back since {@code start} returns or the collection last asked for is done, until
     * {@code deadline}; the caller holds {@link #LOCK}.
     */
    private static void awaitReturnOrEnd(long start, long deadline) throws InterruptedException {
        long target = requested;
        long now;
        while (returns == start && finished < target && (now = System.nanoTime()) < deadline) {
            LOCK.wait(Math.max(1, (deadline - now) / 1_000_000));
        }
    }

    /** Waits while buffers keep coming back, until {@code deadline}; the caller holds {@link #LOCK}. */
    private static void awaitQuiet(long deadline) throws InterruptedException {
        long before;
        do {
            before = returns;
            LOCK.wait(QUIET_MILLIS);
        } while (returns != before && System.nanoTime() < deadline);
    }

    private static void waitUninterruptibly(long millis) {
        try {
            LOCK.wait(millis);
        } catch (InterruptedException e) {
            Thread.interrupted();
        }
    }
}
