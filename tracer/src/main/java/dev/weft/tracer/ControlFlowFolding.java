package dev.weft.tracer;

import dev.weft.Tensor;
import dev.weft.graph.Graph;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.GraphRewriter;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.CondParams;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.spi.TensorAccess;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Folds control flow whose outcome the trace already knows: a {@code fori} that runs no iteration is its initial
 * carries, a {@code cond} on a concrete predicate is the branch it picks, inlined. A {@link GraphRewriter} pass on
 * the traced graph, run only when the graph has such a node.
 */
final class ControlFlowFolding {
    private ControlFlowFolding() {
    }

    static Graph fold(Graph graph) {
        return foldable(graph.body(), new HashSet<>()) ? GraphRewriter.rewrite(graph, ControlFlowFolding::fold)
                : graph;
    }

    private static List<Tensor> fold(Node n, List<Tensor> inputs) {
        if (n.params() instanceof LoopParams p && p.hi() <= p.lo()) {
            return inputs.subList(0, p.body().results().size());
        }
        if (n.params() instanceof CondParams p && TensorAccess.data(inputs.getFirst()) != null) {
            Region taken = inputs.getFirst().item() != 0 ? p.onTrue() : p.onFalse();
            return GraphEvaluator.evaluate(GraphRewriter.rewrite(taken, ControlFlowFolding::fold),
                    inputs.subList(1, inputs.size()));
        }
        return null;
    }

    /** Whether {@code region} or one nested in it has a node to fold; {@code constants} are its constants' vars. */
    private static boolean foldable(Region region, Set<Var> constants) {
        for (Node n : region.nodes()) {
            if (n.params() instanceof ConstantParams) {
                constants.add(n.outputs().getFirst());
            } else if (n.params() instanceof LoopParams p && p.hi() <= p.lo()
                    || n.prim() == Prims.COND && constants.contains(n.inputs().getFirst())) {
                return true;
            }
            for (Region r : n.regions()) {
                if (foldable(r, new HashSet<>())) {
                    return true;
                }
            }
        }
        return false;
    }
}
