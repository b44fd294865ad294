package dev.weft.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Large buffers of {@link NativeMemory} on Linux: 2 MiB-aligned anonymous mappings advised {@code MADV_HUGEPAGE},
 * recycled by size class (the size rounded up to 2 MiB) when the garbage collector frees their segment or {@link
 * NativeMemory#free} frees it earlier, and paced: see {@link NativeMemory}. A freed mapping is pooled, and the pool
 * holds at most {@link MemoryPacer#room()}: the budget plus margin less the young bytes, so that young and pooled
 * bytes together stay within them; the longest pooled mappings give way first, when a buffer is freed or a fresh
 * mapping is made. After each pacing collection, the mappings pooled before the previous one, which no allocation
 * took since, are unmapped: so a loop reuses what one collection returns until the next, and a program that
 * recycles little keeps little. Unmapped memory goes back to the system.
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

    /** A pooled mapping and the pacing collections done when it was pooled. */
    private record Pooled(Mapping mapping, long since) {
    }

    private static final Object LOCK = new Object();
    /** Pooled mappings, the most recently freed first. */
    private static final ArrayDeque<Pooled> FREE = new ArrayDeque<>();
    private static long freeBytes;
    private static long mappings;
    /** Pacing collections done. */
    private static long collections;

    static {
        AVAILABLE = Libc.MMAP != null && Libc.MADVISE != null && Libc.MUNMAP != null;
    }

    private MappedBuffers() {
    }

    /** A segment of {@code size} bytes; zero-filled if {@code zeroed}, else with unspecified contents. */
    static MemorySegment allocate(long size, boolean zeroed) {
        long sizeClass = (size + PAGE - 1) & -PAGE;
        long tag = MemoryPacer.admit(sizeClass);
        Mapping m = take(sizeClass);
        boolean reused = m != null;
        if (m == null) {
            trim();
            try {
                m = map(sizeClass);
            } catch (RuntimeException | OutOfMemoryError e) {
                MemoryPacer.released(sizeClass, tag);
                throw e;
            }
        }
        Mapping owned = m;
        Leases.Lease lease = Leases.open(m.start(), () -> release(owned, tag));
        MemorySegment segment = MemorySegment.ofAddress(m.start()).reinterpret(size, Arena.ofAuto(), lease);
        lease.watch(segment.scope());
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

    /**
     * After a pacing collection: unmaps the mappings pooled before the previous one, which no allocation took since,
     * and those beyond the pool's limit.
     */
    static void collected() {
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
        trim();
    }

    /** Unmaps the longest pooled mappings until the pool fits within {@link MemoryPacer#room()}. */
    private static void trim() {
        List<Mapping> unmapped;
        synchronized (LOCK) {
            unmapped = overflow();
        }
        unmapped.forEach(MappedBuffers::unmap);
    }

    /**
     * Takes the longest pooled mappings out of the pool until it fits within {@link MemoryPacer#room()}, and returns
     * them for unmapping outside the lock. The caller holds {@link #LOCK}, and the room is read under it: a limit
     * read before taking the lock may be stale by every release another thread made meanwhile (a cleaner thread's
     * burst while this one waits for the CPU), and trimming to it would empty the pool of buffers just freed.
     * Lock order: this class's lock, then {@link MemoryPacer}'s, never the reverse.
     */
    private static List<Mapping> overflow() {
        long limit = MemoryPacer.room();
        List<Mapping> unmapped = new ArrayList<>();
        while (freeBytes > limit) {
            Mapping oldest = FREE.removeLast().mapping();
            freeBytes -= oldest.sizeClass();
            unmapped.add(oldest);
        }
        return unmapped;
    }

    /**
     * Young plus pooled bytes, read together: a release moves a buffer's bytes from one to the other under this
     * class's lock, so a sum of two separate reads could count it twice.
     */
    static long youngAndPooledBytes() {
        synchronized (LOCK) {
            return MemoryPacer.youngBytes() + freeBytes;
        }
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

    /**
     * Runs once the segment of {@code m}, tagged {@code tag} by the pacer, is unreachable (on a cleaner or the pacer's
     * thread) or {@link NativeMemory#free}d. The mapping is pooled before the pacer hears of it, so that an allocation
     * waiting for room finds it; pooling, the pacer's count and the trim happen under one lock, so that the pool's
     * bytes and the young ones always move together.
     */
    private static void release(Mapping m, long tag) {
        List<Mapping> unmapped;
        synchronized (LOCK) {
            FREE.push(new Pooled(m, collections));
            freeBytes += m.sizeClass();
            MemoryPacer.released(m.sizeClass(), tag);
            unmapped = overflow();
        }
        unmapped.forEach(MappedBuffers::unmap);
    }

    /**
     * A fresh mapping of {@code sizeClass} bytes, 2 MiB-aligned and advised {@code MADV_HUGEPAGE}: huge pages cost
     * fewer TLB misses in memory-bound loops (an allreduce+scale loop over 8 MiB on 2 ranks: 0.73–0.75× C's time per
     * step with them, 0.83–0.84× without), though on a virtual machine whose host backs guest memory on first use a
     * fresh one may be dear to fault in; the pool keeps a loop from mapping afresh once its first collection is done.
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
            int ignored = (int) Libc.MADVISE.invokeExact(MemorySegment.ofAddress(start), sizeClass, MADV_HUGEPAGE);
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
