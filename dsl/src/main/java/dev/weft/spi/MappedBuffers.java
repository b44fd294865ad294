package dev.weft.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Large buffers of {@link NativeMemory} on Linux: 2 MiB-aligned anonymous mappings advised
 * {@code MADV_HUGEPAGE}, recycled by size class (the size rounded up to 2 MiB) when the garbage collector frees
 * their segment or {@link NativeMemory#free} frees it earlier, and paced: see {@link NativeMemory}. A freed mapping
 * is pooled and displaces the longest pooled ones beyond the pool's limit, or beyond two mappings of its own size
 * if that is more; the displaced ones are unmapped, so that their memory goes back to the system. At each pacing
 * collection that this class asks for, the limit becomes the bytes handed out since the previous one (what a loop
 * reuses per collection), kept between {@link NativeMemory#POOL_BYTES} and what one collection can find dead.
 */
final class MappedBuffers {
    static final boolean AVAILABLE;

    private static final long PAGE = 2L << 20;
    private static final int PROT_READ_WRITE = 0x3;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x22;
    private static final int MADV_HUGEPAGE = 14;

    /** {@code base}/{@code length}: the whole mapping (for munmap); {@code start}: its 2 MiB-aligned part. */
    private record Mapping(long base, long length, long start, long sizeClass) {
    }

    private static final Object LOCK = new Object();
    /** Pooled mappings, the most recently freed first. */
    private static final ArrayDeque<Mapping> FREE = new ArrayDeque<>();
    private static long freeBytes;
    /** Bytes of mappings handed out since the last pacing collection that this class asked for. */
    private static long handedOut;
    private static long mappings;
    /** The most bytes pooled, unless two mappings of the size just freed need more. */
    private static long poolLimit = NativeMemory.POOL_BYTES;

    static {
        AVAILABLE = Libc.MMAP != null && Libc.MADVISE != null && Libc.MUNMAP != null;
    }

    private MappedBuffers() {
    }

    /** A segment of {@code size} bytes; zero-filled if {@code zeroed}, else with unspecified contents. */
    static MemorySegment allocate(long size, boolean zeroed) {
        long sizeClass = (size + PAGE - 1) & -PAGE;
        Mapping m = take(sizeClass);
        if (m == null && MemoryPacer.overBudget(sizeClass)) {
            if (MemoryPacer.awaitCollection()) {
                adaptPoolLimit();
            }
            m = take(sizeClass);
        }
        boolean reused = m != null;
        if (m == null) {
            m = map(sizeClass);
        }
        synchronized (LOCK) {
            handedOut += sizeClass;
        }
        if (MemoryPacer.allocated(sizeClass)) {
            adaptPoolLimit();
        }
        Mapping owned = m;
        MemorySegment segment = MemorySegment.ofAddress(m.start()).reinterpret(size, Arena.ofAuto(),
                Leases.open(m.start(), () -> release(owned)));
        if (zeroed && reused) {
            segment.fill((byte) 0);
        }
        return segment;
    }

    /** Bytes of mappings pooled for reuse. */
    static long pooledBytes() {
        synchronized (LOCK) {
            return freeBytes;
        }
    }

    /** Mappings made so far (each one page-faults its memory in on first use). */
    static long mappings() {
        synchronized (LOCK) {
            return mappings;
        }
    }

    /** At a pacing collection: the pool may hold what large buffers took since the previous one. */
    private static void adaptPoolLimit() {
        synchronized (LOCK) {
            poolLimit = Math.clamp(handedOut, NativeMemory.POOL_BYTES,
                    Math.max(NativeMemory.POOL_BYTES, MemoryPacer.headroom()));
            handedOut = 0;
        }
    }

    private static Mapping take(long sizeClass) {
        synchronized (LOCK) {
            for (Iterator<Mapping> it = FREE.iterator(); it.hasNext(); ) {
                Mapping m = it.next();
                if (m.sizeClass() == sizeClass) {
                    it.remove();
                    freeBytes -= sizeClass;
                    return m;
                }
            }
            return null;
        }
    }

    /** Runs once the segment of {@code m} is unreachable (on a cleaner thread) or {@link NativeMemory#free}d. */
    private static void release(Mapping m) {
        List<Mapping> unmapped = new ArrayList<>(1);
        synchronized (LOCK) {
            FREE.push(m);
            freeBytes += m.sizeClass();
            long limit = Math.max(poolLimit, 2 * m.sizeClass());
            while (freeBytes > limit) {
                Mapping oldest = FREE.removeLast();
                freeBytes -= oldest.sizeClass();
                unmapped.add(oldest);
            }
        }
        MemoryPacer.released(m.sizeClass());
        unmapped.forEach(MappedBuffers::unmap);
    }

    private static Mapping map(long sizeClass) {
        long length = sizeClass + PAGE;
        try {
            MemorySegment base = (MemorySegment) Libc.MMAP.invokeExact(MemorySegment.NULL, length,
                    PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (base.address() == -1L) {
                throw new OutOfMemoryError("mmap of " + length + " bytes failed");
            }
            long start = (base.address() + PAGE - 1) & -PAGE;
            int ignored = (int) Libc.MADVISE.invokeExact(MemorySegment.ofAddress(start), sizeClass,
                    MADV_HUGEPAGE);
            synchronized (LOCK) {
                mappings++;
            }
            return new Mapping(base.address(), length, start, sizeClass);
        } catch (OutOfMemoryError e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("mmap of " + length + " bytes failed", t);
        }
    }

    private static void unmap(Mapping m) {
        try {
            int ignored = (int) Libc.MUNMAP.invokeExact(MemorySegment.ofAddress(m.base()), m.length());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
