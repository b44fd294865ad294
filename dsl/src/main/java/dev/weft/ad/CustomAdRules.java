package dev.weft.ad;

import dev.weft.CustomVjpForward;
import dev.weft.DTypeException;
import dev.weft.Jvp;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.graph.Var;
import dev.weft.prim.CustomCallParams;
import dev.weft.prim.CustomJvpParams;
import dev.weft.prim.CustomVjpParams;
import dev.weft.prim.Prims;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.Effect;
import dev.weft.spi.Interpreters;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * Differentiation of the functions with user-given rules (JAX's {@code custom_jvp} and {@code custom_vjp}).
 *
 * <p>{@code custom_jvp_call}: its rule computes outputs and tangents at the level below the transform, so that
 * reverse mode's recorder transposes the rule's (linear) tangent computation and an outer transform differentiates
 * the rule's code. Without tangents the node is bound again below, keeping the rule for the levels there.
 *
 * <p>{@code custom_vjp_call}: right above reverse mode's recorder, {@code fwd} runs on the known primals and the
 * call is one equation on the tape, whose transpose is {@code bwd} on the residuals. Forward mode refuses it, as JAX
 * does. In both, only the function's arguments carry derivatives: a value it captures from the enclosing code must
 * not be one being differentiated.
 */
final class CustomAdRules {
    private CustomAdRules() {
    }

    static void register() {
        AdRules.jointJvp(Prims.CUSTOM_JVP_CALL, CustomAdRules::customJvp);
        AdRules.notDifferentiable(Prims.CUSTOM_VJP_CALL, "forward mode (jvp) cannot differentiate a customVjp"
                + " function, as in JAX; reverse mode (grad, vjp) uses its fwd and bwd");
        // a custom function's results vary across ranks as its body's do
        AdRules.variance(Prims.CUSTOM_JVP_CALL, (p, in, outputs) -> new VarianceRule.Typing(VarianceRule.meet(in),
                RegionVariance.results(p.body(), in)));
        AdRules.variance(Prims.CUSTOM_VJP_CALL, (p, in, outputs) -> new VarianceRule.Typing(VarianceRule.meet(in),
                RegionVariance.results(p.body(), in)));
    }

    private static JointJvpRule.Result customJvp(CustomJvpParams p, List<Tensor> primals, List<Tensor> tangents,
                                                 SourceLocation where) {
        int n = p.arguments();
        // under reverse mode a tangent is a linear value of its recorder; a known one is a zero
        LinearRecorder recorder = Interpreters.current() instanceof LinearRecorder r ? r : null;
        Predicate<Tensor> has = t -> recorder == null ? t != null : recorder.linear(t) != null;
        refuseCapturedTangents(p, tangents, has, where);
        boolean communicates = communicates(p.body());
        if (!communicates && tangents.subList(0, n).stream().noneMatch(has)) {
            List<Tensor> outs = Bind.bindAt(where, Prims.CUSTOM_JVP_CALL, p, primals);
            return new JointJvpRule.Result(outs, Arrays.asList(new Tensor[outs.size()]));
        }
        // a rule that communicates runs on every rank, whichever have tangents, so that all follow one schedule
        List<Tensor> args = primals.subList(0, n);
        List<Tensor> in = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            Tensor a = args.get(k);
            in.add(tangents.get(k) != null ? tangents.get(k) : recorder != null && communicates
                    && a.dtype().isFloating() ? recorder.zero(a) : ArrayAdRules.zerosLike(a));
        }
        Jvp r = p.rule().apply(List.copyOf(args), List.copyOf(in));
        String rule = "the customJvp rule (defined at " + p.defined() + ")";
        if (r == null) {
            throw new WeftException(where, rule + " returned null");
        }
        List<Var> results = p.body().results();
        check(rule + " returned %d outputs but the function returns %d", r.outputs().size(), results.size(), where);
        check(rule + " returned %d tangents for %d outputs", r.tangents().size(), results.size(), where);
        List<Tensor> out = new ArrayList<>(results.size());
        for (int k = 0; k < results.size(); k++) {
            Aval a = results.get(k).aval();
            same(a, r.outputs().get(k), rule + " returned output " + k + " as %s but the function returns %s", where);
            boolean floating = a.dtype().isFloating();
            if (floating) {
                same(a, r.tangents().get(k), rule + " returned the tangent of output " + k + " as %s but the output"
                        + " is %s", where);
            }
            out.add(floating ? r.tangents().get(k) : null);
        }
        return new JointJvpRule.Result(r.outputs(), out);
    }

    /**
     * A {@code custom_vjp_call} at {@code jvp}'s level: bound below when no argument has a tangent, one equation on
     * reverse mode's recorder right below, refused otherwise (forward mode).
     */
    static List<Tensor> customVjp(JvpInterpreter jvp, CustomVjpParams p, List<Tensor> args, SourceLocation where) {
        List<Tensor> primals = new ArrayList<>(args.size());
        List<Tensor> tangents = new ArrayList<>(args.size());
        for (Tensor a : args) {
            primals.add(jvp.primal(a));
            tangents.add(jvp.tangent(a));
        }
        SourceLocation at = where != null ? where : SourceLocation.capture();
        LinearRecorder recorder = Interpreters.under(jvp, () -> Interpreters.current() instanceof LinearRecorder r
                ? r : null);
        int n = p.arguments();
        boolean any = tangents.subList(0, n).stream().anyMatch(t -> recorder == null ? t != null
                : recorder.linear(t) != null);
        // under reverse mode, a function that communicates is an equation on every rank, whichever have tangents
        boolean everyRank = recorder != null && communicates(p.body());
        if (any && recorder == null) {
            throw new WeftException(at, "forward mode (jvp) cannot differentiate the customVjp function defined at "
                    + p.defined() + ", as in JAX: use reverse mode (grad, vjp), or Weft.customJvp for a function"
                    + " that forward mode must differentiate");
        }
        refuseCapturedTangents(p, tangents, t -> recorder == null ? t != null : recorder.linear(t) != null, at);
        if (!any && !everyRank) {
            return Interpreters.under(jvp, () -> Bind.bindAt(at, Prims.CUSTOM_VJP_CALL, p, primals));
        }
        JointJvpRule.Result r = Interpreters.under(jvp, () -> reverse(recorder, p, primals, tangents, everyRank,
                at));
        List<Tensor> results = new ArrayList<>(r.outputs().size());
        for (int k = 0; k < r.outputs().size(); k++) {
            results.add(jvp.dual(r.outputs().get(k), r.tangents().get(k)));
        }
        return results;
    }

    /**
     * {@code fwd} run on the known arguments, and one equation on {@code recorder} transposed by {@code bwd}; with
     * {@code everyFloating}, a floating argument without a tangent gets a linear zero.
     */
    private static JointJvpRule.Result reverse(LinearRecorder recorder, CustomVjpParams p, List<Tensor> primals,
                                               List<Tensor> tangents, boolean everyFloating, SourceLocation where) {
        int n = p.arguments();
        List<Tensor> args = List.copyOf(primals.subList(0, n));
        List<LinearRecorder.Linear> in = new ArrayList<>();
        List<Integer> linearArgs = new ArrayList<>();
        for (int k = 0; k < n; k++) {
            LinearRecorder.Linear l = recorder.linear(tangents.get(k));
            if (l == null && everyFloating && args.get(k).dtype().isFloating()) {
                l = recorder.linear(recorder.zero(args.get(k)));
            }
            if (l != null) {
                in.add(l);
                linearArgs.add(k);
            }
        }
        String fwd = "the customVjp fwd (defined at " + p.defined() + ")";
        CustomVjpForward forward = p.fwd().apply(args);
        if (forward == null) {
            throw new WeftException(where, fwd + " returned null");
        }
        List<Var> results = p.body().results();
        check(fwd + " returned %d outputs but the function returns %d", forward.outputs().size(), results.size(),
                where);
        List<Variance> typed = RegionVariance.results(p.body(), primals.stream().map(recorder::variance).toList());
        List<Aval> outAvals = new ArrayList<>();
        List<Variance> outVariances = new ArrayList<>();
        for (int k = 0; k < results.size(); k++) {
            Aval a = results.get(k).aval();
            same(a, forward.outputs().get(k), fwd + " returned output " + k + " as %s but the function returns %s",
                    where);
            if (a.dtype().isFloating()) {
                outAvals.add(a);
                outVariances.add(typed.get(k));
            }
        }
        List<Tensor> linearOut = recorder.record(Prims.CUSTOM_VJP_CALL, in, outAvals, outVariances, forward.residuals(),
                communicates(p.body()), (residuals, cts) -> backward(p, args, linearArgs, residuals, cts, where));
        List<Tensor> out = new ArrayList<>(results.size());
        int next = 0;
        for (Var v : results) {
            out.add(v.aval().dtype().isFloating() ? linearOut.get(next++) : null);
        }
        return new JointJvpRule.Result(forward.outputs(), out);
    }

    /**
     * {@code bwd} on the residuals and every output's cotangent ({@code cts} holds the floating outputs'; the others
     * get zeros), checked against the arguments; the cotangents of the arguments {@code linearArgs}, in order.
     */
    private static List<Tensor> backward(CustomVjpParams p, List<Tensor> args, List<Integer> linearArgs,
                                         List<Tensor> residuals, List<Tensor> cts, SourceLocation where) {
        List<Tensor> all = new ArrayList<>();
        int next = 0;
        for (Var v : p.body().results()) {
            Aval a = v.aval();
            all.add(a.dtype().isFloating() ? cts.get(next++) : Tensor.zeros(a.dtype(), a.shape().dims()));
        }
        String bwd = "the customVjp bwd (defined at " + p.defined() + ")";
        List<Tensor> got = p.bwd().apply(List.copyOf(residuals), List.copyOf(all));
        if (got == null) {
            throw new WeftException(where, bwd + " returned null");
        }
        check(bwd + " returned %d cotangents but the function takes %d arguments", got.size(), args.size(), where);
        List<Tensor> out = new ArrayList<>(linearArgs.size());
        for (int k : linearArgs) {
            Tensor ct = got.get(k);
            if (ct != null) {
                same(TensorAccess.aval(args.get(k)), ct, bwd + " returned the cotangent of argument " + k + " as %s"
                        + " but the argument is %s", where);
            }
            out.add(ct);
        }
        return out;
    }

    /** Refuses a capture of the function (a value from the enclosing code) that has a tangent. */
    private static void refuseCapturedTangents(CustomCallParams p, List<Tensor> tangents,
                                               Predicate<Tensor> has, SourceLocation where) {
        for (int k = p.arguments(); k < tangents.size(); k++) {
            if (has.test(tangents.get(k))) {
                throw new WeftException(where, "the custom function defined at " + p.defined() + " uses a "
                        + TensorAccess.aval(tangents.get(k)) + " being differentiated that is not one of its"
                        + " arguments (it captures it from the enclosing code); pass it as an argument, so that its"
                        + " rules see its derivative");
            }
        }
    }

    /** Whether {@code region} communicates: its transpose must then run on every rank, whatever the cotangents. */
    private static boolean communicates(Region region) {
        for (Node node : region.nodes()) {
            if (node.prim().effect(node.params()) instanceof Effect.Ordered
                    || node.regions().stream().anyMatch(CustomAdRules::communicates)) {
                return true;
            }
        }
        return false;
    }

    private static void check(String fmt, int actual, int expected, SourceLocation where) {
        if (actual != expected) {
            throw new ShapeException(where, String.format(fmt, actual, expected));
        }
    }

    /** {@code t} must be non-null and of {@code expected}; {@code fmt} takes the actual, then the expected aval. */
    private static void same(Aval expected, Tensor t, String fmt, SourceLocation where) {
        if (t == null) {
            throw new ShapeException(where, String.format(fmt, "null", expected));
        }
        Aval actual = TensorAccess.aval(t);
        if (actual.dtype() != expected.dtype()) {
            throw new DTypeException(where, String.format(fmt, actual, expected));
        }
        if (!actual.shape().equals(expected.shape())) {
            throw new ShapeException(where, String.format(fmt, actual, expected));
        }
    }
}
