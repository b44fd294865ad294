package dev.weft.ad;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.graph.GraphEvaluator;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.RegionTrace;
import dev.weft.graph.Var;
import dev.weft.prim.LoopParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reverse mode of a {@code fori} (JAX's partial evaluation of a loop body into known and linear parts): the loop
 * stays one loop each way, however many steps it takes.
 *
 * <p>The body is traced once into a region ({@link RegionTrace}) on the duals of a fresh forward-mode level over a
 * fresh {@link LinearRecorder}: what the primal computation and the JVP rules compute on known values becomes the
 * body of the <em>forward loop</em>, run at the level below the recorder; what they apply to tangents goes on the
 * inner recorder's tape. Each known value that tape keeps (a residual) is written, step by step, into a stacked
 * buffer the forward loop carries ({@code dynamic_update_slice} at the step's row). The loop is then one equation on
 * the enclosing recorder, whose transpose is the <em>loop back</em>: from the last step to the first, it reads the
 * step's residuals ({@code dynamic_slice}) and pulls the carries' cotangents back through the inner tape,
 * accumulating those of captured values.
 *
 * <p>Memory: the forward loop keeps every step's residuals, {@code steps × (bytes of one step's residuals)}, for
 * a body {@code c ← c·cos(c·w)} on {@code n} f64 elements three arrays of {@code n} per step (c, cos(c·w),
 * sin(c·w)); a residual that does not depend on the index or the carries is kept once. The body is traced twice
 * (once to learn the residuals' shapes).
 */
final class ReverseLoop {
    private final LoopParams loop;
    private final List<Tensor> captures;
    private final boolean[] tangentCarry;
    private final boolean[] tangentCapture;
    private final SourceLocation where;
    /** The enclosing recorder, which types what the body captures. */
    private final LinearRecorder outer;
    /** The carries' variance across ranks: where the initial carry or any step's result varies. */
    private final List<Variance> carryVariance;
    /** Per residual: whether it changes from step to step (stacked), or not (carried once, the last step's). */
    private boolean[] stacked;

    private ReverseLoop(LoopParams loop, List<Tensor> captures, boolean[] tangentCarry, boolean[] tangentCapture,
                        SourceLocation where, LinearRecorder outer, List<Variance> carryVariance) {
        this.outer = outer;
        this.carryVariance = carryVariance;
        this.loop = loop;
        this.captures = captures;
        this.tangentCarry = tangentCarry;
        this.tangentCapture = tangentCapture;
        this.where = where;
    }

    /**
     * The loop's final carries and their tangents (linear values of {@code recorder}), for initial carries and
     * captures {@code primals} with {@code tangents} (linear values of {@code recorder}, or {@code null} or known
     * zeros for none). Runs at the level of {@code recorder}, which is the current interpreter.
     */
    static JointJvpRule.Result apply(LinearRecorder recorder, LoopParams p, List<Tensor> primals,
                                     List<Tensor> tangents, SourceLocation where) {
        int n = p.body().results().size();
        List<Tensor> carries = primals.subList(0, n);
        List<Variance> carryVariance = RegionVariance.loop(p, primals.stream().map(recorder::variance).toList());
        boolean[] tangentCarry = new boolean[n];
        List<LinearRecorder.Linear> in = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            tangentCarry[k] = carries.get(k).dtype().isFloating();
            if (tangentCarry[k]) {
                Tensor t = recorder.linear(tangents.get(k)) != null ? tangents.get(k) : recorder.zero(carries.get(k));
                in.add(recorder.linear(recorder.varyTo(t, carryVariance.get(k))));
            }
        }
        boolean[] tangentCapture = new boolean[primals.size() - n];
        for (int j = 0; j < tangentCapture.length; j++) {
            LinearRecorder.Linear l = recorder.linear(tangents.get(n + j));
            tangentCapture[j] = l != null;
            if (l != null) {
                in.add(l);
            }
        }
        if (p.hi() <= p.lo()) {
            List<Tensor> t = new ArrayList<>(n);
            for (int k = 0; k < n; k++) {
                t.add(tangentCarry[k] ? tangents.get(k) : null);
            }
            return new JointJvpRule.Result(carries, t);
        }
        ReverseLoop r = new ReverseLoop(p, primals.subList(n, primals.size()), tangentCarry, tangentCapture, where,
                recorder, carryVariance);
        return r.run(recorder, carries, in);
    }

    private JointJvpRule.Result run(LinearRecorder recorder, List<Tensor> carries, List<LinearRecorder.Linear> in) {
        Linearized found = body(List.of(), null);
        Set<Var> variant = variant(found.trace().region(), 1 + carries.size());
        stacked = new boolean[found.residuals().size()];
        List<Aval> stackAvals = new ArrayList<>();
        for (int r = 0; r < stacked.length; r++) {
            Tensor res = found.residuals().get(r);
            Aval a = TensorAccess.aval(res);
            stacked[r] = variant.contains(((RegionTrace.Value) TensorAccess.traced(res)).var());
            long[] dims = new long[a.shape().rank() + 1];
            dims[0] = steps();
            System.arraycopy(a.shape().dims(), 0, dims, 1, a.shape().rank());
            stackAvals.add(stacked[r] ? Aval.of(a.dtype(), dims) : a);
        }
        Linearized body = body(stackAvals, stacked);
        if (body.residuals().size() != stackAvals.size()) {
            throw new IllegalStateException("the loop body's residuals differ between its two traces");
        }
        int n = carries.size();
        List<Tensor> init = new ArrayList<>(carries);
        List<Tensor> outs = Interpreters.under(recorder, () -> {
            for (Aval a : stackAvals) {
                init.add(Tensor.scalar(a.dtype(), 0).broadcastTo(a.shape().dims()));
            }
            init.addAll(body.trace().captured());
            return Bind.bindAt(where, Prims.FORI, new LoopParams(loop.lo(), loop.hi(), body.trace().region()), init);
        });
        for (int k = 0; k < n; k++) {
            recorder.assume(outs.get(k), carryVariance.get(k));
        }
        List<Tensor> known = new ArrayList<>(outs.subList(n, outs.size()));
        known.addAll(body.invariants());
        List<Aval> outAvals = new ArrayList<>();
        List<Variance> outVariances = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            if (tangentCarry[k]) {
                outAvals.add(TensorAccess.aval(carries.get(k)));
                outVariances.add(carryVariance.get(k));
            }
        }
        List<Tensor> linearOut = recorder.record(Prims.FORI, in, outAvals, outVariances, known,
                body.inner().ordered(),
                (k, cts) -> back(body, k, cts));
        List<Tensor> tangents = new ArrayList<>(n);
        int next = 0;
        for (int k = 0; k < n; k++) {
            tangents.add(tangentCarry[k] ? linearOut.get(next++) : null);
        }
        return new JointJvpRule.Result(outs.subList(0, n), tangents);
    }

    private int steps() {
        return loop.hi() - loop.lo();
    }

    /**
     * The body traced into a region with parameters [i, carries..., residual buffers of {@code stackAvals}...]
     * returning [carries..., buffers with this step's residuals...]: a {@code stacked} one has its step's row
     * written, another is the residual itself. With no buffers it only finds the residuals.
     */
    private Linearized body(List<Aval> stackAvals, boolean[] stacked) {
        List<Aval> avals = new ArrayList<>();
        avals.add(Aval.of(DType.I32));
        int n = tangentCarry.length;
        for (int k = 0; k < n; k++) {
            avals.add(loop.body().params().get(1 + k).aval());
        }
        avals.addAll(stackAvals);
        RegionTrace trace = RegionTrace.open(avals, where);
        List<Tensor> params = trace.params();
        LinearRecorder inner = new LinearRecorder(outer);
        inner.assume(params.getFirst(), Variance.INVARIANT);
        for (int k = 0; k < n; k++) {
            inner.assume(params.get(1 + k), carryVariance.get(k));
        }
        JvpInterpreter jvp = new JvpInterpreter();
        List<LinearRecorder.Linear> linearIn = new ArrayList<>();
        List<Tensor> args = new ArrayList<>();
        args.add(params.getFirst());
        for (int k = 0; k < n; k++) {
            args.add(tangentCarry[k] ? Linearized.dual(jvp, inner, params.get(1 + k), linearIn) : params.get(1 + k));
        }
        for (int j = 0; j < captures.size(); j++) {
            args.add(tangentCapture[j] ? Linearized.dual(jvp, inner, captures.get(j), linearIn) : captures.get(j));
        }
        List<Tensor> outs = Interpreters.with(trace, () -> Interpreters.with(inner, () -> Interpreters.with(jvp,
                () -> GraphEvaluator.evaluate(loop.body(), args))));
        List<Tensor> results = new ArrayList<>(n + stackAvals.size());
        List<LinearRecorder.Linear> linearOut = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            results.add(jvp.primal(outs.get(k)));
            if (tangentCarry[k]) {
                Tensor t = jvp.tangent(outs.get(k));
                linearOut.add(t == null ? null : inner.linear(inner.varyTo(t, carryVariance.get(k))));
            }
        }
        Linearized found = Linearized.of(trace, inner, linearIn, linearOut);
        List<Tensor> res = found.residuals();
        if (!stackAvals.isEmpty()) {
            Interpreters.with(trace, () -> {
                Tensor step = params.getFirst().sub(Tensor.scalar(DType.I32, loop.lo()));
                for (int r = 0; r < res.size(); r++) {
                    Tensor value = res.get(r);
                    long[] row = new long[value.shape().length + 1];
                    row[0] = 1;
                    System.arraycopy(value.shape(), 0, row, 1, value.shape().length);
                    results.add(stacked[r] ? params.get(1 + n + r).dynamicUpdateSlice(value.reshape(row),
                            at(step, row.length)) : value);
                }
                return null;
            });
        }
        Interpreters.with(trace, () -> {
            trace.close(results);
            return null;
        });
        return found;
    }

    /**
     * The variables of {@code region} that depend on its first {@code params} parameters (the index and the
     * carries): results of nodes with such an input, nested regions counted whole.
     */
    private static Set<Var> variant(Region region, int params) {
        Set<Var> out = new HashSet<>(region.params().subList(0, params));
        for (Node node : region.nodes()) {
            if (node.inputs().stream().anyMatch(out::contains)) {
                out.addAll(node.outputs());
            }
        }
        return out;
    }

    /** {@code [step, 0, 0, ...]}: the start of a row of a stack of rank {@code rank}. */
    private static List<Tensor> at(Tensor step, int rank) {
        List<Tensor> start = new ArrayList<>(Collections.nCopies(rank, Tensor.scalar(DType.I32, 0)));
        start.set(0, step);
        return start;
    }

    /**
     * The loop back: {@code known} holds the final stacks then the invariants (as the pullback's caller sees them),
     * {@code cts} the cotangents of the tangent carries; returns those of the recorded linear inputs (tangent
     * carries, then tangent captures).
     */
    private List<Tensor> back(Linearized body, List<Tensor> known, List<Tensor> cts) {
        int stacks = body.residuals().size();
        List<Tensor> carryCts = new ArrayList<>(cts);
        List<LinearRecorder.Linear> captureIn = body.linearIn().subList(cts.size(), body.linearIn().size());
        List<Tensor> init = new ArrayList<>(carryCts);
        for (LinearRecorder.Linear l : captureIn) {
            init.add(Tensor.zeros(l.aval().dtype(), l.aval().shape().dims()));
        }
        int f = cts.size(), steps = steps();
        List<Tensor> out = Weft.fori(0, steps, init, (j, c) -> {
            Tensor step = Tensor.scalar(DType.I32, steps - 1).sub(j);
            Map<Object, Tensor> now = new HashMap<>();
            for (int r = 0; r < stacks; r++) {
                Tensor stack = known.get(r);
                if (!stacked[r]) {
                    now.put(Linearized.key(body.residuals().get(r)), stack);
                    continue;
                }
                long[] row = stack.shape().clone();
                row[0] = 1;
                Tensor value = stack.dynamicSlice(at(step, row.length), row);
                Tensor residual = body.residuals().get(r);
                now.put(Linearized.key(residual), value.reshape(TensorAccess.aval(residual).shape().dims()));
            }
            for (int v = 0; v < body.invariants().size(); v++) {
                now.put(Linearized.key(body.invariants().get(v)), known.get(stacks + v));
            }
            List<Tensor> back = body.inner().pullback(body.linearOut(), c.subList(0, f), body.linearIn(),
                    t -> now.getOrDefault(Linearized.key(t), t));
            List<Tensor> next = new ArrayList<>(c.size());
            for (int k = 0; k < f; k++) {
                next.add(orZeros(back.get(k), body.linearIn().get(k)));
            }
            for (int k = 0; k < captureIn.size(); k++) {
                Tensor b = back.get(f + k);
                next.add(b == null ? c.get(f + k) : c.get(f + k).add(b));
            }
            return next;
        });
        return out;
    }

    private static Tensor orZeros(Tensor t, LinearRecorder.Linear l) {
        return t != null ? t : Tensor.zeros(l.aval().dtype(), l.aval().shape().dims());
    }
}
