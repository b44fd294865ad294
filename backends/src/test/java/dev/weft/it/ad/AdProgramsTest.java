package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.testing.Ranks;
import dev.weft.testing.TensorAssert;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Transforms inside {@code @Compile} equal the same transforms run eagerly, bit for bit, and against finite
 * differences: gradients of straight-line code, grad of grad, through {@code fori} and {@code cond}, and a
 * data-parallel step whose gradient comes from {@code Weft.grad}.
 */
class AdProgramsTest {
    private static final Random RND = new Random(7);

    private static Tensor random(long... shape) {
        return AdRulesTest.random(shape, -1, 1, false, RND);
    }

    @Test
    void aCompiledGradientEqualsTheEagerOneAndFiniteDifferences() {
        Tensor w = random(4, 3), x = random(5, 4);
        Tensor eager = AdPrograms.gradEager(w, x);
        TensorAssert.assertThat(AdPrograms.gradCompiled(w, x)).isEqualTo(eager);
        assertMatchesDifferences(eager, w, v -> AdPrograms.loss(v, x));
    }

    @Test
    void gradOfGradIsTheSecondDerivative() {
        Tensor x = random(6);
        Tensor eager = AdPrograms.secondEager(x);
        TensorAssert.assertThat(AdPrograms.secondCompiled(x)).isEqualTo(eager);
        double[] xs = x.toDoubleArray(), d2 = eager.toDoubleArray();
        for (int i = 0; i < xs.length; i++) {
            assertThat(d2[i]).isCloseTo(2 * Math.cos(xs[i]) - xs[i] * Math.sin(xs[i]), within(1e-12));
        }
    }

    @Test
    void throughAForiLoopInBothModes() {
        Tensor x = random(5), t = random(5);
        Tensor g = AdPrograms.loopGradEager(x, 6);
        TensorAssert.assertThat(AdPrograms.loopGradCompiled(x, 6)).isEqualTo(g);
        assertMatchesDifferences(g, x, v -> AdPrograms.loop(v, 6).sum());
        Tensor tangent = AdPrograms.loopJvpEager(x, t, 6).getFirst();
        TensorAssert.assertThat(AdPrograms.loopJvpCompiled(x, t, 6).getFirst()).isEqualTo(tangent);
        double[] fd = directional(x, t, v -> AdPrograms.loop(v, 6));
        AdRulesTest.assertClose(tangent.toDoubleArray(), fd, 1e-6);
    }

    @Test
    void throughACondInBothModesOnEitherBranch() {
        for (double sign : new double[] {1, -1}) {
            Tensor x = random(4).abs().add(0.1).mul(sign), t = random(4);
            Tensor g = AdPrograms.branchGradEager(x);
            TensorAssert.assertThat(AdPrograms.branchGradCompiled(x)).isCloseTo(g, 0);
            assertMatchesDifferences(g, x, v -> AdPrograms.branch(v).sum());
            Tensor tangent = AdPrograms.branchJvpEager(x, t).getFirst();
            TensorAssert.assertThat(AdPrograms.branchJvpCompiled(x, t).getFirst()).isEqualTo(tangent);
            AdRulesTest.assertClose(tangent.toDoubleArray(), directional(x, t, AdPrograms::branch), 1e-6);
        }
    }

    @Ranks({1, 2, 4})
    void aDataParallelStepFromGradEqualsTheHandWrittenOne(Comm world) {
        Random rnd = new Random(world.rank());
        Tensor x = AdRulesTest.random(new long[] {6, 3}, -1, 1, false, rnd);
        Tensor y = AdRulesTest.random(new long[] {6}, -1, 1, false, rnd);
        Tensor w = Tensor.of(new double[] {0.3, -0.2, 0.1});
        double total = 6.0 * world.size();
        Tensor byHand = AdPrograms.dataParallelStepByHand(world, x, y, w, total);
        Tensor eager = AdPrograms.dataParallelStepEager(world, x, y, w, total);
        TensorAssert.assertThat(eager).isCloseTo(byHand, 1e-14);
        TensorAssert.assertThat(AdPrograms.dataParallelStepCompiled(world, x, y, w, total)).isEqualTo(eager);
    }

    @Ranks({1, 2, 3})
    void aHaloExchangeWithNonblockingMessagesCompiledEqualsEager(Comm world) {
        Tensor x = AdRulesTest.random(new long[] {5}, -1, 1, false, new Random(world.rank()));
        Tensor eager = AdPrograms.haloGradEager(world, x);
        TensorAssert.assertThat(AdPrograms.haloGradCompiled(world, x)).isEqualTo(eager);
    }

    /** Every element of {@code grad} against the central difference of {@code f} along that coordinate. */
    static void assertMatchesDifferences(Tensor grad, Tensor x, java.util.function.Function<Tensor, Tensor> f) {
        double[] xs = x.toDoubleArray(), g = grad.toDoubleArray();
        double eps = 1e-6;
        for (int i = 0; i < xs.length; i++) {
            double[] plus = xs.clone(), minus = xs.clone();
            plus[i] += eps;
            minus[i] -= eps;
            double d = (f.apply(Tensor.of(plus, x.shape())).item() - f.apply(Tensor.of(minus, x.shape())).item())
                    / (2 * eps);
            assertThat(g[i]).as("element %d", i).isCloseTo(d, within(1e-6 * (1 + Math.abs(d))));
        }
    }

    private static double[] directional(Tensor x, Tensor t, UnaryOperator<Tensor> f) {
        double eps = 1e-6;
        double[] a = f.apply(x.add(t.mul(eps))).toDoubleArray(), b = f.apply(x.sub(t.mul(eps))).toDoubleArray();
        double[] d = new double[a.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = (a[i] - b[i]) / (2 * eps);
        }
        assertThat(x.dtype()).isEqualTo(DType.F64);
        return d;
    }
}
