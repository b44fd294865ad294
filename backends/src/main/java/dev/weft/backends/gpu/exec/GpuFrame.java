package dev.weft.backends.gpu.exec;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The device buffers of one run by slot, with a reference count per buffer: a buffer goes back to the pool when its
 * last reference (a slot or a hold by a loop) is dropped, unless it is pinned (a constant).
 */
final class GpuFrame {
    final DeviceBuffer[] slots;
    private final Map<DeviceBuffer, Integer> refs = new IdentityHashMap<>();
    private final Map<DeviceBuffer, Boolean> pinned;
    private final BufferPool pool;

    GpuFrame(int slots, BufferPool pool, Map<DeviceBuffer, Boolean> pinned) {
        this.slots = new DeviceBuffer[slots];
        this.pool = pool;
        this.pinned = pinned;
    }

    void define(int slot, DeviceBuffer b) {
        if (slot >= 0) {
            slots[slot] = b;
            retain(b);
        }
    }

    void release(int slot) {
        if (slot >= 0) {
            drop(slots[slot]);
            slots[slot] = null;
        }
    }

    void retain(DeviceBuffer b) {
        if (b != null) {
            refs.merge(b, 1, Integer::sum);
        }
    }

    void drop(DeviceBuffer b) {
        if (b == null) {
            return;
        }
        int left = refs.merge(b, -1, Integer::sum);
        if (left == 0) {
            refs.remove(b);
            if (!pinned.containsKey(b)) {
                pool.give(b);
            }
        }
    }

    /** Buffers still referenced (zero after a complete run). */
    int live() {
        return refs.size();
    }
}
