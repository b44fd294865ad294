package dev.weft.ad;

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
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Reverse mode's partial evaluator, below a {@link JvpInterpreter}: the tangents are {@link Linear} values of this
 * level. An operation on known values only (the primal computation, and the factors of the JVP rules) runs one
 * level down; one with a linear operand is recorded on the tape. {@link #pullback} then walks the tape backwards
 * with each primitive's {@link TransposeRule}, at the level where it is called. The tape keeps the known operands
 * it needs (the residuals): reverse mode's memory is what the program computes on the way, as for any tape.
 *
 * <p>A {@code fori} is one equation ({@link ReverseLoop}): a loop forward that stores what its transpose needs, and
 * a loop back; a {@code cond} on a traced predicate is one equation too ({@link ReverseCond}), a cond each way.
 */
final class LinearRecorder extends TransformLevel {
    /** A linear value: a tangent of the function being differentiated. */
    record Linear(Aval aval, int id, LinearRecorder owner) implements Traced {
    }

    /**
     * One recorded application: {@code known} holds each constant operand, {@code null} for linear ones; or, with a
     * {@code custom} transpose, the values it needs, {@code ids} then naming its linear inputs only. {@code ordered}
     * equations are transposed on every rank whatever their cotangents, to keep one schedule.
     */
    private record Equation(Primitive<?> prim, Params params, List<Tensor> known, List<Integer> ids,
                            List<Aval> inputs, List<Linear> outputs, boolean ordered, Transposer custom) {
    }

    /** The transpose of an equation recorded whole: cotangents of its linear inputs from those of its outputs. */
    @FunctionalInterface
    interface Transposer {
        /**
         * @param known      the equation's known values, as the caller of the pullback sees them
         * @param cotangents of its outputs, zeros where none
         */
        List<Tensor> transpose(List<Tensor> known, List<Tensor> cotangents);
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
        List<Linear> outs = fresh(outAvals);
        List<Tensor> results = outs.stream().map(TensorAccess::traced).toList();
        Equation eq = new Equation(prim, params, Collections.unmodifiableList(known), ids, inputs, outs,
                prim.effect(params) instanceof Effect.Ordered, null);
        tape.add(eq);
        return results;
    }

    /**
     * Records an operation whose transpose is {@code transposer} (a loop, recorded whole), with linear inputs
     * {@code in}; its outputs are fresh linear values of {@code outAvals}.
     */
    List<Tensor> record(Primitive<?> prim, List<Linear> in, List<Aval> outAvals, List<Tensor> known,
                        boolean ordered, Transposer transposer) {
        List<Linear> outs = fresh(outAvals);
        List<Tensor> results = outs.stream().map(TensorAccess::traced).toList();
        tape.add(new Equation(prim, null, List.copyOf(known), in.stream().map(Linear::id).toList(),
                in.stream().map(Linear::aval).toList(), outs, ordered, transposer));
        return results;
    }

    private List<Linear> fresh(List<Aval> avals) {
        List<Linear> out = new ArrayList<>(avals.size());
        for (Aval a : avals) {
            out.add(new Linear(a, next++, this));
        }
        return out;
    }

    /** Every known operand on the tape, in order (with repeats). */
    List<Tensor> knownOperands() {
        List<Tensor> out = new ArrayList<>();
        for (Equation eq : tape) {
            for (Tensor k : eq.known()) {
                if (k != null) {
                    out.add(k);
                }
            }
        }
        return out;
    }

    /** True if an equation on the tape must be transposed on every rank (it communicates). */
    boolean ordered() {
        return tape.stream().anyMatch(Equation::ordered);
    }

    /**
     * The cotangents of {@code inputs} given those of {@code outputs} (tangents recorded here, or values that do
     * not depend on the inputs, whose cotangents are dropped), computed at the calling level.
     */
    List<Tensor> pullback(List<Tensor> outputs, List<Tensor> inputs, List<Tensor> cotangents) {
        List<Linear> outs = outputs.stream().map(this::linear).toList();
        List<Linear> ins = inputs.stream().map(this::linear).toList();
        List<Tensor> cts = pullback(outs, cotangents, ins, UnaryOperator.identity());
        List<Tensor> result = new ArrayList<>(inputs.size());
        for (int i = 0; i < inputs.size(); i++) {
            Aval a = TensorAccess.aval(inputs.get(i));
            result.add(cts.get(i) != null ? cts.get(i) : Tensor.zeros(a.dtype(), a.shape().dims()));
        }
        return result;
    }

    /**
     * The cotangents of {@code inputs} ({@code null} where zero, or for a {@code null} input) given those of
     * {@code outputs} ({@code null} entries are skipped), each known operand read through {@code known}.
     */
    List<Tensor> pullback(List<Linear> outputs, List<Tensor> cotangents, List<Linear> inputs,
                          UnaryOperator<Tensor> known) {
        Map<Integer, Tensor> ct = new HashMap<>();
        for (int k = 0; k < outputs.size(); k++) {
            if (outputs.get(k) != null) {
                ct.merge(outputs.get(k).id(), cotangents.get(k), Tensor::add);
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
            if (any || eq.ordered()) {
                List<Tensor> knownNow = new ArrayList<>(eq.known().size());
                for (Tensor k : eq.known()) {
                    knownNow.add(k == null ? null : known.apply(k));
                }
                List<Tensor> inCts = eq.custom() != null ? eq.custom().transpose(knownNow, outCts)
                        : transpose(eq, knownNow, outCts);
                for (int i = 0; i < eq.ids().size(); i++) {
                    if (eq.ids().get(i) >= 0 && inCts.get(i) != null) {
                        ct.merge(eq.ids().get(i), inCts.get(i), Tensor::add);
                    }
                }
            }
        }
        List<Tensor> result = new ArrayList<>(inputs.size());
        for (Linear l : inputs) {
            result.add(l == null ? null : ct.get(l.id()));
        }
        return result;
    }

    @SuppressWarnings("unchecked")
    private static <P extends Params> List<Tensor> transpose(Equation eq, List<Tensor> known, List<Tensor> cts) {
        Primitive<P> prim = (Primitive<P>) eq.prim();
        return AdRules.transposeRule(prim).orElseThrow()
                .transpose(prim.paramsType().cast(eq.params()), cts, known, eq.inputs());
    }
}
