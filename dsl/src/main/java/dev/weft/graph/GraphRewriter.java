package dev.weft.graph;

import dev.weft.Tensor;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;

/**
 * Rewrites a region node by node with a {@link Rule}: each node is replaced by what the rule computes from its
 * inputs, or kept. It evaluates the region ({@link GraphEvaluator}) in a fresh {@link RegionTrace}, so what the rule
 * binds is recorded in place of the node at the node's source line (kept nodes keep theirs too), the regions of nested
 * {@code fori}/{@code cond} nodes are rewritten by the same rule, and the result is closed with the same
 * parameters. Concrete constants are operands, not nodes: the rule does not see {@code constant} nodes.
 */
public final class GraphRewriter {
    private GraphRewriter() {
    }

    /** What replaces one node. */
    @FunctionalInterface
    public interface Rule {
        /**
         * The values of {@code node}'s outputs, computed from {@code inputs} (tensors of the region being built,
         * concrete where the input is a constant) with tensor operations, or {@code null} to keep the node.
         */
        List<Tensor> rewrite(Node node, List<Tensor> inputs);
    }

    /** {@code graph} with its body rewritten by {@code rule}. */
    public static Graph rewrite(Graph graph, Rule rule) {
        return new Graph(graph.name(), rewrite(graph.body(), rule), graph.commsRead());
    }

    /** {@code region} rewritten by {@code rule}: a closed region with parameters of the same avals. */
    public static Region rewrite(Region region, Rule rule) {
        RegionTrace trace = RegionTrace.open(region.params().stream().map(Var::aval).toList(),
                SourceLocation.UNKNOWN);
        List<Tensor> out = Interpreters.with(trace, () -> GraphEvaluator.evaluate(region, trace.params(),
                (n, in) -> SourceLocation.attributing(n.location(), () -> apply(n, in, rule))));
        trace.close(out);
        if (!trace.captured().isEmpty()) {
            throw new IllegalStateException("a rewrite rule used a value from outside the region");
        }
        return trace.region();
    }

    private static List<Tensor> apply(Node n, List<Tensor> inputs, Rule rule) {
        List<Tensor> replaced = rule.rewrite(n, inputs);
        if (replaced != null) {
            if (replaced.size() != n.outputs().size()) {
                throw new IllegalStateException("a rewrite of " + n.prim() + " gives " + replaced.size()
                        + " values for " + n.outputs().size() + " outputs");
            }
            return replaced;
        }
        Params params = n.params();
        if (params instanceof RegionParams r) {
            List<Region> regions = new ArrayList<>(r.regions().size());
            for (Region nested : r.regions()) {
                regions.add(rewrite(nested, rule));
            }
            params = r.withRegions(regions);
        }
        return Bind.bindAt(n.location(), n.prim(), params, inputs);
    }
}
