package dev.weft.backends.gpu.exec;

import dev.weft.backends.gpu.ptx.Kernel;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Walks a {@link BlockPlan} on a {@link Device}: defines and releases the frame's buffers, queues every kernel,
 * matmul and custom call, and runs loops and branches on the host. Only {@link GpuStep.While} and {@link GpuStep.If}
 * read a predicate back from the device (a host synchronisation each, counted by {@link #predicateReads});
 * a {@link GpuStep.Fori} runs its body its known number of times and reads nothing. What custom calls batched is
 * flushed ({@link Device#flush}) before every predicate read and after every iteration of a {@code while} or
 * {@code fori} body, so that it neither holds up a read nor piles up over iterations.
 */
final class PlanRunner {
    /**
     * The plan-level operations a plan needs, in terms of plan steps and device buffers; {@link GpuExecutable}
     * implements them with the driver calls of {@link CudaCalls} on its stream, tests with a recording fake.
     * Everything but {@link #predicate} only queues work.
     */
    interface Device {
        /** The buffer holding a constant, uploaded when the executable was built. */
        DeviceBuffer constant(GpuStep.Constant c);

        void launch(Kernel kernel, DeviceBuffer[] params);

        void matmul(GpuStep.Matmul m, DeviceBuffer a, DeviceBuffer b, DeviceBuffer c);

        /** Queues a custom call on {@code operands}; returns its results ({@code null} for tokens). */
        DeviceBuffer[] customCall(GpuStep.CustomCall c, DeviceBuffer[] operands);

        /** Queues what custom calls have batched so far (NCCL groups, {@link GpuExtension#flush}). */
        void flush();

        /** Reads a rank-0 BOOL back to the host: waits for everything queued before it. */
        boolean predicate(DeviceBuffer b);
    }

    private final Device device;
    private final BufferPool pool;
    private long predicateReads;

    PlanRunner(Device device, BufferPool pool) {
        this.device = device;
        this.pool = pool;
    }

    /** Predicates read back so far: the host synchronisations made by control flow. */
    long predicateReads() {
        return predicateReads;
    }

    /** Runs {@code b} on {@code f}, whose slots of {@code b}'s arguments are defined. */
    void run(BlockPlan b, GpuFrame f) {
        for (GpuStep s : b.steps()) {
            switch (s) {
                case GpuStep.Allocate a -> f.define(a.slot(), pool.take(a.bytes()));
                case GpuStep.Constant c -> f.define(c.slot(), device.constant(c));
                case GpuStep.Alias a -> f.define(a.to(), f.slots[a.from()]);
                case GpuStep.Launch l -> device.launch(l.kernel(), buffers(f, l.params()));
                case GpuStep.Matmul m -> {
                    if ((long) m.m() * m.n() * m.batch() != 0) {
                        device.matmul(m, f.slots[m.a()], f.slots[m.b()], f.slots[m.c()]);
                    }
                }
                case GpuStep.CustomCall c -> {
                    DeviceBuffer[] results = device.customCall(c, buffers(f, c.operands()));
                    for (int r = 0; r < results.length; r++) {
                        f.define(c.results()[r], results[r]);
                    }
                }
                case GpuStep.While w -> loop(w, f);
                case GpuStep.Fori l -> fori(l, f);
                case GpuStep.If i -> {
                    BlockPlan branch = predicate(f.slots[i.pred()]) ? i.onTrue() : i.onFalse();
                    run(branch, f);
                    for (int r = 0; r < i.results().length; r++) {
                        f.define(i.results()[r], slotOrNull(f, branch.results()[r]));
                    }
                    releaseResults(branch, f);
                }
                case GpuStep.Release r -> f.release(r.slot());
            }
        }
    }

    private boolean predicate(DeviceBuffer b) {
        device.flush();
        predicateReads++;
        return device.predicate(b);
    }

    private void loop(GpuStep.While w, GpuFrame f) {
        DeviceBuffer[] carries = buffers(f, w.operands());
        hold(f, carries);
        while (true) {
            bind(w.cond(), carries, f);
            run(w.cond(), f);
            boolean again = predicate(f.slots[w.cond().results()[0]]);
            releaseResults(w.cond(), f);
            if (!again) {
                break;
            }
            carries = step(w.body(), carries, f);
        }
        finish(w.results(), carries, f);
    }

    private void fori(GpuStep.Fori l, GpuFrame f) {
        DeviceBuffer[] carries = buffers(f, l.operands());
        hold(f, carries);
        for (long i = 0; i < l.trips(); i++) {
            carries = step(l.body(), carries, f);
        }
        finish(l.results(), carries, f);
    }

    /**
     * Runs a loop body on {@code carries} (held by the loop) and flushes, as at a program's end; returns the next
     * carries, held in their place.
     */
    private DeviceBuffer[] step(BlockPlan body, DeviceBuffer[] carries, GpuFrame f) {
        bind(body, carries, f);
        run(body, f);
        device.flush();
        DeviceBuffer[] next = buffers(f, body.results());
        hold(f, next);
        releaseResults(body, f);
        unhold(f, carries);
        return next;
    }

    private static void finish(int[] results, DeviceBuffer[] carries, GpuFrame f) {
        for (int i = 0; i < carries.length; i++) {
            f.define(results[i], carries[i]);
        }
        unhold(f, carries);
    }

    private static void bind(BlockPlan b, DeviceBuffer[] values, GpuFrame f) {
        for (int i = 0; i < values.length; i++) {
            f.define(b.arguments()[i], values[i]);
        }
    }

    private static void hold(GpuFrame f, DeviceBuffer[] bs) {
        for (DeviceBuffer b : bs) {
            f.retain(b);
        }
    }

    private static void unhold(GpuFrame f, DeviceBuffer[] bs) {
        for (DeviceBuffer b : bs) {
            f.drop(b);
        }
    }

    /** Drops the block's references to its results, once per distinct slot, after the caller took them over. */
    static void releaseResults(BlockPlan b, GpuFrame f) {
        Set<Integer> distinct = new LinkedHashSet<>();
        for (int s : b.results()) {
            distinct.add(s);
        }
        distinct.forEach(f::release);
    }

    private static DeviceBuffer slotOrNull(GpuFrame f, int slot) {
        return slot < 0 ? null : f.slots[slot];
    }

    private static DeviceBuffer[] buffers(GpuFrame f, int[] slots) {
        DeviceBuffer[] out = new DeviceBuffer[slots.length];
        for (int i = 0; i < slots.length; i++) {
            out[i] = slotOrNull(f, slots[i]);
        }
        return out;
    }
}
