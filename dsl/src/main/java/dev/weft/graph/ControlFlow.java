package dev.weft.graph;

import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.prim.CondParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.prim.WhileParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * {@code Weft.fori}, {@code Weft.whileLoop} and {@code Weft.cond}: the body, condition or branches are traced once
 * into closed regions ({@link RegionTrace}, lifting whatever they use from outside), then {@link Prims#FORI},
 * {@link Prims#WHILE} or {@link Prims#COND} is bound on the current interpreter with them, which runs, records or
 * transforms it.
 */
public final class ControlFlow {
    private ControlFlow() {
    }

    /** The loop {@code for (i = lo; i < hi; i++) carry = body(i, carry)}, traced at {@code where}. */
    public static List<Tensor> fori(int lo, int hi, List<Tensor> init,
                                     BiFunction<Tensor, List<Tensor>, List<Tensor>> body, SourceLocation where) {
        List<Aval> params = new ArrayList<>(init.size() + 1);
        params.add(Aval.of(DType.I32));
        for (Tensor t : init) {
            params.add(TensorAccess.aval(t));
        }
        RegionTrace trace = RegionTrace.open(params, where);
        List<Tensor> args = trace.params();
        List<Tensor> out = Interpreters.with(trace, () -> List.copyOf(body.apply(args.getFirst(),
                args.subList(1, args.size()))));
        if (out.size() != init.size()) {
            throw new ShapeException(where, "fori: the body returns " + out.size() + " carries but the loop has "
                    + init.size());
        }
        trace.close(out);
        List<Tensor> inputs = new ArrayList<>(init);
        inputs.addAll(trace.captured());
        return Bind.bindAt(where, Prims.FORI, new LoopParams(lo, hi, trace.region()), inputs);
    }

    /**
     * The loop {@code while (cond(carry)) carry = body(carry)}, both traced at {@code where} on the carries' avals;
     * they share one capture list.
     */
    public static List<Tensor> whileLoop(Function<List<Tensor>, Tensor> cond, UnaryOperator<List<Tensor>> body,
                                         List<Tensor> init, SourceLocation where) {
        List<Aval> params = new ArrayList<>(init.size());
        for (Tensor t : init) {
            params.add(TensorAccess.aval(t));
        }
        RegionTrace c = RegionTrace.open(params, where), b = RegionTrace.open(params, where);
        List<Tensor> predicate = Interpreters.with(c, () -> List.of(cond.apply(c.params())));
        c.close(predicate);
        List<Tensor> out = Interpreters.with(b, () -> List.copyOf(body.apply(b.params())));
        if (out.size() != init.size()) {
            throw new ShapeException(where, "whileLoop: the body returns " + out.size() + " carries but the loop has "
                    + init.size());
        }
        b.close(out);
        List<Tensor> captures = RegionTrace.sharedCaptures(c, b);
        List<Tensor> inputs = new ArrayList<>(init);
        inputs.addAll(captures);
        return Bind.bindAt(where, Prims.WHILE, new WhileParams(c.region(captures), b.region(captures)), inputs);
    }

    /** {@code pred ? onTrue() : onFalse()}, both traced at {@code where}; they share one capture list. */
    public static List<Tensor> cond(Tensor pred, Supplier<List<Tensor>> onTrue, Supplier<List<Tensor>> onFalse,
                                    SourceLocation where) {
        RegionTrace t = branch(onTrue, where), f = branch(onFalse, where);
        List<Tensor> captures = RegionTrace.sharedCaptures(t, f);
        List<Tensor> inputs = new ArrayList<>(captures.size() + 1);
        inputs.add(pred);
        inputs.addAll(captures);
        return Bind.bindAt(where, Prims.COND, new CondParams(t.region(captures), f.region(captures)), inputs);
    }

    private static RegionTrace branch(Supplier<List<Tensor>> body, SourceLocation where) {
        RegionTrace trace = RegionTrace.open(List.of(), where);
        trace.close(Interpreters.with(trace, () -> List.copyOf(body.get())));
        return trace;
    }
}
