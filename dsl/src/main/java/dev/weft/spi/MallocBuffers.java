package dev.weft.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Middle-sized buffers of {@link NativeMemory}: from the C library's {@code malloc}, 64-byte aligned, paced, and
 * given back with {@code free} by whichever comes first of the garbage collector and {@link NativeMemory#free}.
 */
final class MallocBuffers {
    private MallocBuffers() {
    }

    /** A segment of {@code size} bytes aligned to {@code align}; zero-filled if {@code zeroed}. */
    static MemorySegment allocate(long size, long align, boolean zeroed) {
        long tag = MemoryPacer.admit(size);
        long raw;
        try {
            raw = ((MemorySegment) Libc.MALLOC.invokeExact(size + align - 1)).address();
        } catch (Throwable t) {
            MemoryPacer.released(size, tag);
            throw new IllegalStateException("malloc of " + size + " bytes failed", t);
        }
        if (raw == 0) {
            MemoryPacer.released(size, tag);
            throw new OutOfMemoryError("malloc of " + (size + align - 1) + " bytes failed");
        }
        long start = (raw + align - 1) & -align;
        Leases.Lease lease = Leases.open(start, () -> {
            free(raw);
            MemoryPacer.released(size, tag);
        });
        MemorySegment segment = MemorySegment.ofAddress(start).reinterpret(size, Arena.ofAuto(), lease);
        lease.watch(segment.scope());
        if (zeroed) {
            segment.fill((byte) 0);
        }
        return segment;
    }

    private static void free(long raw) {
        try {
            Libc.FREE.invokeExact(MemorySegment.ofAddress(raw));
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
