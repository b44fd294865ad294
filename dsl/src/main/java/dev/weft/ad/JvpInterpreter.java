package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.graph.GraphEvaluator;
import dev.weft.prim.CondParams;
import dev.weft.prim.CustomVjpParams;
import dev.weft.prim.LoopParams;
import dev.weft.prim.WhileParams;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.util.ArrayList;
import java.util.List;

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
    protected Tensor pvary(Tensor t, CommHandle comm) {
        Dual d = mine(t);
        if (d == null) {
            return pvaryBelow(t, comm);
        }
        Tensor p = pvaryBelow(d.primal(), comm);
        return dual(p, pvaryBelow(d.tangent(), comm));
    }

    /** Its errors capture the user's line when raised, within the user's call. */
    @Override
    public boolean keepsLocations() {
        return false;
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        if (AdRules.jointJvpRule(prim).isPresent()) {
            return joint(prim, params, args, where);
        }
        if (params instanceof CustomVjpParams p) {
            return CustomAdRules.customVjp(this, p, args, located(where));
        }
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
        return Interpreters.current() instanceof LinearRecorder r ? r.zero(primal)
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
     * A primitive whose rule computes outputs and tangents together (control flow): every floating value gets a
     * tangent, zeros where none, so that all ranks follow one schedule. Right above reverse mode's recorder a loop
     * is {@link ReverseLoop}, a cond on a traced predicate {@link ReverseCond}, one on a concrete predicate the
     * branch it picks, evaluated at this level, and anything else (a custom JVP) its rule, which the recorder
     * linearises.
     */
    private <P extends Params> List<Tensor> joint(Primitive<P> prim, Params params, List<Tensor> args,
                                                  SourceLocation where) {
        JointJvpRule<P> rule = AdRules.jointJvpRule(prim).orElseThrow();
        LinearRecorder recorder = Interpreters.under(this, () -> Interpreters.current() instanceof LinearRecorder r
                ? r : null);
        if (recorder != null && params instanceof CondParams c && TensorAccess.data(args.getFirst()) != null) {
            // a concrete predicate (eager): the branch it picks, evaluated here, so the recorder sees its operations;
            // its results are typed across ranks as the cond's, whichever branch ran, as when compiled
            List<Variance> in = args.stream().map(a -> recorder.variance(primal(a))).toList();
            List<Variance> typed = RegionVariance.cond(c, in);
            List<Tensor> outs = GraphEvaluator.branch(c, args);
            List<Tensor> results = new ArrayList<>(outs.size());
            for (int k = 0; k < outs.size(); k++) {
                Tensor p = primal(outs.get(k)), t = tangent(outs.get(k));
                Variance v = typed.get(k);
                recorder.assume(p, v);
                results.add(dual(p, t == null ? null : recorder.varyTo(t, v)));
            }
            return results;
        }
        List<Tensor> primals = new ArrayList<>(args.size());
        List<Tensor> tangents = new ArrayList<>(args.size());
        for (Tensor a : args) {
            primals.add(primal(a));
            tangents.add(tangent(a));
        }
        SourceLocation at = located(where);
        if (recorder != null && params instanceof WhileParams) {
            if (tangents.stream().anyMatch(java.util.Objects::nonNull)) {
                throw new WeftException(at, "reverse mode (grad, vjp) cannot differentiate a whileLoop, as in JAX:"
                        + " the steps it would have to store are not known in advance; use Weft.fori with a bound on"
                        + " the steps (Weft.cond skipping those past convergence), or forward mode (jvp)");
            }
            return Interpreters.under(this, () -> Bind.bindAt(at, prim, params, primals));
        }
        JointJvpRule.Result r = Interpreters.under(this, () -> recorder == null
                ? rule.jvp(prim.paramsType().cast(params), primals, tangents, at)
                : params instanceof LoopParams loop ? ReverseLoop.apply(recorder, loop, primals, tangents, at)
                : params instanceof CondParams cond ? ReverseCond.apply(recorder, cond, primals, tangents, at)
                : rule.jvp(prim.paramsType().cast(params), primals, tangents, at));
        List<Tensor> results = new ArrayList<>(r.outputs().size());
        for (int i = 0; i < r.outputs().size(); i++) {
            results.add(dual(r.outputs().get(i), r.tangents().get(i)));
        }
        return results;
    }

    private static SourceLocation located(SourceLocation where) {
        return where != null ? where : SourceLocation.capture();
    }
}
