package dev.weft.backends.cpu.exec;

import dev.weft.spi.NativeMemory;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * The state of one run: a slot per SSA value of the function (regions included) and a pool of dead buffers per
 * size class. Slots and pools are confined to the running thread; after a run that completed, {@link #reset}
 * readies the frame for the next run, keeping its pools so that the next run allocates nothing it had before.
 * A dead buffer is pooled with its {@link Buffer} object, so that a loop reusing it allocates nothing at all.
 */
final class CpuFrame {
    Buffer[] slots;
    /** Objects instructions reuse from one execution to the next within a run ({@link ProgramBuilder#scratchSlot}). */
    Object[] scratch;
    private final Supplier<?>[] scratchFactories;
    private final long[] classBytes;
    private final Pool[] pools;
    private final LongAdder allocations;
    /** Counts the runs, so that a pool knows when its arrays were made in an earlier one ({@link Pool#renew}). */
    private int run;

    CpuFrame(int slotCount, Supplier<?>[] scratchFactories, long[] classBytes, LongAdder allocations) {
        this.slots = new Buffer[slotCount];
        this.scratchFactories = scratchFactories;
        this.scratch = newScratch();
        this.classBytes = classBytes;
        this.pools = new Pool[classBytes.length];
        this.allocations = allocations;
    }

    /**
     * Readies the frame for the next run, keeping its pools. The slots array and the scratch objects are made anew
     * rather than cleared, so that during a run they are young objects: in JDK 25, G1's write barrier runs a memory
     * fence on every reference store into an old object, which cost an allreduce loop ~12 ns per iteration. For
     * the same reason each pool copies its arrays at its first push of a run.
     */
    void reset() {
        slots = new Buffer[slots.length];
        scratch = newScratch();
        run++;
    }

    private Object[] newScratch() {
        Object[] s = new Object[scratchFactories.length];
        for (int i = 0; i < s.length; i++) {
            s[i] = scratchFactories[i].get();
        }
        return s;
    }

    /** A buffer of size class {@code sizeClass} with no references, from the pool when one is free. */
    Buffer allocate(int sizeClass) {
        Pool pool = pools[sizeClass];
        if (pool != null && pool.buffers.size > 0) {
            return pool.buffers.pop();
        }
        return new Buffer(allocateSegment(sizeClass), Buffer.Kind.TEMP, sizeClass);
    }

    /** A segment of size class {@code sizeClass} for scratch use; give it back with {@link #recycle}. */
    MemorySegment allocateSegment(int sizeClass) {
        Pool pool = pools[sizeClass];
        if (pool != null && pool.segments.size > 0) {
            return pool.segments.pop();
        }
        if (pool != null && pool.buffers.size > 0) {
            return pool.buffers.pop().segment;
        }
        allocations.increment();
        return NativeMemory.allocateUninitialized(classBytes[sizeClass]);
    }

    /** Returns a segment of size class {@code sizeClass} that nothing references any more to the pool. */
    void recycle(int sizeClass, MemorySegment segment) {
        poolForPush(sizeClass).segments.push(segment);
    }

    /** The pool of {@code sizeClass}, made if there is none, with arrays made in this run. */
    private Pool poolForPush(int sizeClass) {
        Pool pool = pools[sizeClass];
        if (pool == null) {
            pool = new Pool(run);
            pools[sizeClass] = pool;
        } else if (pool.run != run) {
            pool.renew(run);
        }
        return pool;
    }

    /**
     * The dead buffers of one size class: with their {@link Buffer} objects (dropped values) or without (scratch
     * segments), each kind reused as such so that neither allocates a wrapper on the way back. Both stacks copy
     * their arrays at the first push of each run, so that a push stores into a young array (see {@link #reset}).
     */
    private static final class Pool {
        final Stack<Buffer> buffers = new Stack<>();
        final Stack<MemorySegment> segments = new Stack<>();
        /** The run that made the arrays. */
        int run;

        Pool(int run) {
            this.run = run;
        }

        void renew(int run) {
            buffers.renew();
            segments.renew();
            this.run = run;
        }
    }

    /** A last-in, first-out stack over an array. */
    private static final class Stack<T> {
        private Object[] items = new Object[4];
        int size;

        void renew() {
            items = items.clone();
        }

        void push(T item) {
            if (size == items.length) {
                items = Arrays.copyOf(items, 2 * size);
            }
            items[size++] = item;
        }

        @SuppressWarnings("unchecked")
        T pop() {
            T item = (T) items[--size];
            items[size] = null;
            return item;
        }
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
            poolForPush(b.sizeClass).buffers.push(b);
        }
    }
}
