package dev.weft.backends.cpu.exec;

import java.lang.foreign.MemorySegment;

/**
 * A buffer during one run, shared by every value that aliases it ({@code reshape} results, loop carries,
 * branch results). {@link #refs} counts the frame slots and loop holds that reference it; a {@link Kind#TEMP}
 * buffer whose count drops to zero returns to the frame's pool.
 */
final class Buffer {
    enum Kind {
        /** Allocated by this run; pooled when dead unless it escaped. */
        TEMP,
        /** A function argument or constant: never written, freed or handed out without a copy. */
        READ_ONLY,
        /**
         * A donated ({@code Tensor.donate()}) argument: written over and, once dead, pooled like a
         * temporary (when the program has buffers of its size); the run frees it unless a result or the pool took it.
         */
        DONATED,
        /** Produced by a custom call: never pooled. */
        EXTERNAL,
        /** The ordering token. */
        TOKEN
    }

    /**
     * The ordering token's buffer, shared by every run: a token or read-only buffer is never pooled, written or
     * handed out, so its counters are never read and may be shared across threads.
     */
    static final Buffer TOKEN = new Buffer(CustomCallRegistry.TOKEN, Kind.TOKEN, -1);

    final MemorySegment segment;
    final Kind kind;
    /** Index of the pool this buffer returns to ({@code -1} when it never does). */
    final int sizeClass;
    int refs;
    /** Set when the buffer left the executor's control (given to a custom call or returned to the caller). */
    boolean escaped;

    Buffer(MemorySegment segment, Kind kind, int sizeClass) {
        this.segment = segment;
        this.kind = kind;
        this.sizeClass = sizeClass;
    }

    /** True if nothing else can observe this buffer, so an op may overwrite it. */
    boolean isExclusiveTemp() {
        return (kind == Kind.TEMP || kind == Kind.DONATED) && !escaped && refs == 1;
    }

    boolean isPoolable() {
        return (kind == Kind.TEMP || kind == Kind.DONATED) && sizeClass >= 0 && !escaped;
    }
}
