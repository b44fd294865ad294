package dev.weft.batching;

import dev.weft.Tensor;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.Region;
import dev.weft.graph.RegionTrace;
import dev.weft.spi.Aval;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;

/**
 * A region batched (JAX's {@code batch_jaxpr}): traced at the current level ({@link RegionTrace}) by evaluating the
 * original ({@link GraphEvaluator}) on values of a fresh {@link BatchInterpreter}. Its batched results have their
 * batch axis first, so that two branches, or a loop body and its carries, agree on where it is.
 */
final class BatchedRegion {
    private final RegionTrace trace;
    private final boolean[] batched;

    private BatchedRegion(RegionTrace trace, boolean[] batched) {
        this.trace = trace;
        this.batched = batched;
    }

    /**
     * @param params the new region's parameters (batched ones with their batch axis)
     * @param dims   each parameter's batch axis, or {@link BatchInterpreter#UNBATCHED}
     * @param force  the results to batch whether or not they depend on a batched parameter (broadcast)
     * @param size   the batch size
     * @param where  the user's line of the construct
     */
    static BatchedRegion trace(Region region, List<Aval> params, List<Integer> dims, boolean[] force, long size,
                               SourceLocation where) {
        RegionTrace trace = RegionTrace.open(params, where);
        List<Tensor> values = trace.params();
        boolean[] batched = new boolean[region.results().size()];
        List<Tensor> results = Interpreters.with(trace, () -> {
            BatchInterpreter level = new BatchInterpreter(size);
            List<Tensor> args = new ArrayList<>(values.size());
            for (int i = 0; i < values.size(); i++) {
                args.add(level.wrap(values.get(i), dims.get(i)));
            }
            List<Tensor> outs = Interpreters.with(level, () -> GraphEvaluator.evaluate(region, args));
            List<Tensor> r = new ArrayList<>(outs.size());
            for (int k = 0; k < outs.size(); k++) {
                int d = level.dim(outs.get(k));
                batched[k] = d != BatchInterpreter.UNBATCHED;
                Tensor v = level.value(outs.get(k));
                r.add(batched[k] || force[k] ? BatchAxes.materialize(v, d, size, 0) : v);
            }
            return r;
        });
        trace.close(results);
        return new BatchedRegion(trace, batched);
    }

    RegionTrace trace() {
        return trace;
    }

    /** Whether result {@code k} depends on a batched parameter (so has the batch axis, first). */
    boolean batched(int k) {
        return batched[k];
    }
}
