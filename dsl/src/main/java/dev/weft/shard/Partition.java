package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Params;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The state of one partitioning: the mesh and the sharding of each local block made so far. */
final class Partition {
    private final Mesh mesh;
    private final Map<Tensor, Sharding> shardings = new IdentityHashMap<>();
    /** Nodes whose result stays a per-rank partial sum for the constraint that uses it ({@link #defers}). */
    private final Set<Node> deferred = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Partial sums and the axis they are to be summed over. */
    private final Map<Tensor, String> pendingSums = new IdentityHashMap<>();
    /** The layout each value is wanted in by its uses (backward propagation), where some use wants one. */
    private final Map<Var, Sharding> wanted = new IdentityHashMap<>();
    /** Replicated results of {@code broadcast_in_dim}, by the node and operand that made them. */
    private final Map<Tensor, Broadcast> broadcasts = new IdentityHashMap<>();

    /** A broadcast {@link #input} may redo straight to a split layout instead of slicing its whole result. */
    private record Broadcast(Node node, Tensor operand) {
    }

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

    /**
     * Input {@code k} of {@code node} ({@code in.get(k)}) resharded to {@code target}. A replicated broadcast is
     * broadcast again from its operand to {@code target}'s block, rather than made whole and sliced.
     */
    Tensor input(Node node, List<Tensor> in, int k, Sharding target) {
        Tensor t = in.get(k);
        Var v = node.inputs().get(k);
        Sharding from = sharding(t, v.aval().shape().rank());
        Broadcast b = broadcasts.get(t);
        if (b != null && !from.equals(target)) {
            return ShardingRules.broadcastTo(b.node(), b.operand(), target, this);
        }
        return place(Reshard.reshard(t, from, target, v.aval().shape().dims()), target);
    }

    /** The local block {@code t} of a value of {@code global} aval, resharded to {@code target}. */
    Tensor reshard(Tensor t, Aval global, Sharding target) {
        return place(Reshard.reshard(t, sharding(t, global.shape().rank()), target, global.shape().dims()), target);
    }

    /** Notes that {@code result}, replicated, is {@code node} (a {@code broadcast_in_dim}) of {@code operand}. */
    void broadcast(Tensor result, Node node, Tensor operand) {
        broadcasts.put(result, new Broadcast(node, operand));
    }

    /** {@code region} (on global avals) on the local blocks {@code args}, each node by its rule. */
    List<Tensor> evaluate(Region region, List<Tensor> args) {
        deferSumsOnlyConstrained(region);
        propagateWants(region);
        return GraphEvaluator.evaluate(region, args, (n, in) -> SourceLocation.attributing(n.location(),
                () -> apply(n, in)));
    }

    /**
     * Notes the {@code matmul}s of {@code region} whose only use is a constraint: their rule may leave a sum over
     * ranks pending ({@link #pending}) for the constraint, which can then reduce and scatter in one operation.
     */
    private void deferSumsOnlyConstrained(Region region) {
        Map<Var, Integer> uses = new IdentityHashMap<>();
        Map<Var, Node> producers = new IdentityHashMap<>();
        for (Node n : region.nodes()) {
            for (Var v : n.inputs()) {
                uses.merge(v, 1, Integer::sum);
            }
            n.outputs().forEach(v -> producers.put(v, n));
        }
        region.results().forEach(v -> uses.merge(v, 1, Integer::sum));
        for (Node n : region.nodes()) {
            Node producer = n.prim() == ShardPrims.CONSTRAIN ? producers.get(n.inputs().getFirst()) : null;
            if (producer != null && producer.prim() == Prims.MATMUL && uses.get(n.inputs().getFirst()) == 1) {
                deferred.add(producer);
            }
        }
    }

    /** The layout value {@code v} is wanted in by its uses, or {@code null}. */
    Sharding wanted(Var v) {
        return wanted.get(v);
    }

    /** Declares that value {@code v} is wanted laid out by {@code s} (before its region is evaluated). */
    void want(Var v, Sharding s) {
        wanted.put(v, s);
    }

    /**
     * Backward propagation: from the last node to the first, the layout a node's output is wanted in gives, by its
     * primitive's {@link ShardingWant}, the layouts its inputs are wanted in (the first want seen, i.e. of the
     * latest use, is kept).
     */
    private void propagateWants(Region region) {
        List<Node> nodes = region.nodes();
        for (int i = nodes.size() - 1; i >= 0; i--) {
            Node n = nodes.get(i);
            ShardingWant rule = ShardingRules.want(n.prim());
            Sharding out = n.prim() == ShardPrims.CONSTRAIN ? null : wanted.get(n.outputs().getFirst());
            if (rule == null || n.outputs().size() != 1 || out == null && n.prim() != ShardPrims.CONSTRAIN) {
                continue;
            }
            List<Sharding> in = rule.inputs(n, out);
            for (int k = 0; k < in.size(); k++) {
                if (in.get(k) != null) {
                    wanted.putIfAbsent(n.inputs().get(k), in.get(k));
                }
            }
        }
    }

    /**
     * The layout to run elementwise {@code node} (or a concatenation) in: of the merged layout ({@link #merged}),
     * each operand's and the one its result is wanted in, the one for which the operands' reshards and the result's
     * later reshard to its wanted layout receive the fewest elements ({@link Reshard#cost}); on a tie the smaller block (less local work), then
     * the earlier candidate. Every rank weighs the same padded sizes, so all choose alike.
     */
    Sharding cheapest(Node node, List<Tensor> in) {
        Var result = node.outputs().getFirst();
        long[] dims = result.aval().shape().dims();
        Sharding want = wanted.get(result);
        List<Sharding> candidates = new ArrayList<>();
        candidates.add(merged(in, dims.length));
        for (int k = 0; k < in.size(); k++) {
            if (node.inputs().get(k).aval().shape().rank() == dims.length) {
                candidates.add(sharding(in.get(k), dims.length));
            }
        }
        if (want != null) {
            candidates.add(want);
        }
        Sharding best = null;
        double bestCost = 0, bestBlock = 0;
        for (Sharding c : candidates) {
            double cost = want == null ? 0 : Reshard.cost(c, want, dims);
            for (int k = 0; k < in.size(); k++) {
                Var v = node.inputs().get(k);
                if (v.aval().shape().rank() == dims.length) {
                    cost += Reshard.cost(sharding(in.get(k), dims.length), c, v.aval().shape().dims());
                }
            }
            double block = Reshard.blockElements(c, dims);
            if (best == null || cost < bestCost || cost == bestCost && block < bestBlock) {
                best = c;
                bestCost = cost;
                bestBlock = block;
            }
        }
        return best;
    }

    /** Per dimension, the first operand's axis there that no earlier dimension took. */
    private Sharding merged(List<Tensor> in, int rank) {
        String[] axes = new String[rank];
        Set<String> used = new HashSet<>();
        for (Tensor t : in) {
            Sharding s = sharding(t, rank);
            for (int d = 0; d < rank; d++) {
                String a = s.axis(d);
                if (axes[d] == null && a != null && used.add(a)) {
                    axes[d] = a;
                }
            }
        }
        return sharding(axes);
    }

    /** Whether {@code node}'s only use is a constraint that takes its pending sum. */
    boolean defers(Node node) {
        return deferred.contains(node);
    }

    /** Declares that {@code t}, laid out by {@code s}, still has to be summed over the ranks of {@code axis}. */
    Tensor pending(Tensor t, Sharding s, String axis) {
        pendingSums.put(t, axis);
        return place(t, s);
    }

    /** The axis over which {@code t} still has to be summed, or {@code null}. */
    String pendingSum(Tensor t) {
        return pendingSums.get(t);
    }

    private List<Tensor> apply(Node n, List<Tensor> in) {
        ShardingRule rule = ShardingRules.rule(n.prim());
        if (rule == null) {
            throw new WeftException(n.location(), n.prim() + " cannot run on sharded tensors: "
                    + ShardingRules.whyNotShardable(n.prim()).orElse("it has no sharding rule"));
        }
        if (n.prim() == ShardPrims.CONSTRAIN && ((ConstrainParams) n.params()).sharding().mesh() != mesh) {
            throw new WeftException(n.location(), "Sharding.constrain: " + ((ConstrainParams) n.params()).sharding()
                    + " is on another mesh than " + mesh + " of the program's sharded arguments");
        }
        return rule.apply(n, in, this);
    }

    /** A sharding over this mesh with {@code axes} per dimension. */
    Sharding sharding(String[] axes) {
        return Sharding.of(mesh, axes);
    }

    /**
     * {@code node}'s primitive bound at its line on {@code in} with {@code params}; its outputs laid out by
     * {@code out}.
     */
    List<Tensor> bind(Node node, Params params, List<Tensor> in, List<Sharding> out) {
        List<Tensor> results = Bind.bindAt(node.location(), node.prim(), params, in);
        List<Tensor> placed = new ArrayList<>(results.size());
        for (int k = 0; k < results.size(); k++) {
            placed.add(place(results.get(k), out.get(k)));
        }
        return placed;
    }
}
