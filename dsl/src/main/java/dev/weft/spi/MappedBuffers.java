package dev.weft.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Large buffers of {@link NativeMemory} on Linux: 2 MiB-aligned anonymous mappings, advised {@code MADV_HUGEPAGE} while
 * the pacing budget has its least floor (see {@link #map}), recycled by size class (the size rounded up to 2 MiB) when
 * the garbage collector frees their segment or {@link NativeMemory#free} frees it earlier, and paced: see {@link
 * NativeMemory}. A freed mapping is pooled and displaces the longest pooled ones beyond the pool's limit: what one
 * pacing collection can find dead (the budget less the live bytes), at least {@link NativeMemory#POOL_BYTES}, or two
 * mappings of its own size if that is more. At each pacing collection that this class asks for, the mappings pooled
 * before the previous one, which no allocation took since, are unmapped: so a loop reuses what one collection returns
 * until the next, however the budget grows, and a program that recycles little keeps little. Unmapped memory goes back
 * to the system.
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

    /** A pooled mapping and the pacing collections this class had asked for when it was pooled. */
    private record Pooled(Mapping mapping, long since) {
    }

    private static final Object LOCK = new Object();
    /** Pooled mappings, the most recently freed first. */
    private static final ArrayDeque<Pooled> FREE = new ArrayDeque<>();
    private static long freeBytes;
    private static long mappings;
    /** Pacing collections asked for by this class's allocations. */
    private static long collections;

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
                retireIdle();
            }
            m = take(sizeClass);
        }
        boolean reused = m != null;
        if (m == null) {
            m = map(sizeClass);
        }
        if (MemoryPacer.allocated(sizeClass)) {
            retireIdle();
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

    /** At a pacing collection: unmaps the mappings pooled before the previous one, which no allocation took since. */
    private static void retireIdle() {
        List<Mapping> idle = new ArrayList<>();
        synchronized (LOCK) {
            collections++;
            while (!FREE.isEmpty() && FREE.peekLast().since() < collections - 1) {
                Mapping oldest = FREE.removeLast().mapping();
                freeBytes -= oldest.sizeClass();
                idle.add(oldest);
            }
        }
        idle.forEach(MappedBuffers::unmap);
    }

    private static Mapping take(long sizeClass) {
        synchronized (LOCK) {
            for (Iterator<Pooled> it = FREE.iterator(); it.hasNext(); ) {
                Mapping m = it.next().mapping();
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
        long limit = Math.max(Math.max(NativeMemory.POOL_BYTES, MemoryPacer.headroom()), 2 * m.sizeClass());
        synchronized (LOCK) {
            FREE.push(new Pooled(m, collections));
            freeBytes += m.sizeClass();
            while (freeBytes > limit) {
                Mapping oldest = FREE.removeLast().mapping();
                freeBytes -= oldest.sizeClass();
                unmapped.add(oldest);
            }
        }
        MemoryPacer.released(m.sizeClass());
        unmapped.forEach(MappedBuffers::unmap);
    }

    /**
     * A fresh mapping of {@code sizeClass} bytes, 2 MiB-aligned and advised {@code MADV_HUGEPAGE} unless the pacing
     * budget's floor has grown. Huge pages cost fewer TLB misses in memory-bound loops (an allreduce+scale loop over 8
     * MiB on 2 ranks: 0.73–0.75× C's time per step with them, 0.83–0.84× without) but may be dear to fault in: on a
     * virtual machine whose host backs guest memory on first use (and takes back the large free blocks huge pages come
     * from), a fresh 64 MiB buffer took 360–610 ms to fill, against ~30 ms with 4 KiB pages. The memory a grown floor
     * adds only spaces out collections, and a loop that grows it maps ~0.75 GiB at once: with huge pages, the first 40
     * calls of a loop dropping 64 MiB results averaged 5.7–6.3× a warm call, without 2.5–2.9×.
     */
    private static Mapping map(long sizeClass) {
        long length = sizeClass + PAGE;
        try {
            MemorySegment base = (MemorySegment) Libc.MMAP.invokeExact(MemorySegment.NULL, length,
                    PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (base.address() == -1L) {
                throw new OutOfMemoryError("mmap of " + length + " bytes failed");
            }
            long start = (base.address() + PAGE - 1) & -PAGE;
            if (MemoryPacer.floor() == MemoryPacer.FLOOR) {
                int ignored = (int) Libc.MADVISE.invokeExact(MemorySegment.ofAddress(start), sizeClass,
                        MADV_HUGEPAGE);
            }
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
