package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.Region;
import dev.weft.graph.RegionTrace;
import dev.weft.graph.Var;
import dev.weft.prim.CondParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Forward mode of {@code fori} and {@code cond} (JAX's {@code jvp_jaxpr}): each region is replaced by its JVP, a
 * region traced ({@link RegionTrace}) by evaluating the original ({@link GraphEvaluator}) on duals of a fresh
 * {@link JvpInterpreter}. The loop carries every floating carry's tangent beside it (zeros where the initial
 * carry has none), so its carries keep one structure from iteration to iteration; captured values pass their
 * tangents, where they have one, as further captures. A cond's branches return their floating results' tangents.
 */
final class ControlFlowAdRules {
    private ControlFlowAdRules() {
    }

    static void register() {
        AdRules.jointJvp(Prims.FORI, ControlFlowAdRules::fori);
        AdRules.jointJvp(Prims.COND, ControlFlowAdRules::cond);
        AdRules.jointJvp(Prims.WHILE, ControlFlowAdRules::whileLoop);
        AdRules.variance(Prims.WHILE, (p, in, outputs) -> new VarianceRule.Typing(VarianceRule.meet(in),
                RegionVariance.whileLoop(p, in)));
        AdRules.variance(Prims.FORI, (p, in, outputs) -> new VarianceRule.Typing(VarianceRule.meet(in),
                RegionVariance.loop(p, in)));
        AdRules.variance(Prims.COND, (p, in, outputs) -> new VarianceRule.Typing(VarianceRule.meet(in),
                RegionVariance.cond(p, in)));
    }

    private static JointJvpRule.Result fori(LoopParams p, List<Tensor> primals, List<Tensor> tangents,
                                            SourceLocation where) {
        int n = p.body().results().size();
        boolean[] carried = new boolean[n];
        // region parameter k + 1 is input k; a negative entry -(k + 2) stands for input k's tangent
        List<Integer> layout = new ArrayList<>(List.of(0));
        List<Tensor> inputs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            layout.add(k + 1);
            inputs.add(primals.get(k));
        }
        for (int k = 0; k < n; k++) {
            carried[k] = primals.get(k).dtype().isFloating();
            if (carried[k]) {
                layout.add(-(k + 2));
                Tensor t = tangents.get(k);
                inputs.add(t != null ? t : ArrayAdRules.zerosLike(primals.get(k)));
            }
        }
        for (int k = n; k < primals.size(); k++) {
            layout.add(k + 1);
            inputs.add(primals.get(k));
        }
        for (int k = n; k < primals.size(); k++) {
            if (tangents.get(k) != null) {
                layout.add(-(k + 2));
                inputs.add(tangents.get(k));
            }
        }
        RegionTrace body = jvpOf(p.body(), layout, carried, where);
        inputs.addAll(body.captured());
        List<Tensor> out = Bind.bindAt(where, Prims.FORI, new LoopParams(p.lo(), p.hi(), body.region()), inputs);
        return split(out, carried);
    }

    /**
     * Forward mode of a {@code whileLoop}: the loop carries every floating carry's tangent beside it, the body is its
     * JVP, and the condition reads the primal carries only.
     */
    private static JointJvpRule.Result whileLoop(WhileParams p, List<Tensor> primals, List<Tensor> tangents,
                                                 SourceLocation where) {
        int n = p.body().results().size();
        boolean[] carried = new boolean[n];
        // region parameter k is input k; a negative entry -(k + 1) stands for input k's tangent
        List<Integer> layout = new ArrayList<>();
        List<Tensor> inputs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            layout.add(k);
            inputs.add(primals.get(k));
        }
        for (int k = 0; k < n; k++) {
            carried[k] = primals.get(k).dtype().isFloating();
            if (carried[k]) {
                layout.add(-(k + 1));
                Tensor t = tangents.get(k);
                inputs.add(t != null ? t : ArrayAdRules.zerosLike(primals.get(k)));
            }
        }
        for (int k = n; k < primals.size(); k++) {
            layout.add(k);
            inputs.add(primals.get(k));
        }
        for (int k = n; k < primals.size(); k++) {
            if (tangents.get(k) != null) {
                layout.add(-(k + 1));
                inputs.add(tangents.get(k));
            }
        }
        RegionTrace body = jvpOf(p.body(), layout, carried, where);
        RegionTrace cond = primalOf(p.cond(), layout, where);
        List<Tensor> captures = RegionTrace.sharedCaptures(cond, body);
        inputs.addAll(captures);
        List<Tensor> out = Bind.bindAt(where, Prims.WHILE, new WhileParams(cond.region(captures),
                body.region(captures)), inputs);
        return split(out, carried);
    }

    /** {@code region} traced on parameters laid out as {@link #jvpOf}'s, reading the primal ones only. */
    private static RegionTrace primalOf(Region region, List<Integer> layout, SourceLocation where) {
        List<Aval> avals = new ArrayList<>(layout.size());
        for (int v : layout) {
            avals.add(region.params().get(v >= 0 ? v : -v - 1).aval());
        }
        RegionTrace trace = RegionTrace.open(avals, where);
        List<Tensor> params = trace.params();
        Tensor[] primal = new Tensor[region.params().size()];
        for (int i = 0; i < layout.size(); i++) {
            if (layout.get(i) >= 0) {
                primal[layout.get(i)] = params.get(i);
            }
        }
        trace.close(Interpreters.with(trace, () -> GraphEvaluator.evaluate(region, List.of(primal))));
        return trace;
    }

    private static JointJvpRule.Result cond(CondParams p, List<Tensor> primals, List<Tensor> tangents,
                                            SourceLocation where) {
        List<Integer> layout = new ArrayList<>();
        List<Tensor> inputs = new ArrayList<>(primals);
        // region parameter k is input k + 1; a negative entry -(k + 1) stands for input k + 1's tangent
        for (int k = 0; k + 1 < primals.size(); k++) {
            layout.add(k);
        }
        for (int k = 0; k + 1 < primals.size(); k++) {
            if (tangents.get(k + 1) != null) {
                layout.add(-(k + 1));
                inputs.add(tangents.get(k + 1));
            }
        }
        List<Var> results = p.onTrue().results();
        boolean[] carried = new boolean[results.size()];
        for (int k = 0; k < carried.length; k++) {
            carried[k] = results.get(k).aval().dtype().isFloating();
        }
        RegionTrace t = jvpOf(p.onTrue(), layout, carried, where), f = jvpOf(p.onFalse(), layout, carried, where);
        List<Tensor> captures = RegionTrace.sharedCaptures(t, f);
        inputs.addAll(captures);
        List<Tensor> out = Bind.bindAt(where, Prims.COND, new CondParams(t.region(captures), f.region(captures)),
                inputs);
        return split(out, carried);
    }

    /**
     * The JVP of {@code region}, traced at the current level: parameter {@code i} is region parameter
     * {@code layout[i]}, or for a negative entry {@code -(j + 1)} the tangent of region parameter {@code j}; the
     * results are the region's, then the tangents of those {@code carried} marks (zeros where none).
     */
    private static RegionTrace jvpOf(Region region, List<Integer> layout, boolean[] carried, SourceLocation where) {
        List<Aval> avals = new ArrayList<>(layout.size());
        for (int v : layout) {
            avals.add(region.params().get(v >= 0 ? v : -v - 1).aval());
        }
        RegionTrace trace = RegionTrace.open(avals, where);
        List<Tensor> params = trace.params();
        Tensor[] primal = new Tensor[region.params().size()], tangent = new Tensor[primal.length];
        for (int i = 0; i < layout.size(); i++) {
            int v = layout.get(i);
            if (v >= 0) {
                primal[v] = params.get(i);
            } else {
                tangent[-v - 1] = params.get(i);
            }
        }
        List<Tensor> flat = Interpreters.with(trace, () -> {
            JvpInterpreter jvp = new JvpInterpreter();
            List<Tensor> args = new ArrayList<>(primal.length);
            for (int i = 0; i < primal.length; i++) {
                args.add(jvp.dual(primal[i], tangent[i]));
            }
            List<Tensor> outs = Interpreters.with(jvp, () -> GraphEvaluator.evaluate(region, args));
            List<Tensor> r = new ArrayList<>(outs.size() * 2);
            for (Tensor o : outs) {
                r.add(jvp.primal(o));
            }
            for (int k = 0; k < outs.size(); k++) {
                if (carried[k]) {
                    Tensor t = jvp.tangent(outs.get(k));
                    r.add(t != null ? t : ArrayAdRules.zerosLike(jvp.primal(outs.get(k))));
                }
            }
            return r;
        });
        trace.close(flat);
        return trace;
    }

    /** The first {@code carried.length} of {@code out}, with the tangents that follow for those marked. */
    private static JointJvpRule.Result split(List<Tensor> out, boolean[] carried) {
        int n = carried.length;
        Tensor[] tangents = new Tensor[n];
        int next = n;
        for (int k = 0; k < n; k++) {
            if (carried[k]) {
                tangents[k] = out.get(next++);
            }
        }
        return new JointJvpRule.Result(out.subList(0, n), Arrays.asList(tangents));
    }
}
