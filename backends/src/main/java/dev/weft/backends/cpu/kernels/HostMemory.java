package dev.weft.backends.cpu.kernels;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Off-heap buffers for tensors, freed by the garbage collector once unreachable, zero-filled and 64-byte aligned.
 * A buffer of up to {@value #SMALL} bytes is carved from a {@value #SLAB}-byte slab of its thread, so small
 * tensors cost a bump of a pointer instead of an arena, a cleaner and a native allocation each; a slab is freed
 * when none of its buffers is reachable.
 */
public final class HostMemory {
    static final long SMALL = 1024;
    static final long SLAB = 64 * 1024;
    private static final long ALIGN = 64;

    private static final ThreadLocal<Slab> SLABS = ThreadLocal.withInitial(Slab::new);

    private HostMemory() {
    }

    /** A fresh zeroed segment of {@code bytes} bytes (at least one). */
    public static MemorySegment allocate(long bytes) {
        long size = Math.max(1, bytes);
        if (size > SMALL) {
            return Arena.ofAuto().allocate(size, ALIGN);
        }
        return SLABS.get().take(size);
    }

    private static final class Slab {
        private MemorySegment slab = MemorySegment.NULL;
        private long next;

        MemorySegment take(long size) {
            if (next + size > slab.byteSize()) {
                slab = Arena.ofAuto().allocate(SLAB, ALIGN);
                next = 0;
            }
            MemorySegment s = slab.asSlice(next, size);
            next += (size + ALIGN - 1) & -ALIGN;
            return s;
        }
    }
}
