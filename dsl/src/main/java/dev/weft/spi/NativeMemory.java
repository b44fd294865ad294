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
 *       MADV_HUGEPAGE}, kept in a pool when it is freed and handed out again for the next buffer of its size class (a
 *       multiple of 2 MiB): a pooled buffer costs no page faults to reuse. The pool is bounded with the budget below,
 *       and what leaves it is unmapped, so that its memory goes back to the system.</li>
 *   <li>Otherwise: {@code malloc}. Its memory goes back to the C library's allocator, which reuses it but
 *       may keep it from the system.</li>
 * </ul>
 *
 * <p>Since off-heap buffers barely grow the Java heap, the collector alone may run too rarely to free them, so
 * buffers over {@value #SMALL} bytes are paced by a budget in bytes: {@code weft.memory.budget} system
 * property or {@code WEFT_MEMORY_BUDGET} environment variable (bytes, or with a suffix {@code k}, {@code m},
 * {@code g}, as {@code -XX:MaxDirectMemorySize}), at least 1 MiB; unset, 64 MiB or four times the largest such
 * buffer made so far, whichever is more (small, so that a loop's buffers come back before it has faulted in much
 * fresh memory; growing, so that a loop of large results is not collected every call). The margin is a quarter of
 * the budget.
 * Weft counts the <em>young</em> bytes: buffers handed out since its last collection started and not freed yet,
 * live or dropped. When they exceed the budget, an allocation asks for a collection ({@link System#gc}, as {@code
 * java.nio} does for direct buffers) on a thread of its own and goes on; an allocation that would take them past
 * budget plus margin waits until a collection is done: {@code System.gc()} has returned and every buffer it found
 * unreachable is freed. What is bounded: young bytes plus the bytes of the pool stay within budget plus margin
 * (plus the allocation under way and, on other threads, one allocation each). So the memory of these buffers stays
 * within the bytes that were live when the last collection started, plus budget plus margin; tensors dropped before
 * a collection starts are freed by it, whatever the machine's load. Live tensors beyond the budget are allowed: each
 * budget's worth of allocation then costs a collection. The C library may keep freed middle-sized buffers for reuse.
 * With {@code -XX:+DisableExplicitGC}, {@code System.gc()} does nothing and only the JVM's own collections free
 * buffers: then nothing is bounded.
 */
public final class NativeMemory {
    static final long SMALL = 1024;
    static final long SLAB = 64 * 1024;
    static final long HUGE = 2L << 20;
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
