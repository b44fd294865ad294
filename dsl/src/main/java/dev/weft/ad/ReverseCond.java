package dev.weft.ad;

import dev.weft.Tensor;
import dev.weft.graph.ControlFlow;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.Region;
import dev.weft.graph.RegionTrace;
import dev.weft.graph.Var;
import dev.weft.prim.CondParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reverse mode of a {@code cond} on a traced predicate (JAX's partial evaluation of a cond): a {@code cond} each
 * way, so that only the branch taken runs, forward and back. Selecting between both branches' results instead
 * would pull a zero cotangent back through the branch not taken, and an infinite slope there (a {@code sqrt} at 0
 * that the branch exists to avoid) turns it into NaN.
 *
 * <p>Each branch is traced into a region on the duals of a fresh forward-mode level over a fresh
 * {@link LinearRecorder}, as a {@code fori} body is ({@link ReverseLoop}): what it computes on known values is the
 * branch of the <em>forward cond</em>, which returns its results and the residuals its tape keeps, zeros standing in
 * for the other branch's; what it applies to tangents goes on its tape. The cond is then one equation on the
 * enclosing recorder, whose transpose is the <em>cond back</em>: on the same predicate, the taken branch's tape
 * pulls the results' cotangents back to the captured values'. Each branch is traced twice (once to learn its
 * residuals, whose zeros the other then returns).
 */
final class ReverseCond {
    private final CondParams cond;
    private final List<Tensor> captures;
    private final boolean[] tangentCapture;
    private final boolean[] tangentResult;
    private final SourceLocation where;
    /** The enclosing recorder, which types what the branches capture. */
    private final LinearRecorder outer;
    /** The results' variance across ranks: where either branch's or the predicate varies. */
    private final List<Variance> resultVariance;

    private ReverseCond(CondParams cond, List<Tensor> captures, boolean[] tangentCapture, boolean[] tangentResult,
                        SourceLocation where, LinearRecorder outer, List<Variance> resultVariance) {
        this.outer = outer;
        this.resultVariance = resultVariance;
        this.cond = cond;
        this.captures = captures;
        this.tangentCapture = tangentCapture;
        this.tangentResult = tangentResult;
        this.where = where;
    }

    /**
     * The cond's results and their tangents (linear values of {@code recorder}), for {@code primals} (the predicate,
     * then the captures) with {@code tangents} (linear values of {@code recorder}, or {@code null} for none). Runs
     * at the level of {@code recorder}, which is the current interpreter.
     */
    static JointJvpRule.Result apply(LinearRecorder recorder, CondParams p, List<Tensor> primals,
                                     List<Tensor> tangents, SourceLocation where) {
        List<Tensor> captures = primals.subList(1, primals.size());
        boolean[] tangentCapture = new boolean[captures.size()];
        List<LinearRecorder.Linear> in = new ArrayList<>();
        for (int j = 0; j < captures.size(); j++) {
            LinearRecorder.Linear l = recorder.linear(tangents.get(1 + j));
            tangentCapture[j] = l != null;
            if (l != null) {
                in.add(l);
            }
        }
        List<Var> results = p.onTrue().results();
        boolean[] tangentResult = new boolean[results.size()];
        for (int k = 0; k < tangentResult.length; k++) {
            tangentResult[k] = results.get(k).aval().dtype().isFloating();
        }
        if (in.isEmpty()) {
            // nothing to differentiate: the cond as it is, its results without tangents
            List<Tensor> outs = Bind.bindAt(where, Prims.COND, p, primals);
            return new JointJvpRule.Result(outs, Arrays.asList(new Tensor[outs.size()]));
        }
        List<Variance> resultVariance = RegionVariance.cond(p, primals.stream().map(recorder::variance).toList());
        return new ReverseCond(p, captures, tangentCapture, tangentResult, where, recorder, resultVariance)
                .run(recorder, primals.getFirst(), in);
    }

    private JointJvpRule.Result run(LinearRecorder recorder, Tensor pred, List<LinearRecorder.Linear> in) {
        List<Aval> onTrue = avals(branch(cond.onTrue(), List.of(), List.of()).residuals());
        List<Aval> onFalse = avals(branch(cond.onFalse(), List.of(), List.of()).residuals());
        Linearized t = branch(cond.onTrue(), List.of(), onFalse);
        Linearized f = branch(cond.onFalse(), onTrue, List.of());
        if (t.residuals().size() != onTrue.size() || f.residuals().size() != onFalse.size()) {
            throw new IllegalStateException("a cond branch's residuals differ between its two traces");
        }
        int n = tangentResult.length;
        List<Tensor> captured = RegionTrace.sharedCaptures(t.trace(), f.trace());
        List<Tensor> inputs = new ArrayList<>();
        inputs.add(pred);
        inputs.addAll(captured);
        List<Tensor> outs = Interpreters.under(recorder, () -> Bind.bindAt(where, Prims.COND,
                new CondParams(t.trace().region(captured), f.trace().region(captured)), inputs));
        for (int k = 0; k < n; k++) {
            recorder.assume(outs.get(k), resultVariance.get(k));
        }
        List<Tensor> known = new ArrayList<>();
        known.add(pred);
        known.addAll(outs.subList(n, outs.size()));
        known.addAll(t.invariants());
        known.addAll(f.invariants());
        List<Aval> outAvals = new ArrayList<>();
        List<Variance> outVariances = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (tangentResult[k]) {
                outAvals.add(TensorAccess.aval(outs.get(k)));
                outVariances.add(resultVariance.get(k));
            }
        }
        List<Tensor> linearOut = recorder.record(Prims.COND, in, outAvals, outVariances, known,
                t.inner().ordered() || f.inner().ordered(), (k, cts) -> back(t, f, k, cts));
        List<Tensor> tangents = new ArrayList<>(n);
        int next = 0;
        for (int k = 0; k < n; k++) {
            tangents.add(tangentResult[k] ? linearOut.get(next++) : null);
        }
        return new JointJvpRule.Result(outs.subList(0, n), tangents);
    }

    /**
     * {@code region} traced into a region returning [results..., zeros of {@code before}..., its residuals...,
     * zeros of {@code after}...].
     */
    private Linearized branch(Region region, List<Aval> before, List<Aval> after) {
        RegionTrace trace = RegionTrace.open(List.of(), where);
        LinearRecorder inner = new LinearRecorder(outer);
        JvpInterpreter jvp = new JvpInterpreter();
        List<LinearRecorder.Linear> linearIn = new ArrayList<>();
        List<Tensor> args = new ArrayList<>();
        for (int j = 0; j < captures.size(); j++) {
            args.add(tangentCapture[j] ? Linearized.dual(jvp, inner, captures.get(j), linearIn) : captures.get(j));
        }
        List<Tensor> outs = Interpreters.with(trace, () -> Interpreters.with(inner, () -> Interpreters.with(jvp,
                () -> GraphEvaluator.evaluate(region, args))));
        List<Tensor> results = new ArrayList<>();
        List<LinearRecorder.Linear> linearOut = new ArrayList<>();
        for (int k = 0; k < outs.size(); k++) {
            results.add(jvp.primal(outs.get(k)));
            if (tangentResult[k]) {
                Tensor t = jvp.tangent(outs.get(k));
                linearOut.add(t == null ? null : inner.linear(inner.varyTo(t, resultVariance.get(k))));
            }
        }
        Linearized found = Linearized.of(trace, inner, linearIn, linearOut);
        List<Tensor> res = found.residuals();
        Interpreters.with(trace, () -> {
            before.forEach(a -> results.add(Tensor.zeros(a.dtype(), a.shape().dims())));
            results.addAll(res);
            after.forEach(a -> results.add(Tensor.zeros(a.dtype(), a.shape().dims())));
            trace.close(results);
            return null;
        });
        return found;
    }

    /**
     * The cond back: {@code known} holds the predicate, the true branch's residuals, the false branch's, then the
     * invariants of each (as the pullback's caller sees them), {@code cts} the results' cotangents; returns those of
     * the recorded linear inputs (the tangent captures).
     */
    private List<Tensor> back(Linearized t, Linearized f, List<Tensor> known, List<Tensor> cts) {
        int nt = t.residuals().size(), nf = f.residuals().size();
        Map<Object, Tensor> onTrue = new HashMap<>(), onFalse = new HashMap<>();
        for (int r = 0; r < nt; r++) {
            onTrue.put(Linearized.key(t.residuals().get(r)), known.get(1 + r));
        }
        for (int r = 0; r < nf; r++) {
            onFalse.put(Linearized.key(f.residuals().get(r)), known.get(1 + nt + r));
        }
        int at = 1 + nt + nf;
        for (int v = 0; v < t.invariants().size(); v++) {
            onTrue.put(Linearized.key(t.invariants().get(v)), known.get(at++));
        }
        for (int v = 0; v < f.invariants().size(); v++) {
            onFalse.put(Linearized.key(f.invariants().get(v)), known.get(at++));
        }
        return ControlFlow.cond(known.getFirst(), () -> pullback(t, onTrue, cts), () -> pullback(f, onFalse, cts),
                where);
    }

    /** The captures' cotangents through {@code b}'s tape, zeros where none. */
    private static List<Tensor> pullback(Linearized b, Map<Object, Tensor> now, List<Tensor> cts) {
        List<Tensor> back = b.inner().pullback(b.linearOut(), cts, b.linearIn(),
                k -> now.getOrDefault(Linearized.key(k), k));
        List<Tensor> out = new ArrayList<>(back.size());
        for (int i = 0; i < back.size(); i++) {
            Aval a = b.linearIn().get(i).aval();
            out.add(back.get(i) != null ? back.get(i) : Tensor.zeros(a.dtype(), a.shape().dims()));
        }
        return out;
    }

    private static List<Aval> avals(List<Tensor> ts) {
        return ts.stream().map(TensorAccess::aval).toList();
    }

}
