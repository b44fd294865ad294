package dev.weft.spi;

/**
 * Counts the bytes of {@link NativeMemory}'s paced buffers (all but slab-carved ones) handed out and not yet freed,
 * and asks for a collection when they outgrow their budget: see {@link NativeMemory}.
 */
final class MemoryPacer {
    static final long FLOOR = NativeMemory.PACING_MIN_MIB << 20;
    /** After a pacing collection: the cleaners are done once no buffer came back for this long. */
    private static final long QUIET_MILLIS = 2;
    /**
     * How long to wait for the first buffer to come back before taking silence for "nothing was dead": on a loaded
     * machine the cleaner thread may not run within {@link #QUIET_MILLIS} of the collection, and counting its
     * buffers as live would double the budget each time.
     */
    private static final long FIRST_RETURN_NANOS = 20_000_000L;
    private static final long WAIT_MAX_NANOS = 100_000_000L;

    private static final Object LOCK = new Object();
    private static long outstanding;
    /**
     * Bytes outstanding after the last pacing collection, lowered by later frees: the cleaners may still be
     * returning what that collection found dead after {@link #collect} stopped waiting for them.
     */
    private static long liveAfterCollection;
    private static long returns;

    private MemoryPacer() {
    }

    /** True if handing out {@code bytes} more would exceed the budget. */
    static boolean overBudget(long bytes) {
        synchronized (LOCK) {
            return outstanding + bytes > Math.max(FLOOR, 2 * liveAfterCollection);
        }
    }

    /**
     * Asks for a collection and waits until the cleaners have fallen quiet, so that the buffers it freed are back
     * and the live bytes measured.
     */
    static void collect() {
        long start;
        synchronized (LOCK) {
            start = returns;
        }
        System.gc();
        long now = System.nanoTime(), first = now + FIRST_RETURN_NANOS, deadline = now + WAIT_MAX_NANOS;
        synchronized (LOCK) {
            try {
                while (returns == start && (now = System.nanoTime()) < first) {
                    LOCK.wait(Math.max(1, (first - now) / 1_000_000));
                }
                long before;
                do {
                    before = returns;
                    LOCK.wait(QUIET_MILLIS);
                } while (returns != before && System.nanoTime() < deadline);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            liveAfterCollection = outstanding;
        }
    }

    /** Counts {@code bytes} handed out. */
    static void allocated(long bytes) {
        synchronized (LOCK) {
            outstanding += bytes;
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
}
