package dev.weft.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Middle-sized buffers of {@link NativeMemory}: from the C library's {@code malloc}, 64-byte aligned, paced, and
 * given back with {@code free} by whichever comes first of the garbage collector and {@link NativeMemory#free}.
 */
final class MallocBuffers {
    private static final MethodHandle MALLOC;
    private static final MethodHandle FREE;

    static {
        Linker linker = Linker.nativeLinker();
        MALLOC = linker.downcallHandle(linker.defaultLookup().find("malloc").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        FREE = linker.downcallHandle(linker.defaultLookup().find("free").orElseThrow(),
                FunctionDescriptor.ofVoid(ValueLayout.ADDRESS));
    }

    private MallocBuffers() {
    }

    /** A segment of {@code size} bytes aligned to {@code align}; zero-filled if {@code zeroed}. */
    static MemorySegment allocate(long size, long align, boolean zeroed) {
        long raw;
        try {
            raw = ((MemorySegment) MALLOC.invokeExact(size + align - 1)).address();
        } catch (Throwable t) {
            throw new IllegalStateException("malloc of " + size + " bytes failed", t);
        }
        if (raw == 0) {
            throw new OutOfMemoryError("malloc of " + (size + align - 1) + " bytes failed");
        }
        long start = (raw + align - 1) & -align;
        MemoryPacer.allocated(size);
        Leases.Lease lease = Leases.open(start, () -> {
            free(raw);
            MemoryPacer.released(size);
        });
        MemorySegment segment = MemorySegment.ofAddress(start).reinterpret(size, Arena.ofAuto(), lease);
        if (zeroed) {
            segment.fill((byte) 0);
        }
        return segment;
    }

    private static void free(long raw) {
        try {
            FREE.invokeExact(MemorySegment.ofAddress(raw));
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
