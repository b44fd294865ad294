package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.CustomVjpForward;
import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.Jvp;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.SourceLocation;
import dev.weft.testing.Ranks;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code Weft.customJvp}, {@code Weft.customVjp} and {@code Weft.linearTranspose}, eagerly and compiled, under
 * forward and reverse mode, inside {@code fori} and {@code cond}, and nested. JAX's {@code log1pexp}: the gradient of
 * {@code log(1 + exp(x))} at {@code x = 100} in f32 is NaN by the chain rule ({@code inf / inf}) and 1 by the
 * stable rule. A function whose rule is deliberately not its derivative ({@code x} with slope 2) shows the rule is
 * the one applied wherever the call ends up.
 */
class CustomRulesTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** {@code log(1 + exp(x))}, as written: its chain-rule derivative overflows for large {@code x}. */
    static Tensor softplus(Tensor x) {
        return x.exp().add(1).log();
    }

    /** {@code 1 - 1 / (1 + exp(x))}: the logistic function, finite everywhere. */
    static Tensor sigmoid(Tensor x) {
        return Tensor.full(x.dtype(), 1, x.shape()).sub(x.exp().add(1).pow(-1));
    }

    static final Function<List<Tensor>, List<Tensor>> LOG1PEXP = Weft.customJvp(
            xs -> List.of(softplus(xs.getFirst())),
            (p, t) -> new Jvp(List.of(softplus(p.getFirst())), List.of(t.getFirst().mul(sigmoid(p.getFirst())))));

    static final Function<List<Tensor>, List<Tensor>> LOG1PEXP_VJP = Weft.customVjp(
            xs -> List.of(softplus(xs.getFirst())),
            xs -> new CustomVjpForward(List.of(softplus(xs.getFirst())), List.of(xs.getFirst())),
            (res, g) -> List.of(g.getFirst().mul(sigmoid(res.getFirst()))));

    /** {@code x}, with the rule of {@code 2x}: wherever it is differentiated, the slope is 2, not 1. */
    static final Function<List<Tensor>, List<Tensor>> SLOPE_TWO = Weft.customJvp(xs -> List.of(xs.getFirst()),
            (p, t) -> new Jvp(p, List.of(t.getFirst().mul(2))));

    /** JAX's {@code clip_gradient}: the identity, whose cotangent is clipped to [-1, 1]. */
    static final Function<List<Tensor>, List<Tensor>> CLIP_GRADIENT = Weft.customVjp(xs -> List.of(xs.getFirst()),
            xs -> new CustomVjpForward(xs, List.of()),
            (res, g) -> List.of(g.getFirst().maximum(-1).minimum(1)));

    /** {@code sin(x)} with a backward pass computed from the residual {@code x}, itself differentiable. */
    static final Function<List<Tensor>, List<Tensor>> SIN_VJP = Weft.customVjp(xs -> List.of(xs.getFirst().sin()),
            xs -> new CustomVjpForward(List.of(xs.getFirst().sin()), List.of(xs.getFirst())),
            (res, g) -> List.of(g.getFirst().mul(res.getFirst().cos())));

    static Tensor one(Function<List<Tensor>, List<Tensor>> f, Tensor x) {
        return f.apply(List.of(x)).getFirst();
    }

    // ---- custom_jvp --------------------------------------------------------------------------------------------

    static Tensor log1pexpGrad(Tensor x) {
        return Weft.grad(v -> one(LOG1PEXP, v).sum()).apply(x);
    }

    @Compile
    static Tensor log1pexpGradCompiled(Tensor x) {
        return log1pexpGrad(x);
    }

    @Compile
    static Tensor log1pexpCompiled(Tensor x) {
        return one(LOG1PEXP, x);
    }

    @Test
    void aStableRuleGivesTheGradientWhereTheChainRuleGivesNaN() {
        Tensor x = Tensor.of(new float[] {100, 0, -3});
        float[] plain = Weft.grad(v -> softplus(v).sum()).apply(x).toFloatArray();
        assertThat(Float.isNaN(plain[0])).isTrue();
        float[] expected = {1, 0.5f, (float) (1 / (1 + Math.exp(3)))};
        assertThat(log1pexpGrad(x).toFloatArray()).containsExactly(expected, within(1e-6f));
        assertThat(log1pexpGradCompiled(x).toFloatArray()).containsExactly(expected, within(1e-6f));
        Tensor y = Tensor.of(new float[] {1, 2, -1});
        assertThat(log1pexpCompiled(y).toFloatArray()).containsExactly(one(LOG1PEXP, y).toFloatArray());
        assertThat(one(LOG1PEXP, y).toFloatArray()).containsExactly(softplus(y).toFloatArray());
    }

    @Test
    void forwardModeUsesTheRule() {
        Tensor x = Tensor.of(new float[] {100, 0});
        Jvp j = Weft.jvp(LOG1PEXP, List.of(x), List.of(Tensor.of(new float[] {3, 4})));
        assertThat(j.tangents().getFirst().toFloatArray()).containsExactly(3, 2);
        assertThat(j.outputs().getFirst().toFloatArray()).containsExactly(softplus(x).toFloatArray());
        assertThat(Weft.jvp(SLOPE_TWO, List.of(x), List.of(Tensor.of(new float[] {1, -1}))).tangents().getFirst()
                .toFloatArray()).containsExactly(2, -2);
    }

    @Test
    void theGradientMatchesFiniteDifferences() {
        double[] at = {-2, -0.5, 0.3, 1.7};
        Tensor x = Tensor.of(at);
        Function<Tensor, Tensor> loss = v -> one(LOG1PEXP, v.mul(v)).mul(v).sum();
        double[] g = Weft.grad(loss).apply(x).toDoubleArray();
        double eps = 1e-6;
        for (int i = 0; i < at.length; i++) {
            double[] plus = at.clone(), minus = at.clone();
            plus[i] += eps;
            minus[i] -= eps;
            double fd = (loss.apply(Tensor.of(plus)).item() - loss.apply(Tensor.of(minus)).item()) / (2 * eps);
            assertThat(g[i]).isCloseTo(fd, within(1e-6 * (1 + Math.abs(fd))));
        }
    }

    /** The second derivative: an outer transform differentiates the rule's code, {@code s(1 - s)}. */
    static Tensor log1pexpSecond(Tensor x) {
        return Weft.grad(v -> Weft.grad(u -> one(LOG1PEXP, u).sum()).apply(v).sum()).apply(x);
    }

    @Compile
    static Tensor log1pexpSecondCompiled(Tensor x) {
        return log1pexpSecond(x);
    }

    @Test
    void gradOfGradDifferentiatesTheRule() {
        double[] at = {-2, 0, 1.5};
        double[] expected = Arrays.stream(at).map(v -> {
            double s = 1 / (1 + Math.exp(-v));
            return s * (1 - s);
        }).toArray();
        assertThat(log1pexpSecond(Tensor.of(at)).toDoubleArray()).containsExactly(expected, within(1e-12));
        assertThat(log1pexpSecondCompiled(Tensor.of(at)).toDoubleArray()).containsExactly(expected, within(1e-12));
        // the rule's slope 2 is a constant: its own derivative is 0
        assertThat(Weft.grad(v -> Weft.grad(u -> one(SLOPE_TWO, u).mul(u).sum()).apply(v).sum())
                .apply(Tensor.of(new double[] {3})).toDoubleArray()).containsExactly(3);
    }

    /** {@code SLOPE_TWO} three times in a loop, with a factor of the index: slope {@code 2³ · 1 · 2 · 3}. */
    static Tensor loop(Tensor x) {
        return Weft.fori(1, 4, x, (i, c) -> one(SLOPE_TWO, c).mul(i.cast(x.dtype())));
    }

    static Tensor loopGrad(Tensor x) {
        return Weft.grad(v -> loop(v).sum()).apply(x);
    }

    @Compile
    static Tensor loopGradCompiled(Tensor x) {
        return loopGrad(x);
    }

    @Compile
    static List<Tensor> loopJvpCompiled(Tensor x, Tensor t) {
        return Weft.jvp(v -> List.of(loop(v.getFirst())), List.of(x), List.of(t)).tangents();
    }

    @Compile
    static Tensor loopCompiled(Tensor x) {
        return loop(x);
    }

    @Test
    void theRuleHoldsInsideAFori() {
        Tensor x = Tensor.of(new double[] {0.5, -1});
        assertThat(loopGrad(x).toDoubleArray()).containsExactly(48, 48);
        assertThat(loopGradCompiled(x).toDoubleArray()).containsExactly(48, 48);
        Tensor t = Tensor.of(new double[] {1, 2});
        assertThat(Weft.jvp(v -> List.of(loop(v.getFirst())), List.of(x), List.of(t)).tangents().getFirst()
                .toDoubleArray()).containsExactly(48, 96);
        assertThat(loopJvpCompiled(x, t).getFirst().toDoubleArray()).containsExactly(48, 96);
        assertThat(loop(x).toDoubleArray()).containsExactly(3, -6);
        assertThat(loopCompiled(x).toDoubleArray()).containsExactly(3, -6);
    }

    /** {@code SLOPE_TWO(x)} on one side, {@code 3x} on the other. */
    static Tensor branch(Tensor x) {
        return Weft.cond(x.sum().gt(0), () -> one(SLOPE_TWO, x).mul(x), () -> x.mul(3));
    }

    static Tensor branchGrad(Tensor x) {
        return Weft.grad(v -> branch(v).sum()).apply(x);
    }

    @Compile
    static Tensor branchGradCompiled(Tensor x) {
        return branchGrad(x);
    }

    @Test
    void theRuleHoldsInsideACond() {
        // d/dx (x · x) with one factor of slope 2: 2x + x = 3x
        Tensor x = Tensor.of(new double[] {1, 2});
        assertThat(branchGrad(x).toDoubleArray()).containsExactly(3, 6);
        assertThat(branchGradCompiled(x).toDoubleArray()).containsExactly(3, 6);
        Tensor neg = Tensor.of(new double[] {-1, -2});
        assertThat(branchGradCompiled(neg).toDoubleArray()).containsExactly(3, 3);
        assertThat(Weft.jvp(v -> List.of(branch(v.getFirst())), List.of(x), List.of(Tensor.of(new double[] {1, 1})))
                .tangents().getFirst().toDoubleArray()).containsExactly(3, 6);
    }

    @Test
    void aRuleOfTheWrongShapeNamesTheCall() {
        Function<List<Tensor>, List<Tensor>> wrong = Weft.customJvp(xs -> List.of(xs.getFirst().sum()),
                (p, t) -> new Jvp(List.of(p.getFirst().sum()), List.of(t.getFirst())));
        Tensor x = Tensor.of(new double[] {1, 2});
        int line = here() + 1;
        Throwable e = catchThrowable(() -> Weft.grad(v -> wrong.apply(List.of(v)).getFirst()).apply(x));
        assertThat(e).isInstanceOf(ShapeException.class)
                .hasMessageStartingWith("CustomRulesTest.java:" + line + ": ")
                .hasMessageContaining("tangent of output 0 as f64[2] but the output is f64[]");
    }

    // ---- custom_vjp --------------------------------------------------------------------------------------------

    static Tensor vjpGrad(Tensor x) {
        return Weft.grad(v -> one(LOG1PEXP_VJP, v).sum()).apply(x);
    }

    @Compile
    static Tensor vjpGradCompiled(Tensor x) {
        return vjpGrad(x);
    }

    @Compile
    static Tensor vjpPlainCompiled(Tensor x) {
        return one(LOG1PEXP_VJP, x);
    }

    @Test
    void customVjpGivesTheStableGradient() {
        Tensor x = Tensor.of(new float[] {100, 0, -3});
        float[] expected = {1, 0.5f, (float) (1 / (1 + Math.exp(3)))};
        assertThat(vjpGrad(x).toFloatArray()).containsExactly(expected, within(1e-6f));
        assertThat(vjpGradCompiled(x).toFloatArray()).containsExactly(expected, within(1e-6f));
        Tensor y = Tensor.of(new float[] {1, -2});
        assertThat(one(LOG1PEXP_VJP, y).toFloatArray()).containsExactly(softplus(y).toFloatArray());
        assertThat(vjpPlainCompiled(y).toFloatArray()).containsExactly(softplus(y).toFloatArray());
    }

    static Tensor clipped(Tensor x, int scale) {
        return Weft.grad(v -> one(CLIP_GRADIENT, v).mul(scale).sum()).apply(x);
    }

    @Compile
    static Tensor clippedCompiled(Tensor x, int scale) {
        return clipped(x, scale);
    }

    @Test
    void aGradientClippingRule() {
        Tensor x = Tensor.of(new double[] {1, -4, 7});
        assertThat(clipped(x, 5).toDoubleArray()).containsExactly(1, 1, 1);
        assertThat(clipped(x, -2).toDoubleArray()).containsExactly(-1, -1, -1);
        assertThat(clippedCompiled(x, 5).toDoubleArray()).containsExactly(1, 1, 1);
        assertThat(clippedCompiled(x, -3).toDoubleArray()).containsExactly(-1, -1, -1);
        // d/dx (clip(x) · x): the clipped cotangent x of the first factor, plus clip(x) = x from the second
        assertThat(Weft.grad(v -> one(CLIP_GRADIENT, v).mul(v).sum()).apply(x).toDoubleArray())
                .containsExactly(2, -5, 8);
        List<Tensor> pulled = Weft.vjp(CLIP_GRADIENT, List.of(x)).pullback(List.of(Tensor.of(new double[] {0.5, 3,
                -9})));
        assertThat(pulled.getFirst().toDoubleArray()).containsExactly(0.5, 1, -1);
    }

    /** Each step multiplies by 3, whose cotangent the clip caps at 1: the gradient is 1, not 27. */
    static Tensor clippedLoop(Tensor x) {
        return Weft.grad(v -> Weft.fori(0, 3, v, (i, c) -> one(CLIP_GRADIENT, c).mul(3)).sum()).apply(x);
    }

    @Compile
    static Tensor clippedLoopCompiled(Tensor x) {
        return clippedLoop(x);
    }

    @Test
    void customVjpInsideAFori() {
        Tensor x = Tensor.of(new double[] {0.5, 2});
        assertThat(clippedLoop(x).toDoubleArray()).containsExactly(1, 1);
        assertThat(clippedLoopCompiled(x).toDoubleArray()).containsExactly(1, 1);
    }

    /** The clip in one branch of a cond: only the branch taken runs its backward pass. */
    static Tensor clippedBranch(Tensor x) {
        return Weft.grad(v -> Weft.cond(v.sum().gt(0), () -> one(CLIP_GRADIENT, v).mul(4), () -> v.mul(4)).sum())
                .apply(x);
    }

    @Compile
    static Tensor clippedBranchCompiled(Tensor x) {
        return clippedBranch(x);
    }

    @Test
    void customVjpInsideACond() {
        Tensor pos = Tensor.of(new double[] {1, 2}), neg = Tensor.of(new double[] {-1, -2});
        assertThat(clippedBranch(pos).toDoubleArray()).containsExactly(1, 1);
        assertThat(clippedBranchCompiled(pos).toDoubleArray()).containsExactly(1, 1);
        assertThat(clippedBranch(neg).toDoubleArray()).containsExactly(4, 4);
        assertThat(clippedBranchCompiled(neg).toDoubleArray()).containsExactly(4, 4);
    }

    @Test
    void theGradientOfACompiledCallUsesTheRules() {
        Tensor x = Tensor.of(new float[] {100, 0});
        assertThat(Weft.grad(v -> log1pexpCompiled(v).sum()).apply(x).toFloatArray()).containsExactly(1, 0.5f);
        assertThat(Weft.grad(v -> vjpPlainCompiled(v).sum()).apply(x).toFloatArray()).containsExactly(1, 0.5f);
    }

    /** An allreduce whose backward pass is the identity, as a user might write it. */
    static Function<List<Tensor>, List<Tensor>> summed(Comm c) {
        return Weft.customVjp(xs -> List.of(c.allreduce(xs.getFirst(), ReduceOp.SUM)),
                xs -> new CustomVjpForward(List.of(c.allreduce(xs.getFirst(), ReduceOp.SUM)), List.of()),
                (r, g) -> g);
    }

    static Tensor summedGrad(Comm c, Tensor x) {
        return Weft.grad(v -> one(summed(c), v).mul(c.rank() + 1).sum()).apply(x);
    }

    @Compile
    static Tensor summedGradCompiled(Comm c, Tensor x) {
        return summedGrad(c, x);
    }

    /**
     * The call's result is invariant (its body's is an allreduce); times a constant computed from the rank it varies,
     * so its cotangent, the one {@code bwd} gets, is the sum of every rank's: Σ (s + 1) = n(n + 1)/2.
     */
    @Ranks({1, 2, 3})
    void aCustomVjpThatCommunicates(Comm c) {
        Tensor x = Tensor.of(new double[] {c.rank(), 1});
        double r = c.size() * (c.size() + 1) / 2.0;
        assertThat(summedGrad(c, x).toDoubleArray()).containsExactly(r, r);
        assertThat(summedGradCompiled(c, x).toDoubleArray()).containsExactly(r, r);
        assertThat(one(summed(c), x).toDoubleArray()).containsExactly(c.size() * (c.size() - 1) / 2.0, c.size());
    }

    /** An allreduce with its own rule; rank 0 applies it to a constant, the others to what they differentiate. */
    static Tensor reducedGrad(Comm c, Tensor x) {
        Function<List<Tensor>, List<Tensor>> f = Weft.customJvp(xs -> List.of(c.allreduce(xs.getFirst(),
                ReduceOp.SUM)), (p, t) -> new Jvp(List.of(c.allreduce(p.getFirst(), ReduceOp.SUM)),
                List.of(c.allreduce(t.getFirst(), ReduceOp.SUM))));
        return Weft.grad(v -> one(f, c.rank() == 0 ? Tensor.of(new double[] {1, 1}) : v).sum().add(v.sum()))
                .apply(x);
    }

    @Compile
    static Tensor reducedGradCompiled(Comm c, Tensor x) {
        return reducedGrad(c, x);
    }

    @Ranks({2, 3})
    void aCustomJvpThatCommunicatesRunsItsRuleOnEveryRank(Comm c) {
        Tensor x = Tensor.of(new double[] {c.rank(), 1});
        double[] eager = reducedGrad(c, x).toDoubleArray();
        assertThat(reducedGradCompiled(c, x).toDoubleArray()).containsExactly(eager);
        if (c.rank() == 0) {
            assertThat(eager).containsExactly(1, 1);
        }
    }

    static Tensor sinSecond(Tensor x) {
        return Weft.grad(v -> Weft.grad(u -> one(SIN_VJP, u).sum()).apply(v).sum()).apply(x);
    }

    @Compile
    static Tensor sinSecondCompiled(Tensor x) {
        return sinSecond(x);
    }

    @Test
    void gradOfGradDifferentiatesTheBackwardPass() {
        double[] at = {-1, 0.25, 2};
        double[] expected = Arrays.stream(at).map(v -> -Math.sin(v)).toArray();
        assertThat(sinSecond(Tensor.of(at)).toDoubleArray()).containsExactly(expected, within(1e-12));
        assertThat(sinSecondCompiled(Tensor.of(at)).toDoubleArray()).containsExactly(expected, within(1e-12));
    }

    @Test
    void forwardModeRefusesCustomVjpNamingTheCall() {
        Tensor x = Tensor.of(new double[] {1});
        int line = here() + 1;
        Throwable e = catchThrowable(() -> Weft.jvp(xs -> LOG1PEXP_VJP.apply(xs), List.of(x), List.of(x)));
        assertThat(e).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("CustomRulesTest.java:" + line + ": ")
                .hasMessageContaining("forward mode (jvp) cannot differentiate the customVjp function");
        // without a tangent to carry, forward mode runs the function
        assertThat(Weft.jvp(xs -> List.of(one(LOG1PEXP_VJP, Tensor.of(new double[] {0})).add(xs.getFirst())),
                List.of(x), List.of(x)).tangents().getFirst().toDoubleArray()).containsExactly(1);
    }

    @Test
    void aBackwardPassOfTheWrongShapeDTypeOrCountNamesTheCall() {
        Tensor x = Tensor.of(new double[] {1, 2});
        Function<List<Tensor>, List<Tensor>> shape = Weft.customVjp(xs -> xs, xs -> new CustomVjpForward(xs,
                List.of()), (r, g) -> List.of(g.getFirst().sum()));
        Function<List<Tensor>, List<Tensor>> dtype = Weft.customVjp(xs -> xs, xs -> new CustomVjpForward(xs,
                List.of()), (r, g) -> List.of(g.getFirst().cast(DType.F32)));
        Function<List<Tensor>, List<Tensor>> count = Weft.customVjp(xs -> xs, xs -> new CustomVjpForward(xs,
                List.of()), (r, g) -> List.of(g.getFirst(), g.getFirst()));
        int line = here() + 1;
        Throwable e = catchThrowable(() -> Weft.grad(v -> shape.apply(List.of(v)).getFirst().sum()).apply(x));
        assertThat(e).isInstanceOf(ShapeException.class).hasMessageStartingWith("CustomRulesTest.java:" + line
                + ": ").hasMessageContaining("bwd").hasMessageContaining("argument 0 as f64[] but the argument is f64[2]");
        line = here() + 1;
        e = catchThrowable(() -> Weft.grad(v -> dtype.apply(List.of(v)).getFirst().sum()).apply(x));
        assertThat(e).isInstanceOf(DTypeException.class).hasMessageStartingWith("CustomRulesTest.java:" + line
                + ": ").hasMessageContaining("as f32[2] but the argument is f64[2]");
        line = here() + 1;
        e = catchThrowable(() -> Weft.grad(v -> count.apply(List.of(v)).getFirst().sum()).apply(x));
        assertThat(e).isInstanceOf(ShapeException.class).hasMessageStartingWith("CustomRulesTest.java:" + line
                + ": ").hasMessageContaining("returned 2 cotangents but the function takes 1 arguments");
    }

    @Test
    void aCapturedValueBeingDifferentiatedIsRefused() {
        Tensor x = Tensor.of(new double[] {1, 2});
        Throwable e = catchThrowable(() -> Weft.grad(w -> Weft.customJvp(xs -> List.of(xs.getFirst().mul(w)),
                (p, t) -> new Jvp(List.of(p.getFirst().mul(w)), List.of(t.getFirst().mul(w))))
                .apply(List.of(x)).getFirst().sum()).apply(x));
        assertThat(e).isInstanceOf(WeftException.class).hasMessageContaining("not one of its arguments");
    }

    // ---- linearTranspose ---------------------------------------------------------------------------------------

    @Test
    void theTransposeOfALinearFunction() {
        Tensor a = Tensor.of(new double[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Function<List<Tensor>, List<Tensor>> f = xs -> List.of(a.matmul(xs.get(0)).mul(2).add(xs.get(1).sum()));
        List<Tensor> primals = List.of(Tensor.zeros(DType.F64, 3), Tensor.zeros(DType.F64, 4));
        Function<List<Tensor>, List<Tensor>> t = Weft.linearTranspose(f, primals);
        List<Tensor> ct = t.apply(List.of(Tensor.of(new double[] {1, -1})));
        // 2 Aᵀ [1, -1], and the sum's transpose: every element gets 1 - 1
        assertThat(ct.get(0).toDoubleArray()).containsExactly(-6, -6, -6);
        assertThat(ct.get(1).toDoubleArray()).containsExactly(0, 0, 0, 0);
        assertThat(t.apply(List.of(Tensor.of(new double[] {0.5, 0}))).get(1).toDoubleArray())
                .containsExactly(0.5, 0.5, 0.5, 0.5);
    }

    @Test
    void theTransposeOfALinearLoop() {
        Function<List<Tensor>, List<Tensor>> t = Weft.linearTranspose(xs -> List.of(Weft.fori(0, 3, xs.getFirst(),
                (i, c) -> c.mul(2).add(c.neg().mul(0.5)))), List.of(Tensor.zeros(DType.F64, 2)));
        assertThat(t.apply(List.of(Tensor.of(new double[] {1, -2}))).getFirst().toDoubleArray())
                .containsExactly(3.375, -6.75);
    }

    @Compile
    static Tensor transposedCompiled(Tensor ct) {
        return Weft.linearTranspose(xs -> List.of(xs.getFirst().reshape(2, 2).transpose(1, 0).mul(3)),
                List.of(Tensor.zeros(DType.F32, 4))).apply(List.of(ct)).getFirst();
    }

    @Test
    void theTransposeInsideCompile() {
        Tensor ct = Tensor.of(new float[] {1, 2, 3, 4}, 2, 2);
        assertThat(transposedCompiled(ct).toFloatArray()).containsExactly(3, 9, 6, 12);
    }

    @Test
    void aNonlinearFunctionIsRefused() {
        List<Tensor> primals = List.of(Tensor.zeros(DType.F64, 2));
        int line = here() + 1;
        Throwable e = catchThrowable(() -> Weft.linearTranspose(xs -> List.of(xs.getFirst().mul(xs.getFirst())),
                primals));
        assertThat(e).isInstanceOf(WeftException.class).hasMessageContaining("is not linear in its inputs");
        line = here() + 1;
        e = catchThrowable(() -> Weft.linearTranspose(xs -> List.of(xs.getFirst().mul(2).exp()), primals));
        assertThat(e).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("CustomRulesTest.java:" + line + ": ")
                .hasMessageContaining("the value of exp here depends on them");
    }

    /** The line of the caller's statement. */
    private static int here() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE)
                .walk(s -> s.skip(1).findFirst()).map(SourceLocation::of).orElseThrow().line();
    }
}
