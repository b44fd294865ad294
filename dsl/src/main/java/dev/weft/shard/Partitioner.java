package dev.weft.shard;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.spi.Aval;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;

/**
 * The partitioning transform: a program traced on global arrays becomes the program of one rank on its blocks.
 * {@link #partition} evaluates the global region node by node ({@link dev.weft.graph.GraphEvaluator}) on this
 * rank's blocks with each primitive's {@link ShardingRules} entry, under whatever interpreter is current (the
 * compile pipeline runs it in a fresh trace, so the result is a graph of local operations and the communication
 * the rules insert, made with the public {@link dev.weft.comm.Comm} calls: token chain, schedule check and flight
 * recorder see it as any other).
 * The program is specialised to this rank (block sizes differ where a size does not divide evenly). Used by the
 * compile pipeline; not user API.
 */
public final class Partitioner {
    private Partitioner() {
    }

    /** The local blocks of a partitioned program's results, their shardings, and the mesh it ran over. */
    public record Result(List<Tensor> locals, List<Sharding> shardings, Mesh mesh) {
    }

    /** Whether a program with {@code body} and arguments laid out by {@code in} ({@code null}: plain) needs it. */
    public static boolean needed(Region body, List<Sharding> in) {
        return in.stream().anyMatch(s -> s != null) || constraint(body) != null;
    }

    /** The aval of this rank's block of a tensor of {@code global} aval laid out by {@code s} (null: plain). */
    public static Aval localAval(Aval global, Sharding s) {
        return s == null ? global : new Aval(global.dtype(), Shape.of(s.localShape(global.shape().dims())));
    }

    /** A result of {@code global} aval whose block here is {@code local}: sharded, or plain when replicated. */
    public static Tensor result(Tensor local, Sharding s, Aval global) {
        return Sharding.wrap(local, s, global);
    }

    /**
     * {@code body} (on global avals) run on this rank's blocks {@code locals}, laid out by {@code in} ({@code null}
     * for a plain argument: replicated).
     *
     * @throws WeftException naming the line of a communication operation or of a constraint on another mesh than
     *     the arguments'
     */
    public static Result partition(Region body, List<Tensor> locals, List<Sharding> in) {
        Partition p = new Partition(mesh(body, in));
        for (int k = 0; k < locals.size(); k++) {
            if (in.get(k) != null) {
                p.place(locals.get(k), in.get(k));
            }
        }
        List<Tensor> out = p.evaluate(body, locals);
        List<Sharding> shardings = new ArrayList<>(out.size());
        for (int k = 0; k < out.size(); k++) {
            shardings.add(p.sharding(out.get(k), body.results().get(k).aval().shape().rank()));
        }
        return new Result(out, shardings, p.mesh());
    }

    /** The mesh of the arguments, else of the first constraint; they must all share one. */
    private static Mesh mesh(Region body, List<Sharding> in) {
        Mesh mesh = null;
        for (Sharding s : in) {
            if (s != null && mesh != null && s.mesh() != mesh) {
                throw new WeftException(SourceLocation.capture(), "the sharded arguments are on different meshes, "
                        + mesh + " and " + s.mesh() + "; reshard them onto one (Sharding.put)");
            }
            mesh = s != null ? s.mesh() : mesh;
        }
        if (mesh == null) {
            mesh = ((ConstrainParams) constraint(body).params()).sharding().mesh();
        }
        return mesh;
    }

    /** The first constraint node in {@code r} or its nested regions, or {@code null}. */
    static Node constraint(Region r) {
        for (Node n : r.nodes()) {
            if (n.prim() == ShardPrims.CONSTRAIN) {
                return n;
            }
            for (Region nested : n.regions()) {
                Node c = constraint(nested);
                if (c != null) {
                    return c;
                }
            }
        }
        return null;
    }
}
