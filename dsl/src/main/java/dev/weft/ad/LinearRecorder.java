package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Aval;
import dev.weft.comm.Agreement;
import dev.weft.comm.Replicas;
import dev.weft.spi.Bind;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Effect;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import dev.weft.spi.Traced;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
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
    /** A linear value: a tangent of the function being differentiated, typed across ranks as its primal is. */
    record Linear(Aval aval, int id, Variance variance, LinearRecorder owner) implements Traced {
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
    /** The variance of the known values computed at this level, and of those assumed (a region's parameters). */
    private final Map<Tensor, Variance> variances = new WeakHashMap<>();
    /** The recorder of the enclosing function, whose values a region traced here captures; or {@code null}. */
    private final LinearRecorder parent;
    /** The implicit pvarys on the tape, whose conditions the pullback settles before transposing. */
    private final List<Pvary> pvarys = new ArrayList<>();
    private int next;
    /** Set while a JVP rule runs: a communication with no operands (a receive) is then a tangent's, recorded. */
    private boolean inRule;

    LinearRecorder() {
        this(null);
    }

    /** A recorder for a region (a loop body, a branch) whose captured values {@code parent} has typed. */
    LinearRecorder(LinearRecorder parent) {
        this.parent = parent;
    }

    /** A fresh linear input of {@code aval} and {@code variance}. */
    Tensor input(Aval aval, Variance variance) {
        return TensorAccess.traced(new Linear(aval, next++, variance, this));
    }

    /**
     * The variance of {@code primal} as an input of the differentiated function: varying over every communicator
     * (each rank its own), except those it was marked {@code replicated} over.
     */
    Variance inputVariance(Tensor primal) {
        return Variance.replicatedOver(Replicas.over(primal));
    }

    /** Types {@code value} (a region's parameter) as {@code variance}. */
    void assume(Tensor value, Variance variance) {
        variances.put(value, variance);
    }

    /**
     * The variance of {@code t}: a tangent's, a known value's computed here or in the enclosing function, or that of
     * a value from outside: invariant over the communicators it was marked {@code replicated} on, and elsewhere, if
     * concrete (a constant, a captured eager tensor), exactly when every rank holds the same; a traced value from
     * outside (an argument of the compiled method) varies.
     */
    Variance variance(Tensor t) {
        Linear l = linear(t);
        if (l != null) {
            return l.variance();
        }
        for (LinearRecorder r = this; r != null; r = r.parent) {
            Variance v = r.variances.get(t);
            if (v != null) {
                return v;
            }
        }
        Variance v = TensorAccess.data(t) != null ? Variance.outside(t) : Variance.VARYING;
        for (CommHandle c : Replicas.over(t)) {
            v = v.invariantOver(c);
        }
        return v;
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

    /**
     * A linear zero for {@code primal}: recorded operations on it are transposed, its cotangent dropped. It stands in
     * for the tangent another rank's operand may have, so it is typed varying, as a function's input is: every rank
     * then makes the same values varying, and transposes the same collectives.
     */
    Tensor zero(Tensor primal) {
        return input(TensorAccess.aval(primal), Variance.VARYING);
    }

    Linear linear(Tensor t) {
        return t != null && TensorAccess.traced(t) instanceof Linear l && l.owner() == this ? l : null;
    }

    /** Its errors capture the user's line when raised, within the user's call. */
    @Override
    public boolean keepsLocations() {
        return false;
    }

    @Override
    public List<Tensor> bind(Primitive<?> prim, Params params, List<Tensor> args, List<Aval> outAvals,
                             SourceLocation where) {
        List<Variance> types = new ArrayList<>(args.size());
        boolean linear = false;
        for (Tensor a : args) {
            types.add(variance(a));
            linear |= linear(a) != null;
        }
        VarianceRule.Typing typing = AdRules.typing(prim, params, types, outAvals.size());
        if (!linear && !(inRule && args.isEmpty() && prim.effect(params) instanceof Effect.Ordered)) {
            Tensor[] in = args.toArray(Tensor[]::new);
            List<Tensor> outs = Interpreters.under(this, () -> Bind.bind(prim, params, in));
            for (int k = 0; k < outs.size(); k++) {
                variances.put(outs.get(k), typing.results().get(k));
            }
            return outs;
        }
        if (!AdRules.hasTranspose(prim)) {
            throw new WeftException(where != null ? where : SourceLocation.capture(), "reverse mode: " + prim.name()
                    + " is applied to a tangent but has no transpose rule (its JVP rule is not linear)");
        }
        List<Tensor> known = new ArrayList<>(args.size());
        List<Integer> ids = new ArrayList<>(args.size());
        List<Aval> inputs = new ArrayList<>(args.size());
        for (Tensor a : args) {
            Linear l = linear(a);
            if (l != null) {
                l = linear(varyTo(a, typing.operands()));
            }
            known.add(l == null ? a : null);
            ids.add(l == null ? -1 : l.id());
            inputs.add(TensorAccess.aval(a));
        }
        List<Linear> outs = fresh(outAvals, typing.results());
        List<Tensor> results = outs.stream().map(TensorAccess::traced).toList();
        Equation eq = new Equation(prim, params, Collections.unmodifiableList(known), ids, inputs, outs,
                prim.effect(params) instanceof Effect.Ordered, null);
        tape.add(eq);
        return results;
    }

    /**
     * An explicit pvary: a tangent is taken to be invariant over {@code comm} (it is the cotangent of an invariant
     * result, whatever this level inferred of it) and made varying, its transpose an allreduce SUM; a known value
     * is typed varying over {@code comm}, as a new tensor of the same value.
     */
    @Override
    protected Tensor pvary(Tensor t, CommHandle comm) {
        Linear l = linear(t);
        if (l == null) {
            Tensor below = pvaryBelow(t, comm);
            // a new tensor of the same value, to carry its own type: the traced value rewrapped, a concrete one copied
            Tensor alias = TensorAccess.data(below) == null ? TensorAccess.traced(TensorAccess.traced(below))
                    : Interpreters.under(this, () -> below.mul(1));
            variances.put(alias, variance(t).varyingOver(comm));
            return alias;
        }
        Pvary p = new Pvary(List.of(new Pvary.Step(comm, Set.of(), null)));
        return record(null, List.of(l), List.of(l.aval()), List.of(l.variance().varyingOver(comm)), List.of(), true,
                (k, cts) -> List.of(p.transpose(cts.getFirst(), settled))).getFirst();
    }

    /**
     * The tangent {@code t}, made varying wherever it is invariant and {@code to} is not (JAX's implicit
     * {@code pvary}: the value as it is, transposed to an allreduce SUM over each such communicator); {@code t} itself
     * when nothing changes. Where invariance rests on values from outside, the pullback settles whether it holds
     * ({@link Agreement}) before transposing.
     */
    Tensor varyTo(Tensor t, Variance to) {
        Linear l = linear(t);
        if (l == null) {
            return t;
        }
        Set<CommHandle> comms = new LinkedHashSet<>(l.variance().named());
        comms.addAll(to.named());
        List<Pvary.Step> steps = new ArrayList<>();
        for (CommHandle c : comms) {
            Set<Tensor> from = l.variance().over(c), onto = to.over(c);
            if (from != null && (onto == null || !onto.equals(from))) {
                steps.add(new Pvary.Step(c, from, onto));
            }
        }
        if (steps.isEmpty()) {
            return t;
        }
        Pvary p = new Pvary(List.copyOf(steps));
        pvarys.add(p);
        return record(null, List.of(l), List.of(l.aval()), List.of(l.variance().meet(to)), List.of(), true,
                (k, cts) -> List.of(p.transpose(cts.getFirst(), settled))).getFirst();
    }

    /**
     * Records an operation whose transpose is {@code transposer} (a loop, recorded whole), with linear inputs
     * {@code in}; its outputs are fresh linear values of {@code outAvals}.
     */
    List<Tensor> record(Primitive<?> prim, List<Linear> in, List<Aval> outAvals, List<Variance> outVariances,
                        List<Tensor> known, boolean ordered, Transposer transposer) {
        List<Linear> outs = fresh(outAvals, outVariances);
        List<Tensor> results = outs.stream().map(TensorAccess::traced).toList();
        tape.add(new Equation(prim, null, List.copyOf(known), in.stream().map(Linear::id).toList(),
                in.stream().map(Linear::aval).toList(), outs, ordered, transposer));
        return results;
    }

    private List<Linear> fresh(List<Aval> avals, List<Variance> variances) {
        List<Linear> out = new ArrayList<>(avals.size());
        for (int k = 0; k < avals.size(); k++) {
            out.add(new Linear(avals.get(k), next++, variances.get(k), this));
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
        settle();
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

    /** Whether each condition of the tape's pvarys holds, by communicator, once settled. */
    private final Map<CommHandle, Map<Tensor, Boolean>> settled = new HashMap<>();

    /** How many of {@link #pvarys} have been settled. */
    private int settledPvarys;

    /**
     * Compares the values from outside on which the pvarys recorded since the last pullback rest, across the ranks
     * of each communicator they are over: one collective per communicator, on every rank whose tape has such a
     * pvary, whether or not its own rest on anything (another rank's may, where it used a constant where this one
     * used an input), so that every rank settles alike.
     */
    private void settle() {
        Map<CommHandle, Set<Tensor>> open = new LinkedHashMap<>();
        for (Pvary p : pvarys.subList(settledPvarys, pvarys.size())) {
            for (Pvary.Step step : p.steps()) {
                Map<Tensor, Boolean> done = settled.getOrDefault(step.comm(), Map.of());
                Set<Tensor> todo = open.computeIfAbsent(step.comm(), c -> new LinkedHashSet<>());
                for (Set<Tensor> s : Arrays.asList(step.from(), step.onto())) {
                    if (s != null) {
                        s.stream().filter(t -> !done.containsKey(t)).forEach(todo::add);
                    }
                }
            }
        }
        settledPvarys = pvarys.size();
        open.forEach((comm, values) -> {
            List<Tensor> list = List.copyOf(values);
            boolean[] same = Agreement.sameLists(comm, list);
            Map<Tensor, Boolean> done = settled.computeIfAbsent(comm, c -> new HashMap<>());
            for (int i = 0; i < same.length; i++) {
                done.put(list.get(i), same[i]);
            }
        });
    }

    @SuppressWarnings("unchecked")
    private static <P extends Params> List<Tensor> transpose(Equation eq, List<Tensor> known, List<Tensor> cts) {
        Primitive<P> prim = (Primitive<P>) eq.prim();
        return AdRules.transposeRule(prim).orElseThrow()
                .transpose(prim.paramsType().cast(eq.params()), cts, known, eq.inputs());
    }
}
