package dev.weft.backends.cpu.exec;

import dev.weft.backends.ffi.Downcalls;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.function.Supplier;

/**
 * A fused loop compiled to native code ({@link CLoopEmitter}), called through a critical downcall with the
 * addresses and row strides in two Java arrays. Native code checks nothing, so each call first checks what the
 * JVM's loop would: every segment is native, alive, accessible to this thread and (for results) writable, every
 * element the call reads or writes lies inside its segment and is aligned to its size. A call that fails a check
 * runs the JVM's loop instead, which raises the error the JVM's loop raises (or, for a heap segment, just runs).
 */
final class NativeFusedLoop implements FusedLoop {
    /**
     * Elements one call runs at most: a critical downcall holds back the JVM's safepoints (a collection, another
     * thread's deoptimization) until it returns, so a long loop runs in pieces of a millisecond or so.
     */
    private static final long SAFEPOINT_ELEMENTS = 1 << 20;
    private final MethodHandle function;
    private final Supplier<FusedLoop> java;
    /** Bytes of an element of each input the loop reads (0 when unread), then of each result. */
    private final long[] size;
    /** Whether each input is rank-0 (read once, at byte 0). */
    private final boolean[] scalar;
    private final int inputs;
    private final MemorySegment noStrides;

    NativeFusedLoop(FusedLoopSpec spec, MethodHandle function, Supplier<FusedLoop> java) {
        this.function = function;
        this.java = java;
        this.inputs = CLoopEmitter.inputCount(spec);
        List<Integer> results = spec.results();
        this.size = new long[inputs + results.size()];
        this.scalar = new boolean[inputs];
        for (FusedLoopSpec.Node n : spec.nodes()) {
            switch (n) {
                case FusedLoopSpec.Element e -> size[e.input()] = e.dtype().byteSize();
                case FusedLoopSpec.Scalar s -> {
                    size[s.input()] = s.dtype().byteSize();
                    scalar[s.input()] = true;
                }
                case FusedLoopSpec.Apply ignored -> {
                }
            }
        }
        for (int r = 0; r < results.size(); r++) {
            size[inputs + r] = spec.nodes().get(results.get(r)).dtype().byteSize();
        }
        this.noStrides = MemorySegment.ofArray(new long[size.length]);
    }

    @Override
    public void run(MemorySegment[] in, long[] inOffsets, MemorySegment[] out, long[] outOffsets, long from,
            long to) {
        long[] addresses = addresses(in, inOffsets, null, out, outOffsets, null, 1, from, to);
        if (addresses == null) {
            java.get().run(in, inOffsets, out, outOffsets, from, to);
            return;
        }
        for (long start = from; start < to; start += SAFEPOINT_ELEMENTS) {
            call(addresses, noStrides, 1, start, Math.min(to, start + SAFEPOINT_ELEMENTS));
        }
    }

    @Override
    public void runRows(MemorySegment[] in, long[] inOffsets, long[] inStrides, MemorySegment[] out,
            long[] outOffsets, long[] outStrides, long rows, long from, long to) {
        long[] addresses = addresses(in, inOffsets, inStrides, out, outOffsets, outStrides, rows, from, to);
        if (addresses == null) {
            java.get().runRows(in, inOffsets, inStrides, out, outOffsets, outStrides, rows, from, to);
            return;
        }
        long[] strides = new long[size.length];
        for (int k = 0; k < inputs; k++) {
            strides[k] = inStrides[k];
        }
        for (int r = 0; r < out.length; r++) {
            strides[inputs + r] = outStrides[r];
        }
        call(addresses, MemorySegment.ofArray(strides), rows, from, to);
        for (int k = 0; k < inOffsets.length; k++) {
            inOffsets[k] += rows * inStrides[k];
        }
        for (int r = 0; r < outOffsets.length; r++) {
            outOffsets[r] += rows * outStrides[r];
        }
    }

    private void call(long[] addresses, MemorySegment strides, long rows, long from, long to) {
        try {
            function.invokeExact(MemorySegment.ofArray(addresses), strides, rows, from, to);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Whether native code may use {@code s} on this thread: native memory, alive, accessible to this thread, and
     * writable if it is {@code written}.
     */
    static boolean reachable(MemorySegment s, boolean written) {
        return s.isNative() && s.scope().isAlive() && s.isAccessibleBy(Thread.currentThread())
                && !(written && s.isReadOnly());
    }

    /**
     * The address of each input's element 0 (a rank-0 input's one element) and of each result's, or null when a
     * check fails: the JVM's loop runs the call.
     */
    private long[] addresses(MemorySegment[] in, long[] inOffsets, long[] inStrides, MemorySegment[] out,
            long[] outOffsets, long[] outStrides, long rows, long from, long to) {
        if (in.length < inputs || out.length != size.length - inputs || from > to || rows < 0) {
            return null;
        }
        long[] a = new long[size.length];
        boolean empty = from == to || rows == 0;
        for (int k = 0; k < size.length; k++) {
            boolean input = k < inputs;
            long es = size[k];
            if (es == 0) {
                continue;
            }
            MemorySegment s = input ? in[k] : out[k - inputs];
            if (!reachable(s, !input)) {
                return null;
            }
            if (input && scalar[k]) {
                if (s.byteSize() < es) {
                    return null;
                }
                a[k] = s.address();
                continue;
            }
            long[] offsets = input ? inOffsets : outOffsets;
            long[] strides = input ? inStrides : outStrides;
            int j = input ? k : k - inputs;
            long offset = offsets == null ? 0 : offsets[j];
            long stride = strides == null ? 0 : strides[j];
            long base = s.address() + offset;
            if (base % es != 0 || stride % es != 0) {
                return null;
            }
            if (!empty) {
                try {
                    long last = Math.multiplyExact(rows - 1, stride);
                    long lo = Math.addExact(Math.addExact(offset, Math.multiplyExact(from, es)), Math.min(0, last));
                    long hi = Math.addExact(Math.addExact(offset, Math.multiplyExact(to, es)), Math.max(0, last));
                    if (lo < 0 || hi > s.byteSize()) {
                        return null;
                    }
                } catch (ArithmeticException overflow) {
                    return null;
                }
            }
            a[k] = base;
        }
        return a;
    }
}
