package dev.weft.batching;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.prim.BroadcastParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Shape;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Moving, adding and indexing a batch axis (JAX's {@code moveaxis} and {@code broadcast}), at the current level. */
final class BatchAxes {
    private BatchAxes() {
    }

    /**
     * {@code v} with its batch axis {@code dim} moved to {@code to}; an unbatched {@code v}
     * ({@link BatchInterpreter#UNBATCHED}) broadcast along a new axis of {@code size} there.
     */
    static Tensor materialize(Tensor v, int dim, long size, int to) {
        return dim == BatchInterpreter.UNBATCHED ? broadcastAt(v, size, to) : move(v, dim, to);
    }

    /** {@code v} with axis {@code from} moved to {@code to}, the others in order. */
    static Tensor move(Tensor v, int from, int to) {
        if (from == to) {
            return v;
        }
        List<Integer> order = new ArrayList<>();
        for (int a = 0; a < v.rank(); a++) {
            if (a != from) {
                order.add(a);
            }
        }
        order.add(to, from);
        return v.transpose(order.stream().mapToInt(Integer::intValue).toArray());
    }

    /** {@code v} repeated {@code size} times along a new axis {@code at}. */
    static Tensor broadcastAt(Tensor v, long size, int at) {
        long[] shape = insert(v.shape(), at, size);
        List<Integer> dims = new ArrayList<>(v.rank());
        for (int a = 0; a < v.rank(); a++) {
            dims.add(a < at ? a : a + 1);
        }
        return Bind.bind(Prims.BROADCAST_IN_DIM, new BroadcastParams(Shape.of(shape), dims), v).getFirst();
    }

    /** Element {@code i} (an i32 scalar) of {@code v}'s first axis, without that axis. */
    static Tensor element(Tensor v, Tensor i) {
        long[] sizes = v.shape();
        sizes[0] = 1;
        return v.dynamicSlice(startAt(i, v.rank()), sizes).reshape(Arrays.copyOfRange(sizes, 1, sizes.length));
    }

    /** {@code whole} (batch axis first) with element {@code i} replaced by {@code part}. */
    static Tensor setElement(Tensor whole, Tensor part, Tensor i) {
        return whole.dynamicUpdateSlice(part.reshape(insert(part.shape(), 0, 1)), startAt(i, whole.rank()));
    }

    /** The start {@code [i, 0, ..., 0]} of a block of a rank-{@code rank} tensor. */
    private static List<Tensor> startAt(Tensor i, int rank) {
        List<Tensor> start = new ArrayList<>(rank);
        start.add(i);
        Tensor zero = Tensor.scalar(DType.I32, 0);
        for (int a = 1; a < rank; a++) {
            start.add(zero);
        }
        return start;
    }

    /** The aval of a batch of {@code size} elements of {@code one}, batch axis first. */
    static Aval withBatch(Aval one, long size) {
        return new Aval(one.dtype(), Shape.of(insert(one.shape().dims(), 0, size)));
    }

    /** {@code dims} with {@code value} inserted at {@code at}. */
    static long[] insert(long[] dims, int at, long value) {
        long[] out = new long[dims.length + 1];
        System.arraycopy(dims, 0, out, 0, at);
        out[at] = value;
        System.arraycopy(dims, at, out, at + 1, dims.length - at);
        return out;
    }

    /** {@code dims} without entry {@code at}. */
    static long[] remove(long[] dims, int at) {
        long[] out = new long[dims.length - 1];
        System.arraycopy(dims, 0, out, 0, at);
        System.arraycopy(dims, at + 1, out, at, out.length - at);
        return out;
    }
}
