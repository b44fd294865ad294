package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.Request;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * Elements of a split dimension fetched from the ranks that hold them: how slices, pads and concatenations along
 * a split dimension are partitioned. Every rank of the axis asks for one range of the dimension (a function of its
 * position, the same on every rank, so each rank also knows what to send to whom); the parts held elsewhere
 * arrive by {@code irecv}/{@code isend} (all receives started first, then the sends, then the waits), so a
 * stencil's shifted slices talk to the neighbouring ranks only.
 */
final class Halo {
    /** The tag of the partitioner's messages; they are all received within the program that sends them. */
    private static final int TAG = 20;

    private Halo() {
    }

    /**
     * Elements {@code want(me)} (a {@code [from, to)} range, clipped to {@code [0, size)}) of dimension {@code dim}
     * of a tensor of {@code size} along it, split over {@code axis}; {@code local} is this rank's block.
     */
    static Tensor fetch(Tensor local, int dim, long size, Mesh mesh, String axis, IntFunction<long[]> want) {
        int n = mesh.size(axis), me = mesh.coordinate(axis);
        Comm comm = mesh.axisComm(axis);
        long[] mine = block(size, n, me);
        long[] wanted = clip(want.apply(me), size);
        List<Tensor> pieces = new ArrayList<>();
        List<Request> receives = new ArrayList<>();
        List<Integer> order = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            long[] part = intersect(wanted, block(size, n, j));
            if (part[1] <= part[0]) {
                continue;
            }
            if (j == me) {
                order.add(-1);
                pieces.add(along(local, dim, part[0] - mine[0], part[1] - mine[0]));
            } else {
                long[] shape = local.shape();
                shape[dim] = part[1] - part[0];
                order.add(receives.size());
                receives.add(comm.irecv(local.dtype(), shape, j, TAG));
                pieces.add(null);
            }
        }
        List<Request> sends = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            long[] part = intersect(clip(want.apply(j), size), mine);
            if (j != me && part[1] > part[0]) {
                sends.add(comm.isend(along(local, dim, part[0] - mine[0], part[1] - mine[0]), j, TAG));
            }
        }
        for (int k = 0; k < pieces.size(); k++) {
            if (order.get(k) >= 0) {
                pieces.set(k, comm.wait(receives.get(order.get(k))));
            }
        }
        for (Request s : sends) {
            comm.wait(s);
        }
        if (pieces.isEmpty()) {
            return along(local, dim, 0, 0);
        }
        return pieces.size() == 1 ? pieces.getFirst() : Tensor.concat(dim, pieces.toArray(Tensor[]::new));
    }

    /** The block {@code [start, end)} of position {@code index}. */
    static long[] block(long size, int parts, int index) {
        long start = Blocks.start(size, parts, index);
        return new long[] {start, start + Blocks.size(size, parts, index)};
    }

    /** Elements {@code [from, to)} of dimension {@code dim} of {@code t}. */
    static Tensor along(Tensor t, int dim, long from, long to) {
        long[] start = new long[t.rank()];
        long[] limit = t.shape();
        if (from == 0 && to == limit[dim]) {
            return t;
        }
        start[dim] = from;
        limit[dim] = to;
        return t.slice(start, limit);
    }

    private static long[] clip(long[] range, long size) {
        return intersect(range, new long[] {0, size});
    }

    private static long[] intersect(long[] a, long[] b) {
        long from = Math.max(a[0], b[0]);
        return new long[] {from, Math.max(from, Math.min(a[1], b[1]))};
    }
}
