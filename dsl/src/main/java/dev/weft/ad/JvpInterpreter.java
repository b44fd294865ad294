package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Forward mode: each value of the transformed function is a {@link Dual}, a primal value of the level below with
 * its tangent. Every operation binds the primitive one level down ({@link Interpreters#under}) and applies its
 * {@link JvpRule} there too, so the levels below compute (eagerly), record (inside {@code @Compile}, or reverse
 * mode's {@link LinearRecorder}) or differentiate again (nested transforms) both.
 */
final class JvpInterpreter extends TransformLevel {
    /** A value of this level: its primal value and tangent ({@code null} for zero), both of the level below. */
    record Dual(Aval aval, Tensor primal, Tensor tangent, JvpInterpreter owner) implements Traced {
    }

    /** The tensor of this level for {@code primal} with {@code tangent}, or {@code primal} itself for no tangent. */
    Tensor dual(Tensor primal, Tensor tangent) {
        return tangent == null ? primal
                : TensorAccess.traced(new Dual(TensorAccess.aval(primal), primal, tangent, this));
    }

    private Dual mine(Tensor t) {
        return TensorAccess.traced(t) instanceof Dual d && d.owner() == this ? d : null;
    }

    Tensor primal(Tensor t) {
        Dual d = mine(t);
        return d == null ? t : d.primal();
    }

    /** The tangent of {@code t}, {@code null} when it is zero. */
    Tensor tangent(Tensor t) {
        Dual d = mine(t);
        return d == null ? null : d.tangent();
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        List<Tensor> primals = new ArrayList<>(args.size());
        List<Tensor> tangents = new ArrayList<>(args.size());
        boolean any = false;
        for (Tensor a : args) {
            primals.add(primal(a));
            Tensor t = tangent(a);
            tangents.add(t);
            any |= t != null;
        }
        Tensor[] in = primals.toArray(Tensor[]::new);
        // Communication moves tangents between ranks: every rank runs the tangent's operation, zeros where its
        // operands have none, so that all follow one schedule (another rank's operand may have a tangent).
        boolean exchanges = CommAdRules.exchangesTangents(prim, params);
        if (!any && !exchanges) {
            return Interpreters.under(this, () -> Bind.bind(prim, params, in));
        }
        if (exchanges) {
            for (int i = 0; i < tangents.size(); i++) {
                if (tangents.get(i) == null && primals.get(i).dtype().isFloating()) {
                    Tensor p = primals.get(i);
                    tangents.set(i, Interpreters.under(this, () -> zeroTangent(p)));
                }
            }
        }
        List<Tensor> tangentsOut = new ArrayList<>();
        List<Tensor> outs = Interpreters.under(this, () -> {
            List<Tensor> o = Bind.bind(prim, params, in);
            tangentsOut.addAll(Interpreters.current() instanceof LinearRecorder r
                    ? r.inRule(() -> jvp(prim, params, primals, tangents, o, where))
                    : jvp(prim, params, primals, tangents, o, where));
            return o;
        });
        List<Tensor> results = new ArrayList<>(outs.size());
        for (int i = 0; i < outs.size(); i++) {
            results.add(dual(outs.get(i), tangentsOut.get(i)));
        }
        return results;
    }

    /**
     * A zero tangent for {@code primal}, made at the level below: under reverse mode a linear zero, so that an
     * operation on it is recorded and transposed on every rank alike rather than run now on some.
     */
    private static Tensor zeroTangent(Tensor primal) {
        return Interpreters.current() instanceof LinearRecorder r ? r.zero(TensorAccess.aval(primal))
                : ArrayAdRules.zerosLike(primal);
    }

    private static <P extends Params> List<Tensor> jvp(Primitive<P> prim, Params params, List<Tensor> primals,
                                                       List<Tensor> tangents, List<Tensor> outs,
                                                       SourceLocation where) {
        JvpRule<P> rule = AdRules.jvpRule(prim).orElseThrow(() -> new WeftException(located(where),
                prim.name() + " is not differentiable" + AdRules.whyNotDifferentiable(prim).map(w -> ": " + w)
                        .orElse("") + "; compute it outside the differentiated function, or on values that do"
                        + " not depend on its inputs"));
        return rule.jvp(prim.paramsType().cast(params), primals, tangents, outs);
    }

    /**
     * The loop below this level with every floating carry's tangent carried beside it (zeros where the initial
     * carry has none): the body runs at this level on duals.
     */
    @Override
    public List<Tensor> fori(int lo, int hi, List<Tensor> init, BiFunction<Tensor, List<Tensor>, List<Tensor>> body,
                             SourceLocation where) {
        int n = init.size();
        boolean[] carried = new boolean[n];
        List<Tensor> below = new ArrayList<>(init.size() * 2);
        for (Tensor t : init) {
            below.add(primal(t));
        }
        for (int k = 0; k < n; k++) {
            carried[k] = init.get(k).dtype().isFloating();
            if (carried[k]) {
                Tensor t = tangent(init.get(k));
                below.add(t != null ? t : ArrayAdRules.zerosLike(primal(init.get(k))));
            }
        }
        List<Tensor> out = Interpreters.under(this, () -> Interpreters.current().fori(lo, hi, below,
                (i, carries) -> {
                    List<Tensor> duals = duals(carries, carried);
                    List<Tensor> next = Interpreters.with(this, () -> body.apply(i, duals));
                    return flatten(next, carried);
                }, where));
        return duals(out, carried);
    }

    /** Both branches below this level, each returning its results' primals then tangents (zeros for none). */
    @Override
    public List<Tensor> cond(Tensor pred, Supplier<List<Tensor>> onTrue, Supplier<List<Tensor>> onFalse,
                             SourceLocation where) {
        Tensor p = primal(pred);
        boolean[][] shape = new boolean[1][];
        Supplier<List<Tensor>> t = branch(onTrue, shape);
        Supplier<List<Tensor>> f = branch(onFalse, shape);
        List<Tensor> out = Interpreters.under(this, () -> Interpreters.current().cond(p, t, f, where));
        return duals(out, shape[0]);
    }

    private Supplier<List<Tensor>> branch(Supplier<List<Tensor>> body, boolean[][] floating) {
        return () -> {
            List<Tensor> res = Interpreters.with(this, body);
            boolean[] carried = new boolean[res.size()];
            for (int k = 0; k < carried.length; k++) {
                carried[k] = res.get(k).dtype().isFloating();
            }
            floating[0] = carried;
            return flatten(res, carried);
        };
    }

    /** Primals, then the tangents of the floating ones (zeros where none), all of the level below. */
    private List<Tensor> flatten(List<Tensor> values, boolean[] carried) {
        List<Tensor> flat = new ArrayList<>(values.size() * 2);
        for (Tensor v : values) {
            flat.add(primal(v));
        }
        for (int k = 0; k < values.size(); k++) {
            if (carried[k]) {
                Tensor t = tangent(values.get(k));
                flat.add(t != null ? t : ArrayAdRules.zerosLike(primal(values.get(k))));
            }
        }
        return flat;
    }

    private List<Tensor> duals(List<Tensor> flat, boolean[] carried) {
        int n = carried.length;
        List<Tensor> out = new ArrayList<>(n);
        int next = n;
        for (int k = 0; k < n; k++) {
            out.add(carried[k] ? dual(flat.get(k), flat.get(next++)) : flat.get(k));
        }
        return out;
    }


    private static SourceLocation located(SourceLocation where) {
        return where != null ? where : SourceLocation.capture();
    }
}
