package dev.weft.backends.cpu.exec;

import dev.weft.spi.NativeMemory;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The state of one run: a slot per SSA value of the function (regions included) and a pool of dead buffers per
 * size class. Slots and pools are confined to the running thread; after a run that completed, {@link #reset}
 * readies the frame for the next run, keeping its pools so that the next run allocates nothing it had before.
 * A dead buffer is pooled with its {@link Buffer} object, so that a loop reusing it allocates nothing at all.
 */
final class Frame {
    final Buffer[] slots;
    /** Objects an instruction reuses from one execution to the next (see {@link ProgramBuilder#scratchSlot}). */
    final Object[] scratch;
    private final long[] classBytes;
    private final List<ArrayDeque<Buffer>> pools;
    private final LongAdder allocations;

    Frame(int slotCount, int scratchCount, long[] classBytes, LongAdder allocations) {
        this.slots = new Buffer[slotCount];
        this.scratch = new Object[scratchCount];
        this.classBytes = classBytes;
        this.pools = new ArrayList<>(Collections.nCopies(classBytes.length, null));
        this.allocations = allocations;
    }

    /** Clears every slot, keeping the pools and the scratch objects. */
    void reset() {
        Arrays.fill(slots, null);
    }

    /** A buffer of size class {@code sizeClass} with no references, from the pool when one is free. */
    Buffer allocate(int sizeClass) {
        ArrayDeque<Buffer> pool = pools.get(sizeClass);
        if (pool != null && !pool.isEmpty()) {
            return pool.pop();
        }
        allocations.increment();
        return new Buffer(NativeMemory.allocateUninitialized(classBytes[sizeClass]), Buffer.Kind.TEMP, sizeClass);
    }

    /** A segment of size class {@code sizeClass} for scratch use; give it back with {@link #recycle}. */
    MemorySegment allocateSegment(int sizeClass) {
        return allocate(sizeClass).segment;
    }

    /** Returns a segment of size class {@code sizeClass} that nothing references any more to the pool. */
    void recycle(int sizeClass, MemorySegment segment) {
        pool(sizeClass).push(new Buffer(segment, Buffer.Kind.TEMP, sizeClass));
    }

    private ArrayDeque<Buffer> pool(int sizeClass) {
        ArrayDeque<Buffer> pool = pools.get(sizeClass);
        if (pool == null) {
            pool = new ArrayDeque<>();
            pools.set(sizeClass, pool);
        }
        return pool;
    }

    /** Binds {@code slot} to {@code b}, taking a reference. */
    void define(int slot, Buffer b) {
        b.refs++;
        slots[slot] = b;
    }

    /** Drops the reference of {@code slot}, if it still holds one. */
    void release(int slot) {
        Buffer b = slots[slot];
        if (b != null) {
            slots[slot] = null;
            drop(b);
        }
    }

    /** Drops one reference to {@code b}; the last one returns a pooled buffer to its pool. */
    void drop(Buffer b) {
        if (--b.refs == 0 && b.isPoolable()) {
            pool(b.sizeClass).push(b);
        }
    }
}
