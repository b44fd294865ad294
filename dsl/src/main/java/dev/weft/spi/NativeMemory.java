package dev.weft.spi;

import dev.weft.WeftException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Off-heap memory for tensor buffers: 64-byte aligned, freed by the garbage collector once no segment of it is
 * reachable, or earlier by {@link #free} (a closing {@code Weft.scope()}, a donated argument).
 *
 * <ul>
 *   <li>Up to {@value #SMALL} bytes: carved from a {@value #SLAB}-byte slab of the calling thread (a pointer
 *       bump instead of a native allocation and a cleaner per tensor).</li>
 *   <li>From {@value #HUGE} bytes, on Linux: an anonymous {@code mmap} aligned to 2 MiB and advised {@code
 *       MADV_HUGEPAGE}, kept in a pool when the garbage collector frees it and handed out again for the next buffer of
 *       its size class (a multiple of 2 MiB). A pooled buffer costs no page faults to reuse (a fresh 64 MiB one: 10–30
 *       ms to fill on this VM, and up to 0.6 s where the guest had never touched the memory). The pool holds at most
 *       what one pacing collection can find dead (the budget less the live bytes, below), but at least {@link
 *       #POOL_BYTES} bytes ({@value #POOL_PROPERTY} system property or {@value #POOL_ENV} environment variable, in MiB;
 *       default {@value #POOL_DEFAULT_MIB}), or two buffers of the size just freed if that is more; a buffer freed
 *       beyond that displaces the longest pooled ones. At each pacing collection, the buffers pooled before the
 *       previous one that no allocation took since are released: so a loop that drops large results reuses them from
 *       one collection to the next without page faults, and a program that recycles little keeps little. Released and
 *       displaced buffers are unmapped, so that their memory goes back to the system.</li>
 *   <li>Otherwise: {@code malloc}. Its memory goes back to the C library's allocator, which reuses it but
 *       may keep it from the system.</li>
 * </ul>
 *
 * <p>Since off-heap buffers barely grow the Java heap, the collector alone may run too rarely to free them, so the
 * bytes of buffers not carved from slabs outstanding are paced, like a heap: their budget is twice the bytes live
 * after the previous pacing collection, and at least a floor of {@value #PACING_MIN_MIB} MiB, which grows fourfold
 * when collections come more often than every five times their own duration, and shrinks back when they come
 * rarely (as G1 sizes its heap to bound the time it spends collecting). The allocation that leaves less
 * room in the budget than its own size asks for a collection ({@link System#gc}, as {@code java.nio} does for
 * direct buffers) on a thread of its own and goes on without waiting; the buffers that collection finds dead are
 * back in the pool before the budget runs out, at the collection's young pause. An allocation that would exceed the
 * budget and that the pool cannot serve waits until a collection has returned buffers (its young pause and the
 * cleaners, not its whole concurrent cycle). This bounds the memory held by dropped tensors: a loop that drops
 * buffers keeps at most about the budget of them outstanding, plus the pool. The floor is high because each
 * collection costs the running program a few milliseconds of pauses and of a collector thread on its cores: at
 * 256 MiB a loop that drops an 8 MiB result per call pays for one every 32 calls instead of one every 8 calls.
 */
public final class NativeMemory {
    static final long SMALL = 1024;
    static final long SLAB = 64 * 1024;
    static final long HUGE = 2L << 20;
    static final long PACING_MIN_MIB = 256;
    static final String POOL_PROPERTY = "weft.memory.pool";
    static final String POOL_ENV = "WEFT_MEMORY_POOL";
    static final long POOL_DEFAULT_MIB = 64;
    /** The least limit of the pool of freed large buffers (see above). */
    static final long POOL_BYTES = Settings.wholeNumber(POOL_PROPERTY, POOL_ENV, 0, POOL_DEFAULT_MIB) << 20;
    private static final long ALIGN = 64;

    private static final ThreadLocal<Slab> SLABS = ThreadLocal.withInitial(Slab::new);

    private NativeMemory() {
    }

    /**
     * A fresh zeroed segment of {@code bytes} bytes (at least one).
     *
     * @throws WeftException naming the user's line and the bytes asked for when the memory cannot be had
     */
    public static MemorySegment allocate(long bytes) {
        return allocate(bytes, true, null);
    }

    /** {@link #allocate(long)} for a tensor of {@code aval}, which a failure names too. */
    public static MemorySegment allocate(Aval aval) {
        return allocate(aval.byteSize(), true, aval);
    }

    /**
     * A segment of {@code bytes} bytes (at least one) whose contents are unspecified: for a buffer the caller
     * overwrites completely before reading it, which saves zeroing a reused one.
     */
    public static MemorySegment allocateUninitialized(long bytes) {
        return allocate(bytes, false, null);
    }

    private static MemorySegment allocate(long bytes, boolean zeroed, Aval aval) {
        long size = Math.max(1, bytes);
        if (size <= SMALL) {
            return SLABS.get().take(size);
        }
        try {
            if (size >= HUGE && MappedBuffers.AVAILABLE) {
                return MappedBuffers.allocate(size, zeroed);
            }
            if (MemoryPacer.overBudget(size)) {
                MemoryPacer.awaitCollection();
            }
            return MallocBuffers.allocate(size, ALIGN, zeroed);
        } catch (OutOfMemoryError e) {
            throw new WeftException(SourceLocation.capture(), String.format("out of memory: cannot allocate %s%d"
                    + " bytes (%.1f GiB) of off-heap memory (%s); use smaller tensors or split the data over more"
                    + " ranks", aval == null ? "" : aval + ", ", size, size / (double) (1L << 30), e.getMessage()), e);
        }
    }

    /**
     * Frees the buffer that {@code segment} starts now rather than when the garbage collector finds it unreachable:
     * a large one goes back to the pool, a middle-sized one to the C library. Slab-carved buffers (up to
     * {@value #SMALL} bytes) and segments this class did not hand out are left to the collector. The caller
     * guarantees that nothing reads or writes the buffer afterwards (a tensor marks itself freed first).
     *
     * @return whether a buffer was freed
     */
    public static boolean free(MemorySegment segment) {
        return segment.byteSize() > SMALL && Leases.release(segment.address());
    }

    /**
     * Bytes of buffers over {@value #SMALL} bytes handed out and not yet freed (by the collector or {@link #free});
     * pooled large buffers do not count.
     */
    public static long outstandingBytes() {
        return MemoryPacer.outstandingBytes();
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
