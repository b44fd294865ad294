package dev.weft.spi;

import java.lang.foreign.MemorySegment;
import java.lang.ref.PhantomReference;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The release of each buffer {@link NativeMemory} handed out (but slab-carved ones), by the buffer's address, so
 * that {@link NativeMemory#free} can release one at once. A release runs once: whichever comes first of the
 * cleaner (its segment became unreachable), a pacing collection's {@link #releaseUnreachable} and an explicit free.
 */
final class Leases {
    private static final Map<Long, Lease> BY_ADDRESS = new ConcurrentHashMap<>();

    private Leases() {
    }

    /** The release of one buffer; also the cleanup action of its segment. */
    static final class Lease implements Consumer<MemorySegment> {
        private final long address;
        private final Runnable release;
        private final AtomicBoolean done = new AtomicBoolean();
        /** Cleared by the collector once the segment's scope is unreachable; null until {@link #watch}. */
        private volatile PhantomReference<Object> watch;

        private Lease(long address, Runnable release) {
            this.address = address;
            this.release = release;
        }

        @Override
        public void accept(MemorySegment ignored) {
            run();
        }

        /** Watches {@code scope}, the scope of the buffer's segment (shared by every segment derived from it). */
        void watch(MemorySegment.Scope scope) {
            watch = new PhantomReference<>(scope, null);
        }

        void run() {
            if (done.compareAndSet(false, true)) {
                BY_ADDRESS.remove(address, this);
                release.run();
            }
        }
    }

    /** Registers {@code release} as the release of the buffer at {@code address}; the lease is its cleanup. */
    static Lease open(long address, Runnable release) {
        Lease lease = new Lease(address, release);
        BY_ADDRESS.put(address, lease);
        return lease;
    }

    /**
     * Runs the release of every buffer whose segment the collector has found unreachable, without waiting for the
     * cleaner thread: right after {@link System#gc} returns, the phantom reference of every scope it found
     * unreachable is cleared.
     */
    static void releaseUnreachable() {
        for (Lease lease : BY_ADDRESS.values()) {
            PhantomReference<Object> w = lease.watch;
            if (w != null && w.refersTo(null)) {
                lease.run();
            }
        }
    }

    /** Runs the release of the buffer at {@code address} unless it ran already; false if there is none. */
    static boolean release(long address) {
        Lease lease = BY_ADDRESS.get(address);
        if (lease == null) {
            return false;
        }
        lease.run();
        return true;
    }
}
