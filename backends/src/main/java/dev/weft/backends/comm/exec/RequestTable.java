package dev.weft.backends.comm.exec;

import dev.weft.WeftException;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.spi.SourceLocation;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * Pending requests by id: a request travels through a program as an i64 scalar holding its id, and the one
 * {@code wait} that consumes it takes it out of the table.
 */
final class RequestTable {
    /**
     * A request, the buffer a receive or nonblocking collective fills (or null), and for a compiled nonblocking
     * collective the buffers its result comes from (else null).
     */
    record Pending(PendingRequest request, MemorySegment buffer, ResultBuffers buffers) {
        Pending(PendingRequest request, MemorySegment buffer) {
            this(request, buffer, null);
        }
    }

    private static final AtomicLong NEXT = new AtomicLong(1);
    private static final Map<Long, Pending> PENDING = new ConcurrentHashMap<>();

    private RequestTable() {
    }

    /**
     * Registers a request (with the buffer a receive fills, or null), writes its id into the i64 scalar
     * {@code idOut} and returns {@code idOut}.
     */
    static MemorySegment put(PendingRequest r, MemorySegment buffer, MemorySegment idOut) {
        return put(new Pending(r, buffer), idOut);
    }

    /** {@link #put(PendingRequest, MemorySegment, MemorySegment)} of a pending request with its result buffers. */
    static MemorySegment put(Pending p, MemorySegment idOut) {
        long id = NEXT.getAndIncrement();
        PENDING.put(id, p);
        idOut.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, id);
        return idOut;
    }

    /** Replaces the request whose id {@code id} holds by {@code f} of it (the schedule check adds its envelope). */
    static void wrap(MemorySegment id, UnaryOperator<PendingRequest> f) {
        PENDING.computeIfPresent(id.get(ValueLayout.JAVA_LONG_UNALIGNED, 0),
                (key, p) -> new Pending(f.apply(p.request()), p.buffer(), p.buffers()));
    }

    static Pending take(MemorySegment id, SourceLocation where) {
        long key = id.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        Pending p = PENDING.remove(key);
        if (p == null) {
            throw new WeftException(where, "request #" + key + " is unknown or was already waited");
        }
        return p;
    }
}
