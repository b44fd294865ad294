package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * How a tensor is laid out over a {@link Mesh}: per dimension, the mesh axis it is split over, or {@code null}
 * (replicated: every rank holds all of it). A sharded tensor's {@link Tensor#shape()} is its global shape; each
 * rank holds one block of it, and {@code @Compile} methods take such tensors (the sharding is part of the compile
 * cache key): the body is written on the global arrays and Weft partitions it into a program on each rank's
 * blocks with the communication it needs (see docs/guide.md, "Global programs over a mesh: sharding").
 *
 * <p><b>Block layout.</b> A dimension of size {@code d} split over an axis of {@code n} ranks is cut into blocks of
 * {@code c = ceil(d / n)}, the last ones short: the rank at position {@code i} along the axis holds
 * {@code [min(i·c, d), min((i+1)·c, d))}. So 10 rows over 4 ranks are 3, 3, 3 and 1 rows; 5 rows over 4 ranks are
 * 2, 2, 1 and 0 (a rank may hold an empty block).
 *
 * <p><b>Eager use.</b> Outside {@code @Compile} an operation on sharded tensors runs at once, partitioned like a
 * one-operation program (local work on the blocks and the communication it needs: {@code t.sum()} of a row-sharded
 * {@code t} is a local sum and an allreduce), so every rank of the mesh must make it, as any collective. Reading
 * elements ({@code toDoubleArray}, {@code item}) and eager transforms ({@code Weft.grad} outside {@code @Compile})
 * of a sharded tensor are a {@link dev.weft.TracedValueException} naming the line: read {@link #gather} or
 * {@link #localBlock}, and differentiate inside a {@code @Compile} method. A result that ends up replicated on
 * every rank is a plain tensor.
 */
public final class Sharding {
    private final Mesh mesh;
    private final List<String> axes;

    private Sharding(Mesh mesh, List<String> axes) {
        this.mesh = mesh;
        this.axes = axes;
    }

    /**
     * A sharding of tensors of {@code perDim.length} dimensions: dimension {@code k} is split over the mesh axis
     * {@code perDim[k]}, or replicated where it is {@code null}.
     *
     * @throws WeftException naming the line for an axis the mesh lacks or one used for two dimensions
     */
    public static Sharding of(Mesh mesh, String... perDim) {
        List<String> used = new ArrayList<>();
        for (String axis : perDim) {
            if (axis == null) {
                continue;
            }
            if (!mesh.hasAxis(axis) || used.contains(axis)) {
                throw new WeftException(SourceLocation.capture(), "Sharding.of: " + Arrays.toString(perDim)
                        + (used.contains(axis) ? " splits two dimensions over axis " + axis
                        : " names axis " + axis + ", which " + mesh + " lacks"));
            }
            used.add(axis);
        }
        return new Sharding(mesh, Collections.unmodifiableList(Arrays.asList(perDim.clone())));
    }

    /** Every dimension of a rank-{@code rank} tensor replicated over {@code mesh}. */
    static Sharding replicated(Mesh mesh, int rank) {
        return new Sharding(mesh, Collections.unmodifiableList(Arrays.asList(new String[rank])));
    }

    public Mesh mesh() {
        return mesh;
    }

    /** The axis per dimension, {@code null} where replicated. */
    public List<String> axes() {
        return axes;
    }

    /** The axis dimension {@code dim} is split over, or {@code null}. */
    public String axis(int dim) {
        return axes.get(dim);
    }

    /** The number of dimensions of the tensors it lays out. */
    public int rank() {
        return axes.size();
    }

    /** Whether every rank holds the whole tensor. */
    public boolean isReplicated() {
        return axes.stream().allMatch(Objects::isNull);
    }

    /** This rank's block shape of a tensor of {@code global} shape. */
    long[] localShape(long[] global) {
        long[] local = global.clone();
        for (int d = 0; d < local.length; d++) {
            String a = axes.get(d);
            if (a != null) {
                local[d] = Blocks.size(global[d], mesh.size(a), mesh.coordinate(a));
            }
        }
        return local;
    }

    /**
     * {@code full} laid out by {@code sharding}: every rank passes the whole array and keeps its block. Collective
     * over the mesh: the ranks check that they pass one global dtype and shape and one sharding (one small
     * allreduce), since each keeps only its block and would otherwise compute on parts of different arrays. A sharded {@code full} is resharded (gathered where it must be). Inside a traced program it
     * is {@link #constrain}. A replicated sharding gives the full array back as a plain tensor.
     *
     * @throws WeftException naming the line when the sharding's rank is not the tensor's, or on every rank when the
     *                       ranks pass different global shapes or shardings
     */
    public static Tensor put(Tensor full, Sharding sharding) {
        return constrain(full, sharding);
    }

    /**
     * The whole array on every rank (collective over the mesh for a sharded tensor); a tensor that is not
     * sharded is returned as it is. Inside a traced program every tensor is already the whole array, so this
     * returns its argument (use {@link #constrain} with a replicated sharding to fix the layout there).
     */
    public static Tensor gather(Tensor t) {
        ShardedValue v = shardedValue(t);
        if (v == null) {
            return t;
        }
        return Reshard.reshard(v.local(), v.sharding(), replicated(v.sharding().mesh(), v.sharding().rank()),
                v.aval().shape().dims());
    }

    /** This rank's block of a sharded tensor (an ordinary tensor); a tensor that is not sharded is itself. */
    public static Tensor localBlock(Tensor t) {
        ShardedValue v = shardedValue(t);
        return v == null ? t : v.local();
    }

    /** The sharding of {@code t}, or {@code null} when it is not sharded. */
    public static Sharding of(Tensor t) {
        ShardedValue v = shardedValue(t);
        return v == null ? null : v.sharding();
    }

    /**
     * {@code t} laid out by {@code sharding}. Inside a traced program it is a point the partitioner must respect
     * (it reshards there: an allgather to replicate a dimension, a local slice to split a replicated one);
     * outside, it reshards at once, like {@link #put}.
     *
     * @throws WeftException naming the line when the sharding's rank is not the tensor's
     */
    public static Tensor constrain(Tensor t, Sharding sharding) {
        if (sharding.rank() != t.rank()) {
            throw new WeftException(SourceLocation.capture(), "Sharding: " + sharding + " lays out "
                    + sharding.rank() + " dimensions, but the tensor is " + TensorAccess.aval(t));
        }
        if (Interpreters.isTracing() && shardedValue(t) == null) {
            return Bind.bind(ShardPrims.CONSTRAIN, new ConstrainParams(sharding), t).getFirst();
        }
        ShardedValue v = shardedValue(t);
        if (v == null && !sharding.isReplicated()) {
            ShardAgreement.check("Sharding.put", List.of(TensorAccess.aval(t)), Collections.singletonList(sharding),
                    SourceLocation.capture());
        }
        Tensor local = v == null ? t : v.local();
        Sharding from = v == null ? replicated(sharding.mesh(), t.rank()) : v.sharding();
        return wrap(Reshard.reshard(local, from, sharding, t.shape()), sharding, TensorAccess.aval(t));
    }

    /**
     * A tensor of {@code global} aval whose block on this rank is {@code local}, laid out by {@code sharding};
     * {@code local} itself when the sharding is replicated.
     */
    static Tensor wrap(Tensor local, Sharding sharding, Aval global) {
        return sharding.isReplicated() ? local
                : TensorAccess.traced(new ShardedValue(global, local, sharding));
    }

    static ShardedValue shardedValue(Tensor t) {
        return TensorAccess.traced(t) instanceof ShardedValue v ? v : null;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Sharding s && s.mesh == mesh && s.axes.equals(axes);
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(mesh) * 31 + axes.hashCode();
    }

    /** Like {@code Sharding[x, null] over Mesh[x=4]}. */
    @Override
    public String toString() {
        return "Sharding" + axes + " over " + mesh;
    }
}
