package dev.weft.ad;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Effect;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Reverse mode's partial evaluator, below a {@link JvpInterpreter}: the tangents are {@link Linear} values of this
 * level. An operation on known values only (the primal computation, and the factors of the JVP rules) runs one
 * level down; one with a linear operand is recorded on the tape. {@link #pullback} then walks the tape backwards
 * with each primitive's {@link TransposeRule}, at the level where it is called. The tape keeps the known operands
 * it needs (the residuals): reverse mode's memory is what the program computes on the way, as for any tape.
 *
 * <p>A {@code fori} is unrolled (its iterations recorded one after another), and a {@code cond} on a traced
 * predicate evaluates both branches and selects their results, which is right for branches without effects.
 */
final class LinearRecorder extends TransformLevel {
    /** A linear value: a tangent of the function being differentiated. */
    record Linear(Aval aval, int id, LinearRecorder owner) implements Traced {
    }

    /** One recorded application: {@code known} holds each constant operand, {@code null} for linear ones. */
    private record Equation(Primitive<?> prim, Params params, List<Tensor> known, List<Integer> ids,
                            List<Aval> inputs, List<Linear> outputs) {
    }

    private final List<Equation> tape = new ArrayList<>();
    private int next;
    /** Set while a JVP rule runs: a communication with no operands (a receive) is then a tangent's, recorded. */
    private boolean inRule;

    /** A fresh linear input of {@code aval}. */
    Tensor input(Aval aval) {
        return TensorAccess.traced(new Linear(aval, next++, this));
    }

    /** Runs a JVP rule, during which a receive of a tangent is recorded rather than run. */
    <T> T inRule(Supplier<T> rule) {
        boolean outer = inRule;
        inRule = true;
        try {
            return rule.get();
        } finally {
            inRule = outer;
        }
    }

    /** A linear zero of {@code aval}: recorded operations on it are transposed, its cotangent dropped. */
    Tensor zero(Aval aval) {
        return input(aval);
    }

    Linear linear(Tensor t) {
        return t != null && TensorAccess.traced(t) instanceof Linear l && l.owner() == this ? l : null;
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        List<Tensor> known = new ArrayList<>(args.size());
        List<Integer> ids = new ArrayList<>(args.size());
        List<Aval> inputs = new ArrayList<>(args.size());
        boolean linear = false;
        for (Tensor a : args) {
            Linear l = linear(a);
            known.add(l == null ? a : null);
            ids.add(l == null ? -1 : l.id());
            inputs.add(TensorAccess.aval(a));
            linear |= l != null;
        }
        if (!linear && !(inRule && args.isEmpty() && prim.effect(params) instanceof Effect.Ordered)) {
            Tensor[] in = args.toArray(Tensor[]::new);
            return Interpreters.under(this, () -> Bind.bind(prim, params, in));
        }
        if (!AdRules.hasTranspose(prim)) {
            throw new WeftException(where != null ? where : SourceLocation.capture(), "reverse mode: " + prim.name()
                    + " is applied to a tangent but has no transpose rule (its JVP rule is not linear)");
        }
        List<Linear> outs = new ArrayList<>(outAvals.size());
        List<Tensor> results = new ArrayList<>(outAvals.size());
        for (Aval a : outAvals) {
            Linear l = new Linear(a, next++, this);
            outs.add(l);
            results.add(TensorAccess.traced(l));
        }
        Equation eq = new Equation(prim, params, Collections.unmodifiableList(known), ids, inputs, outs);
        tape.add(eq);
        return results;
    }

    @Override
    public List<Tensor> fori(int lo, int hi, List<Tensor> init, BiFunction<Tensor, List<Tensor>, List<Tensor>> body,
                             SourceLocation where) {
        List<Tensor> carry = init;
        for (int i = lo; i < hi; i++) {
            carry = body.apply(Tensor.scalar(DType.I32, i), carry);
        }
        return carry;
    }

    @Override
    public List<Tensor> cond(Tensor pred, Supplier<List<Tensor>> onTrue, Supplier<List<Tensor>> onFalse,
                             SourceLocation where) {
        if (TensorAccess.data(pred) != null) {
            return pred.item() != 0 ? onTrue.get() : onFalse.get();
        }
        List<Tensor> t = onTrue.get();
        List<Tensor> f = onFalse.get();
        List<Tensor> out = new ArrayList<>(t.size());
        for (int k = 0; k < t.size(); k++) {
            out.add(Tensor.where(pred, t.get(k), f.get(k)));
        }
        return out;
    }


    /**
     * The cotangents of {@code inputs} given those of {@code outputs} (tangents recorded here, or values that do
     * not depend on the inputs, whose cotangents are dropped), computed at the calling level.
     */
    List<Tensor> pullback(List<Tensor> outputs, List<Tensor> inputs, List<Tensor> cotangents) {
        Map<Integer, Tensor> ct = new HashMap<>();
        for (int k = 0; k < outputs.size(); k++) {
            Linear l = linear(outputs.get(k));
            if (l != null) {
                ct.merge(l.id(), cotangents.get(k), Tensor::add);
            }
        }
        for (int e = tape.size() - 1; e >= 0; e--) {
            Equation eq = tape.get(e);
            List<Tensor> outCts = new ArrayList<>(eq.outputs().size());
            boolean any = false;
            for (Linear l : eq.outputs()) {
                Tensor c = ct.remove(l.id());
                any |= c != null;
                outCts.add(c != null ? c : Tensor.zeros(l.aval().dtype(), l.aval().shape().dims()));
            }
            // A communication is transposed on every rank, whatever its cotangents, to keep one schedule.
            if (any || eq.prim().effect(eq.params()) instanceof Effect.Ordered) {
                List<Tensor> inCts = transpose(eq, outCts);
                for (int i = 0; i < eq.ids().size(); i++) {
                    if (eq.ids().get(i) >= 0 && inCts.get(i) != null) {
                        ct.merge(eq.ids().get(i), inCts.get(i), Tensor::add);
                    }
                }
            }
        }
        List<Tensor> result = new ArrayList<>(inputs.size());
        for (Tensor in : inputs) {
            Linear l = linear(in);
            Tensor c = l == null ? null : ct.get(l.id());
            Aval a = TensorAccess.aval(in);
            result.add(c != null ? c : Tensor.zeros(a.dtype(), a.shape().dims()));
        }
        return result;
    }

    @SuppressWarnings("unchecked")
    private static <P extends Params> List<Tensor> transpose(Equation eq, List<Tensor> cts) {
        Primitive<P> prim = (Primitive<P>) eq.prim();
        return AdRules.transposeRule(prim).orElseThrow()
                .transpose(prim.paramsType().cast(eq.params()), cts, eq.known(), eq.inputs());
    }
}
