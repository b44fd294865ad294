package dev.weft.batching;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.Region;
import dev.weft.graph.RegionTrace;
import dev.weft.prim.CondParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.List;

/**
 * Batching of {@code fori} and {@code cond}: each region is replaced by its {@link BatchedRegion}. A loop carry is
 * batched when its initial value is, or when the body makes it depend on a batched value (found by tracing the
 * body again until no further carry becomes batched, JAX's fixed point); the trip count is static, so it stays one
 * loop. A cond on an unbatched predicate stays one cond, its results batched where either branch's is. A cond on a
 * batched predicate runs {@link PerElement per element}: a select between both branches' results would run the
 * branch not taken, whose NaN or infinity (and a gradient through it) must not leak.
 */
final class ControlFlowBatchRules {
    private ControlFlowBatchRules() {
    }

    static void register() {
        BatchRules.rule(Prims.FORI, ControlFlowBatchRules::fori);
        BatchRules.rule(Prims.COND, ControlFlowBatchRules::cond);
        BatchRules.rule(Prims.WHILE, ControlFlowBatchRules::whileLoop);
        BatchRules.rule(Prims.CUSTOM_JVP_CALL, (p, app) -> inline(p.body(), app));
        BatchRules.rule(Prims.CUSTOM_VJP_CALL, (p, app) -> inline(p.body(), app));
    }

    /**
     * A custom function's call batched as its body is: evaluated on the batched operands at the batch level. The
     * user's rule does not survive batching (a derivative taken of the batched call differentiates the body).
     */
    private static BatchRule.Result inline(Region body, Application app) {
        List<Tensor> args = new ArrayList<>(app.args().size());
        for (int k = 0; k < app.args().size(); k++) {
            args.add(app.level().wrap(app.arg(k), app.dim(k)));
        }
        List<Tensor> outs = Interpreters.with(app.level(), () -> GraphEvaluator.evaluate(body, args));
        List<Tensor> values = new ArrayList<>(outs.size());
        List<Integer> dims = new ArrayList<>(outs.size());
        for (Tensor o : outs) {
            values.add(app.level().value(o));
            dims.add(app.level().dim(o));
        }
        return new BatchRule.Result(values, dims);
    }

    private static BatchRule.Result fori(LoopParams p, Application app) {
        int n = p.body().results().size();
        Carried c = carried(p.body(), app, n, true);
        boolean[] carried = c.batched();
        BatchedRegion body = c.body();
        List<Tensor> inputs = new ArrayList<>(app.args().size());
        List<Integer> dims = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            inputs.add(carried[k] ? app.front(k) : app.arg(k));
            dims.add(carried[k] ? 0 : BatchInterpreter.UNBATCHED);
        }
        inputs.addAll(app.args().subList(n, app.args().size()));
        inputs.addAll(body.trace().captured());
        List<Tensor> out = Bind.bindAt(app.where(), Prims.FORI, new LoopParams(p.lo(), p.hi(),
                body.trace().region()), inputs);
        return new BatchRule.Result(out, dims);
    }

    /**
     * A while loop stays one loop when its condition does not depend on a batched value (the carries batched as
     * for {@code fori}); otherwise each element runs its own loop, one after the other, so that no element steps
     * past its own end.
     */
    private static BatchRule.Result whileLoop(WhileParams p, Application app) {
        int n = p.body().results().size();
        Carried c = carried(p.body(), app, n, false);
        boolean[] carried = c.batched();
        BatchedRegion body = c.body();
        BatchedRegion cond = BatchedRegion.trace(p.cond(), c.params(), c.dims(), new boolean[1], app.size(),
                app.where());
        if (cond.batched(0)) {
            return PerElement.apply(Prims.WHILE, p, app);
        }
        List<Tensor> inputs = new ArrayList<>(app.args().size());
        List<Integer> outDims = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            inputs.add(carried[k] ? app.front(k) : app.arg(k));
            outDims.add(carried[k] ? 0 : BatchInterpreter.UNBATCHED);
        }
        inputs.addAll(app.args().subList(n, app.args().size()));
        List<Tensor> captures = RegionTrace.sharedCaptures(cond.trace(), body.trace());
        inputs.addAll(captures);
        List<Tensor> out = Bind.bindAt(app.where(), Prims.WHILE, new WhileParams(cond.trace().region(captures),
                body.trace().region(captures)), inputs);
        return new BatchRule.Result(out, outDims);
    }

    /**
     * A loop body batched to a fixed point (JAX's): a carry is batched where its initial value is, or where the
     * body makes it depend on a batched value, traced again until no further carry becomes batched.
     *
     * @param indexed whether the body's first parameter is a loop index ({@code fori}'s)
     */
    private static Carried carried(Region region, Application app, int n, boolean indexed) {
        boolean[] batched = new boolean[n];
        for (int k = 0; k < n; k++) {
            batched[k] = app.batched(k);
        }
        while (true) {
            List<Aval> params = new ArrayList<>();
            List<Integer> dims = new ArrayList<>();
            if (indexed) {
                params.add(Aval.of(DType.I32));
                dims.add(BatchInterpreter.UNBATCHED);
            }
            for (int k = 0; k < n; k++) {
                Aval one = app.outAvals().get(k);
                params.add(batched[k] ? BatchAxes.withBatch(one, app.size()) : one);
                dims.add(batched[k] ? 0 : BatchInterpreter.UNBATCHED);
            }
            for (int k = n; k < app.args().size(); k++) {
                params.add(TensorAccess.aval(app.arg(k)));
                dims.add(app.dim(k));
            }
            BatchedRegion body = BatchedRegion.trace(region, params, dims, batched, app.size(), app.where());
            boolean grew = false;
            for (int k = 0; k < n; k++) {
                if (body.batched(k) && !batched[k]) {
                    batched[k] = true;
                    grew = true;
                }
            }
            if (!grew) {
                return new Carried(batched, body, params, dims);
            }
        }
    }

    /** The carries batched, the body traced for them, and its parameters' avals and batch axes. */
    private record Carried(boolean[] batched, BatchedRegion body, List<Aval> params, List<Integer> dims) {
    }

    private static BatchRule.Result cond(CondParams p, Application app) {
        if (app.batched(0)) {
            return PerElement.apply(Prims.COND, p, app);
        }
        List<Aval> params = new ArrayList<>();
        List<Integer> dims = new ArrayList<>();
        for (int k = 1; k < app.args().size(); k++) {
            params.add(TensorAccess.aval(app.arg(k)));
            dims.add(app.dim(k));
        }
        int n = p.onTrue().results().size();
        boolean[] batched = new boolean[n];
        BatchedRegion onTrue, onFalse;
        boolean differ;
        do {
            onTrue = BatchedRegion.trace(p.onTrue(), params, dims, batched, app.size(), app.where());
            onFalse = BatchedRegion.trace(p.onFalse(), params, dims, batched, app.size(), app.where());
            differ = false;
            for (int k = 0; k < n; k++) {
                if ((onTrue.batched(k) || onFalse.batched(k)) && !batched[k]) {
                    batched[k] = true;
                    differ |= onTrue.batched(k) != onFalse.batched(k);
                }
            }
        } while (differ);
        List<Tensor> shared = RegionTrace.sharedCaptures(onTrue.trace(), onFalse.trace());
        List<Tensor> inputs = new ArrayList<>(app.args());
        inputs.addAll(shared);
        List<Tensor> out = Bind.bindAt(app.where(), Prims.COND, new CondParams(onTrue.trace().region(shared),
                onFalse.trace().region(shared)), inputs);
        List<Integer> outDims = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            outDims.add(batched[k] ? 0 : BatchInterpreter.UNBATCHED);
        }
        return new BatchRule.Result(out, outDims);
    }
}
