package dev.weft.backends.gpu.exec;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Device buffers kept for reuse by size class, so a steady-state run allocates nothing. Sizes round up to a power
 * of two of at least {@value #MIN_BYTES} bytes up to 1 MiB, then to a multiple of 2 MiB. Reuse is safe without
 * synchronisation because all work of an executable is ordered on one stream. Not thread-safe: one executable
 * runs one call at a time.
 */
public final class BufferPool {
    static final long MIN_BYTES = 256;
    private static final long LARGE = 1 << 20, LARGE_STEP = 2 << 20;

    /** Where fresh buffers come from and where {@link #close} returns them. */
    public interface Allocator {
        DeviceBuffer allocate(long bytes);

        void free(DeviceBuffer buffer);
    }

    private final Allocator allocator;
    private final Map<Long, ArrayDeque<DeviceBuffer>> free = new HashMap<>();
    private final List<DeviceBuffer> allocated = new ArrayList<>();
    private final List<DeviceBuffer> held = new ArrayList<>();
    private boolean holding;

    public BufferPool(Allocator allocator) {
        this.allocator = allocator;
    }

    /** The size class of a request of {@code bytes} bytes. */
    public static long sizeClass(long bytes) {
        if (bytes <= MIN_BYTES) {
            return MIN_BYTES;
        }
        if (bytes <= LARGE) {
            return Long.highestOneBit(bytes - 1) << 1;
        }
        return (bytes + LARGE_STEP - 1) / LARGE_STEP * LARGE_STEP;
    }

    /** A buffer of at least {@code bytes} bytes (its {@code bytes()} is the size class). */
    public DeviceBuffer take(long bytes) {
        long size = sizeClass(bytes);
        ArrayDeque<DeviceBuffer> q = free.get(size);
        if (q != null && !q.isEmpty()) {
            return q.pop();
        }
        DeviceBuffer b = allocator.allocate(size);
        allocated.add(b);
        return b;
    }

    /** Returns a buffer from {@link #take} for reuse (after {@link #resumeReuse} if reuse is paused). */
    public void give(DeviceBuffer b) {
        if (holding) {
            held.add(b);
        } else {
            free.computeIfAbsent(b.bytes(), k -> new ArrayDeque<>()).push(b);
        }
    }

    /**
     * Until {@link #resumeReuse}, keeps the buffers given back aside: for work queued later that will run after
     * work queued now (a batched NCCL group), which must not find its buffers reused.
     */
    public void pauseReuse() {
        holding = true;
    }

    /** Makes the buffers given back since {@link #pauseReuse} available again. */
    public void resumeReuse() {
        holding = false;
        held.forEach(this::give);
        held.clear();
    }

    /** Fresh allocations made so far. */
    public long allocations() {
        return allocated.size();
    }

    /**
     * Frees every buffer this pool allocated, handed out or not: for when nothing uses them any more and no work
     * queued on the device still does.
     */
    public void close() {
        allocated.forEach(allocator::free);
        allocated.clear();
        free.clear();
        held.clear();
    }
}
