package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.graph.Node;
import dev.weft.graph.Var;
import dev.weft.spi.Bind;
import dev.weft.spi.Params;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/** The state of one partitioning: the mesh and the sharding of each local block made so far. */
final class Partition {
    private final Mesh mesh;
    private final Map<Tensor, Sharding> shardings = new IdentityHashMap<>();

    Partition(Mesh mesh) {
        this.mesh = mesh;
    }

    Mesh mesh() {
        return mesh;
    }

    /** The sharding of the local block {@code t} of a rank-{@code rank} value (replicated when none was declared). */
    Sharding sharding(Tensor t, int rank) {
        Sharding s = shardings.get(t);
        return s != null ? s : Sharding.replicated(mesh, rank);
    }

    /** Declares that {@code t} is laid out by {@code s}; returns {@code t}. */
    Tensor place(Tensor t, Sharding s) {
        shardings.put(t, s);
        return t;
    }

    /** Input {@code k} of {@code node} ({@code in.get(k)}) resharded to {@code target}. */
    Tensor input(Node node, List<Tensor> in, int k, Sharding target) {
        Tensor t = in.get(k);
        Var v = node.inputs().get(k);
        return place(Reshard.reshard(t, sharding(t, v.aval().shape().rank()), target, v.aval().shape().dims()),
                target);
    }

    /** A sharding over this mesh with {@code axes} per dimension. */
    Sharding sharding(String[] axes) {
        return Sharding.of(mesh, axes);
    }

    /** {@code node}'s primitive bound at its line on {@code in} with {@code params}; outputs laid out by {@code out}. */
    List<Tensor> bind(Node node, Params params, List<Tensor> in, List<Sharding> out) {
        List<Tensor> results = Bind.bindAt(node.location(), node.prim(), params, in);
        List<Tensor> placed = new ArrayList<>(results.size());
        for (int k = 0; k < results.size(); k++) {
            placed.add(place(results.get(k), out.get(k)));
        }
        return placed;
    }
}
