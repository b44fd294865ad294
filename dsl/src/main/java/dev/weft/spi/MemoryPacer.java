package dev.weft.spi;

/**
 * Paces {@link NativeMemory}'s buffers over {@value NativeMemory#SMALL} bytes with a budget in bytes
 * ({@link #budget}): see {@link NativeMemory} for what it bounds. Each buffer is tagged with the pacing collections
 * started before it was handed out. <em>Young</em> bytes are those of buffers handed out since the last pacing
 * collection that is done started, and not freed yet; a done collection has freed every buffer that was unreachable
 * when it started, so the other buffers outstanding were live then (or became unreachable since).
 *
 * <ul>
 *   <li>An allocation that brings the young bytes over the {@linkplain #budget budget} asks for a collection on a
 *       thread of its own and goes on.</li>
 *   <li>An allocation that would bring them over budget plus {@linkplain #margin margin} waits until the collection under
 *       way (or one it asks for) is done, and once more if the bytes handed out meanwhile still leave no room; then
 *       it goes on whatever the count, so live tensors beyond the budget cost collections, never a failure.</li>
 *   <li>A collection is done when {@link System#gc} has returned and this class has freed every buffer whose
 *       segment the collector found unreachable (its phantom reference is cleared by then, whichever collector
 *       runs), without waiting for the cleaner thread: so the bound does not depend on how soon a loaded machine
 *       schedules that thread.</li>
 * </ul>
 *
 * <p>{@link MappedBuffers} keeps its pool of freed large buffers within {@link #room()}: young and pooled bytes
 * together stay within budget plus margin.
 */
final class MemoryPacer {
    private static final Object LOCK = new Object();
    /** The default budget holds at least this many of the largest buffer. */
    private static final int LARGEST_PER_BUDGET = 4;
    /** {@link Setting#MEMORY_BUDGET}, read at the first allocation (0 until then), so that a bad value fails it. */
    private static long budget;
    /** Whether the budget was set (else the default grows with {@link #largest}). */
    private static boolean set;
    /** The largest buffer admitted so far. */
    private static long largest;
    private static long outstanding;
    /** Young bytes (see the class comment). */
    private static long young;
    /** Young bytes of buffers tagged {@link #started}: handed out since the last collection started. */
    private static long current;
    /** Pacing collections started: the tag of a buffer handed out now. */
    private static long started;
    /** Buffers tagged below this are not young: the collection that started at this tag is done. */
    private static long judged;
    /** Pacing collections asked for, and those done. */
    private static long requested;
    private static long finished;
    /** Threads waiting in {@link #admit} for room. */
    private static int waiting;
    private static Thread collector;

    private MemoryPacer() {
    }

    /**
     * Counts {@code bytes} about to be handed out, asking for a collection or waiting for one as the class comment
     * says.
     *
     * @return the buffer's tag, for {@link #released}
     */
    static long admit(long bytes) {
        synchronized (LOCK) {
            largest = Math.max(largest, bytes);
            if (young + bytes > budget() + margin()) {
                awaitRoom(bytes);
            }
            outstanding += bytes;
            young += bytes;
            current += bytes;
            if (young > budget()) {
                request();
            }
            return started;
        }
    }

    /** Counts {@code bytes} of a buffer tagged {@code tag} freed, by the collector or early. */
    static void released(long bytes, long tag) {
        synchronized (LOCK) {
            outstanding -= bytes;
            if (tag >= judged) {
                young -= bytes;
                if (tag == started) {
                    current -= bytes;
                }
            }
            if (waiting > 0) {
                LOCK.notifyAll();
            }
        }
    }

    /** The bytes the pool of freed large buffers may hold now: budget plus margin, less the young bytes. */
    static long room() {
        synchronized (LOCK) {
            return Math.max(0, budget() + margin() - young);
        }
    }

    /**
     * The budget in bytes: {@link Setting#MEMORY_BUDGET} when set, else its default or {@value #LARGEST_PER_BUDGET}
     * of the largest buffer admitted so far, whichever is more. Every buffer made between two collections is fresh
     * memory that faults its pages in (11-15 µs a page on a virtual machine), so a small default budget keeps a loop
     * of small results on recycled memory (a 256 KiB result a call: 0.74 ms a call at a 256 MiB budget, 0.027 ms at
     * 32 MiB), while a loop of large results still collects at most every {@value #LARGEST_PER_BUDGET} calls.
     *
     * @throws dev.weft.WeftException if {@link Setting#MEMORY_BUDGET} is set to a bad value
     */
    static long budget() {
        return budgetWith(0);
    }

    /** The budget once a buffer of {@code bytes} has been admitted. */
    static long budgetWith(long bytes) {
        synchronized (LOCK) {
            if (budget == 0) {
                budget = Setting.MEMORY_BUDGET.number();
                set = Setting.MEMORY_BUDGET.text() != null;
            }
            return set ? budget : Math.max(budget, LARGEST_PER_BUDGET * Math.max(bytes, largest));
        }
    }

    /** How far allocations go beyond the budget while the collection it asked for runs. */
    static long margin() {
        return budget() / 4;
    }

    /** Bytes handed out whose buffers are not freed yet. */
    static long outstandingBytes() {
        synchronized (LOCK) {
            return outstanding;
        }
    }

    /** Young bytes (see the class comment). */
    static long youngBytes() {
        synchronized (LOCK) {
            return young;
        }
    }

    /** Pacing collections done so far. */
    static long collections() {
        synchronized (LOCK) {
            return finished;
        }
    }

    /**
     * Waits until {@code bytes} more fit within budget plus margin, or until a collection that started after this
     * call is done: at most two collections (the one under way, whose start may predate young bytes, then one
     * asked for after it). The caller holds {@link #LOCK}.
     */
    private static void awaitRoom(long bytes) {
        waiting++;
        boolean interrupted = false;
        try {
            for (int round = 0; round < 2 && young + bytes > budget() + margin(); round++) {
                boolean asked = request();
                long target = requested;
                while (finished < target && young + bytes > budget() + margin()) {
                    interrupted |= waitUninterruptibly();
                }
                if (asked) {
                    break;
                }
            }
        } finally {
            waiting--;
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Asks the collector thread for a collection unless one is under way; the caller holds {@link #LOCK}. */
    private static boolean request() {
        if (requested > finished) {
            return false;
        }
        requested++;
        if (collector == null) {
            collector = Thread.ofPlatform().daemon().name("weft-memory-pacer").start(MemoryPacer::collectLoop);
        }
        LOCK.notifyAll();
        return true;
    }

    private static void collectLoop() {
        while (true) {
            long target;
            synchronized (LOCK) {
                while (requested == finished) {
                    waitUninterruptibly();
                }
                target = requested;
                started++;
                current = 0;
            }
            System.gc();
            Leases.releaseUnreachable();
            synchronized (LOCK) {
                judged = started;
                young = current;
                finished = target;
                LOCK.notifyAll();
            }
            MappedBuffers.collected();
        }
    }

    /** Waits on {@link #LOCK}, which the caller holds; returns whether an interrupt ended the wait (and cleared). */
    private static boolean waitUninterruptibly() {
        try {
            LOCK.wait();
            return false;
        } catch (InterruptedException e) {
            return true;
        }
    }
}
