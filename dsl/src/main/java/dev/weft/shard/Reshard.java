package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.util.Objects;

/**
 * Moves a block from one sharding to another with tensor and {@link Comm} operations, so it runs eagerly and is
 * recorded in a trace alike: an axis that moves from one dimension to another is one {@code alltoall}; a dimension
 * that stops being split is gathered over its axis (one {@code allgather} of even blocks, one {@code allgatherv}
 * of uneven ones); a dimension that becomes split is a local slice of this rank's block
 * (no communication).
 */
final class Reshard {
    private Reshard() {
    }

    /** {@code local}, this rank's block of a tensor of {@code global} shape laid out by {@code from}, as {@code to}. */
    static Tensor reshard(Tensor local, Sharding from, Sharding to, long[] global) {
        Tensor t = local;
        String[] now = from.axes().toArray(String[]::new);
        for (int d = 0; d < global.length; d++) {
            String a = now[d];
            int moved = a == null || a.equals(to.axis(d)) ? -1 : to.axes().indexOf(a);
            if (moved >= 0 && now[moved] == null) {
                t = swap(t, d, moved, global, from.mesh(), a);
                now[d] = null;
                now[moved] = a;
            }
        }
        for (int d = 0; d < global.length; d++) {
            String a = now[d];
            if (a != null && !a.equals(to.axis(d))) {
                t = gather(t, d, global[d], from.mesh(), a);
            }
        }
        for (int d = 0; d < global.length; d++) {
            String b = to.axis(d);
            if (b != null && !Objects.equals(now[d], b)) {
                t = block(t, d, global[d], to.mesh(), b);
            }
        }
        return t;
    }

    /**
     * The price of {@link #reshard}ing a tensor of {@code global} shape from {@code from} to {@code to}: the elements
     * one rank receives (an {@code alltoall} brings {@code (n-1)/n} of a block, a gather {@code n-1} blocks; slicing
     * is free), counted on padded blocks so that every rank computes the same price and so makes the same choice.
     */
    static double cost(Sharding from, Sharding to, long[] global) {
        Mesh mesh = from.mesh();
        double block = blockElements(from, global);
        double received = 0;
        for (int d = 0; d < global.length; d++) {
            String a = from.axis(d);
            if (a == null || a.equals(to.axis(d))) {
                continue;
            }
            int n = mesh.size(a);
            if (to.axes().contains(a) && from.axis(to.axes().indexOf(a)) == null) {
                received += block * (n - 1) / n;
            } else {
                received += block * (n - 1);
                block *= n;
            }
        }
        return received;
    }

    /** The elements of one rank's (padded) block of a tensor of {@code global} shape laid out by {@code s}. */
    static double blockElements(Sharding s, long[] global) {
        double block = 1;
        for (int d = 0; d < global.length; d++) {
            block *= s.axis(d) == null ? global[d] : Blocks.padded(global[d], s.mesh().size(s.axis(d)));
        }
        return block;
    }

    /**
     * {@code t}, split over {@code axis} along {@code from} (whole along {@code to}), as split along {@code to}
     * (whole along {@code from}): one {@code alltoall} of the blocks, each padded to the {@link Blocks} size, then
     * the padding sliced off. It moves each element once, where gathering and slicing would move every element to
     * every rank.
     */
    static Tensor swap(Tensor t, int from, int to, long[] global, Mesh mesh, String axis) {
        int n = mesh.size(axis);
        if (n == 1) {
            return t;
        }
        int rank = global.length;
        long c0 = Blocks.padded(global[from], n), c1 = Blocks.padded(global[to], n);
        int[] perm = new int[rank];
        perm[0] = from;
        perm[1] = to;
        for (int i = 0, j = 2; i < rank; i++) {
            if (i != from && i != to) {
                perm[j++] = i;
            }
        }
        Tensor u = t.transpose(perm);
        long[] shape = u.shape();
        long[] high = new long[rank];
        high[0] = c0 - shape[0];
        high[1] = n * c1 - shape[1];
        long[] split = new long[rank + 1];
        split[0] = c0;
        split[1] = n;
        split[2] = c1;
        System.arraycopy(shape, 2, split, 3, rank - 2);
        int[] blocksFirst = new int[rank + 1];
        blocksFirst[0] = 1;
        for (int i = 1; i <= rank; i++) {
            blocksFirst[i] = i == 1 ? 0 : i;
        }
        Tensor exchanged = mesh.axisComm(axis).alltoall(u.pad(new long[rank], high).reshape(split)
                .transpose(blocksFirst));
        long[] joined = shape.clone();
        joined[0] = n * c0;
        joined[1] = c1;
        long[] limit = joined.clone();
        limit[0] = global[from];
        limit[1] = Blocks.size(global[to], n, mesh.coordinate(axis));
        return exchanged.reshape(joined).slice(new long[rank], limit).transpose(inverse(perm));
    }

    /**
     * The whole dimension {@code dim} (of size {@code size}) of {@code t}, split over {@code axis}: one
     * {@code allgather} of even blocks, one {@code allgatherv} of uneven ones (no padding moves).
     */
    static Tensor gather(Tensor t, int dim, long size, Mesh mesh, String axis) {
        int n = mesh.size(axis);
        if (n == 1) {
            return t;
        }
        int[] perm = frontFirst(t.rank(), dim);
        Tensor front = dim == 0 ? t : t.transpose(perm);
        Comm comm = mesh.axisComm(axis);
        Tensor gathered;
        if (Blocks.padded(size, n) * n == size) {
            gathered = comm.allgather(front);
        } else {
            long[] counts = new long[n];
            for (int i = 0; i < n; i++) {
                counts[i] = Blocks.size(size, n, i);
            }
            gathered = comm.allgatherv(front, counts);
        }
        return dim == 0 ? gathered : gathered.transpose(inverse(perm));
    }

    /**
     * This rank's block along {@code axis} of dimension {@code dim} (of {@code size}) of the sum over the ranks of
     * {@code axis} of their {@code t}: one {@code reduceScatter} of {@code t} padded to the {@link Blocks} size.
     */
    static Tensor reduceScatter(Tensor t, int dim, long size, Mesh mesh, String axis) {
        int n = mesh.size(axis);
        if (n == 1) {
            return t;
        }
        long[] shape = t.shape();
        long[] high = new long[shape.length];
        high[dim] = n * Blocks.padded(size, n) - size;
        int[] perm = frontFirst(shape.length, dim);
        Tensor front = t.pad(new long[shape.length], high).transpose(perm);
        Tensor mine = mesh.axisComm(axis).reduceScatter(front, ReduceOp.SUM);
        long[] limit = mine.shape();
        limit[0] = Blocks.size(size, n, mesh.coordinate(axis));
        return mine.slice(new long[shape.length], limit).transpose(inverse(perm));
    }

    /** This rank's block along {@code axis} of the whole dimension {@code dim} of {@code t}. */
    static Tensor block(Tensor t, int dim, long size, Mesh mesh, String axis) {
        int n = mesh.size(axis);
        if (n == 1) {
            return t;
        }
        long[] start = new long[t.rank()];
        long[] limit = t.shape();
        start[dim] = Blocks.start(size, n, mesh.coordinate(axis));
        limit[dim] = start[dim] + Blocks.size(size, n, mesh.coordinate(axis));
        return t.slice(start, limit);
    }

    /** The permutation that moves axis {@code dim} to the front, keeping the others in order. */
    private static int[] frontFirst(int rank, int dim) {
        int[] perm = new int[rank];
        perm[0] = dim;
        for (int i = 0, j = 1; i < rank; i++) {
            if (i != dim) {
                perm[j++] = i;
            }
        }
        return perm;
    }

    private static int[] inverse(int[] perm) {
        int[] inv = new int[perm.length];
        for (int i = 0; i < perm.length; i++) {
            inv[perm[i]] = i;
        }
        return inv;
    }
}
