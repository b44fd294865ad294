package dev.weft.graph;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.prim.CondParams;
import dev.weft.prim.ConstantParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * Evaluates a region by binding each node on the current interpreter ({@link Interpreters#current()}) at the
 * node's own source line, to which whatever the binding does is attributed ({@link SourceLocation#attributing})
 * (JAX's {@code eval_jaxpr}): eagerly it computes, under a trace it records, under a
 * transform it transforms. A nested {@code fori} or {@code cond} is bound as it is, with its regions, so the
 * interpreter decides how to run it; {@link #loop} and {@link #branch} are the plain ways to.
 */
public final class GraphEvaluator {
    private GraphEvaluator() {
    }

    /** The results of {@code region} for {@code args}, one per parameter. */
    public static List<Tensor> evaluate(Region region, List<Tensor> args) {
        return evaluate(region, args, (n, in) -> SourceLocation.attributing(n.location(),
                () -> Bind.bindAt(n.location(), n.prim(), n.params(), in)));
    }

    /**
     * {@link #evaluate(Region, List)} with {@code apply} giving each node's outputs from its inputs. A
     * {@link Prims#CONSTANT} node is its value, without {@code apply}.
     */
    public static List<Tensor> evaluate(Region region, List<Tensor> args,
                                        BiFunction<Node, List<Tensor>, List<Tensor>> apply) {
        if (args.size() != region.params().size()) {
            throw new IllegalArgumentException(args.size() + " arguments for " + region.params().size()
                    + " parameters");
        }
        Map<Var, Tensor> env = new IdentityHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            env.put(region.params().get(i), args.get(i));
        }
        for (Node n : region.nodes()) {
            if (n.prim() == Prims.CONSTANT) {
                env.put(n.outputs().getFirst(), ((ConstantParams) n.params()).value());
                continue;
            }
            List<Tensor> in = new ArrayList<>(n.inputs().size());
            for (Var v : n.inputs()) {
                in.add(env.get(v));
            }
            List<Tensor> out = apply.apply(n, in);
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

    /**
     * A {@code fori} run as a loop at the current level, {@code inputs} being the node's: the body is evaluated
     * once per iteration with a concrete index (eagerly a loop; under a transform that records, unrolled).
     */
    public static List<Tensor> loop(LoopParams p, List<Tensor> inputs) {
        int n = p.body().results().size();
        List<Tensor> carries = List.copyOf(inputs.subList(0, n));
        List<Tensor> captures = inputs.subList(n, inputs.size());
        for (int i = p.lo(); i < p.hi(); i++) {
            List<Tensor> args = new ArrayList<>(inputs.size() + 1);
            args.add(Tensor.scalar(DType.I32, i));
            args.addAll(carries);
            args.addAll(captures);
            carries = evaluate(p.body(), args);
        }
        return carries;
    }

    /**
     * A {@code whileLoop} run at the current level, {@code inputs} being the node's: the condition is evaluated and
     * read before each step, so the level must compute (eagerly); a level that traces records the node instead.
     */
    public static List<Tensor> whileLoop(WhileParams p, List<Tensor> inputs) {
        int n = p.body().results().size();
        List<Tensor> carries = List.copyOf(inputs.subList(0, n));
        List<Tensor> captures = inputs.subList(n, inputs.size());
        while (true) {
            List<Tensor> args = new ArrayList<>(carries);
            args.addAll(captures);
            Tensor pred = evaluate(p.cond(), args).getFirst();
            if (TensorAccess.data(pred) == null) {
                throw new IllegalArgumentException("whileLoop: the condition " + TensorAccess.aval(pred)
                        + " is traced");
            }
            if (pred.item() == 0) {
                return carries;
            }
            carries = evaluate(p.body(), args);
        }
    }

    /** A {@code cond} with a concrete predicate (the node's first input): the branch it picks, evaluated. */
    public static List<Tensor> branch(CondParams p, List<Tensor> inputs) {
        Tensor pred = inputs.getFirst();
        if (TensorAccess.data(pred) == null) {
            throw new IllegalArgumentException("cond: the predicate " + TensorAccess.aval(pred) + " is traced");
        }
        return evaluate(pred.item() != 0 ? p.onTrue() : p.onFalse(), inputs.subList(1, inputs.size()));
    }
}
