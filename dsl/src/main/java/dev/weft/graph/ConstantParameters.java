package dev.weft.graph;

import dev.weft.Tensor;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * Turns chosen constants of a graph into reads of new parameters: the graph gains parameters of the given avals
 * (rank 0) after its own, and each {@link Prims#CONSTANT} node, at any depth, that the choice maps to parameter
 * {@code k} becomes that parameter converted to the constant's dtype and broadcast to its shape. A constant inside
 * a {@code fori}, {@code whileLoop}, {@code cond} or custom-rule body reaches it as one more capture of the node
 * that owns the region (captures are the trailing inputs of every region-holding primitive). Everything else is
 * bound again as it was, at its own source line.
 */
public final class ConstantParameters {
    private ConstantParameters() {
    }

    /**
     * {@code graph} with parameters of {@code added} appended and the constants {@code choice} maps to an index of
     * {@code added} (any other value: kept as constants) reading them.
     */
    public static Graph parameterize(Graph graph, List<Aval> added, ToIntFunction<Tensor> choice) {
        List<Aval> avals = new ArrayList<>(graph.body().params().stream().map(Var::aval).toList());
        int own = avals.size();
        avals.addAll(added);
        RegionTrace trace = RegionTrace.open(avals, SourceLocation.UNKNOWN);
        List<Tensor> params = trace.params();
        List<Tensor> out = Interpreters.with(trace,
                () -> region(graph.body(), params.subList(0, own), params.subList(own, params.size()), choice));
        trace.close(out);
        if (!trace.captured().isEmpty()) {
            throw new IllegalStateException("parameterizing constants captured a value from outside the graph");
        }
        return new Graph(graph.name(), trace.region(), graph.commsRead());
    }

    /** Whether any constant of {@code region}, at any depth, is chosen. */
    public static boolean anyChosen(Region region, ToIntFunction<Tensor> choice) {
        for (Node n : region.nodes()) {
            if (n.prim() == Prims.CONSTANT && choice.applyAsInt(((ConstantParams) n.params()).value()) >= 0) {
                return true;
            }
            for (Region nested : n.regions()) {
                if (anyChosen(nested, choice)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static List<Tensor> region(Region region, List<Tensor> args, List<Tensor> scalars,
                                       ToIntFunction<Tensor> choice) {
        Map<Var, Tensor> env = new IdentityHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            env.put(region.params().get(i), args.get(i));
        }
        for (Node n : region.nodes()) {
            List<Tensor> in = new ArrayList<>(n.inputs().size());
            for (Var v : n.inputs()) {
                in.add(env.get(v));
            }
            List<Tensor> out = SourceLocation.attributing(n.location(), () -> node(n, in, scalars, choice));
            for (int k = 0; k < out.size(); k++) {
                env.put(n.outputs().get(k), out.get(k));
            }
        }
        List<Tensor> results = new ArrayList<>(region.results().size());
        for (Var v : region.results()) {
            results.add(env.get(v));
        }
        return results;
    }

    private static List<Tensor> node(Node n, List<Tensor> in, List<Tensor> scalars, ToIntFunction<Tensor> choice) {
        if (n.prim() == Prims.CONSTANT) {
            Tensor value = ((ConstantParams) n.params()).value();
            int k = choice.applyAsInt(value);
            return List.of(k < 0 ? value : scalars.get(k).cast(value.dtype()).broadcastTo(value.shape()));
        }
        if (!(n.params() instanceof RegionParams rp) || rp.regions().stream().noneMatch(r -> anyChosen(r, choice))) {
            return Bind.bindAt(n.location(), n.prim(), n.params(), in);
        }
        RegionTrace[] traces = new RegionTrace[rp.regions().size()];
        for (int i = 0; i < traces.length; i++) {
            Region nested = rp.regions().get(i);
            RegionTrace t = RegionTrace.open(nested.params().stream().map(Var::aval).toList(), n.location());
            List<Tensor> out = Interpreters.with(t, () -> region(nested, t.params(), scalars, choice));
            t.close(out);
            traces[i] = t;
        }
        List<Tensor> captures = RegionTrace.sharedCaptures(traces);
        List<Region> regions = new ArrayList<>(traces.length);
        for (RegionTrace t : traces) {
            regions.add(t.region(captures));
        }
        List<Tensor> inputs = new ArrayList<>(in);
        inputs.addAll(captures);
        return Bind.bindAt(n.location(), n.prim(), rp.withRegions(regions), inputs);
    }
}
