package dev.weft.comm;

import dev.weft.Tensor;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreters;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * Whether concrete values are the same on every rank of a communicator: one allreduce MAX of each value's hash and
 * its negation (equal exactly where every rank has the same), run eagerly even while tracing, since the values are
 * concrete and the answer decides what is traced. Every rank must ask about the same number of values. Autodiff
 * settles with it whether a value from outside a differentiated function is invariant; {@link Comm#replicated}
 * checks its operand with it under {@code WEFT_CHECK=strict}.
 */
public final class Agreement {
    private Agreement() {
    }

    /** For each of {@code values}, whether every rank of {@code comm} holds the same dtype, shape and bits. */
    public static boolean[] same(CommHandle comm, List<Tensor> values) {
        boolean[] out = new boolean[values.size()];
        if (comm.size() < 2) {
            Arrays.fill(out, true);
            return out;
        }
        int n = values.size();
        long[] h = new long[2 * n];
        for (int i = 0; i < n; i++) {
            h[i] = hash(values.get(i));
            h[n + i] = -h[i];
        }
        long[] max = max(comm, h);
        for (int i = 0; i < n; i++) {
            out[i] = max[i] == -max[n + i];
        }
        return out;
    }

    /**
     * {@link #same} for lists that may differ from rank to rank in length: first one allreduce of the length and a
     * hash of the whole list, which settles the common case (every rank holds the same values: all {@code true});
     * where the lengths agree but the values do not, {@link #same} value by value; where the lengths differ, the
     * ranks hold different things, and every value counts as different ({@code false}). Every rank of {@code comm}
     * calls it, whatever its list.
     */
    public static boolean[] sameLists(CommHandle comm, List<Tensor> values) {
        boolean[] out = new boolean[values.size()];
        if (comm.size() < 2) {
            Arrays.fill(out, true);
            return out;
        }
        long h = 0x84222325cbf29ceL;
        for (Tensor t : values) {
            h = (h ^ hash(t)) * 0x100000001b3L;
        }
        h = h == Long.MIN_VALUE ? 1 : h;
        long n = values.size();
        long[] probe = {n, -n, h, -h};
        long[] max = max(comm, probe);
        if (max[0] != -max[1]) {
            return out;
        }
        if (max[2] == -max[3]) {
            Arrays.fill(out, true);
            return out;
        }
        return same(comm, values);
    }

    /** The elementwise maximum of every rank's {@code values}, run eagerly whatever this thread traces. */
    private static long[] max(CommHandle comm, long[] values) {
        return Interpreters.with(Interpreters.eager(), () -> Comm.of(comm).allreduce(Tensor.of(values),
                ReduceOp.MAX).toLongArray());
    }

    /** A 64-bit FNV-1a hash of {@code t}'s dtype, shape and bytes, never {@code Long.MIN_VALUE}. */
    static long hash(Tensor t) {
        long h = 0xcbf29ce484222325L;
        h = (h ^ t.dtype().ordinal()) * 0x100000001b3L;
        for (long d : t.shape()) {
            h = (h ^ d) * 0x100000001b3L;
        }
        MemorySegment data = TensorAccess.data(t);
        long bytes = data.byteSize(), i = 0;
        for (; i + 8 <= bytes; i += 8) {
            h = (h ^ data.get(ValueLayout.JAVA_LONG_UNALIGNED, i)) * 0x100000001b3L;
        }
        for (; i < bytes; i++) {
            h = (h ^ (data.get(ValueLayout.JAVA_BYTE, i) & 0xff)) * 0x100000001b3L;
        }
        return h == Long.MIN_VALUE ? 1 : h;
    }
}
