package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.optim.Adam;
import dev.weft.optim.Update;
import dev.weft.testing.Ranks;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code double} and {@code float} arguments are traced scalars: one program for every value where the value reaches
 * Weft's operations as itself, and still the body's own result for each value where it does not (host arithmetic,
 * a branch on it, a constant that merely equals it). Each result is checked against the formula computed in Java;
 * the number of traces is counted in the body (it runs only while tracing), compiles through the recompile warning.
 */
class TracedScalarsTest {
    private static final AtomicInteger TRACES = new AtomicInteger();

    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Compile
    static Tensor sgd(Tensor w, Tensor g, double lr) {
        TRACES.incrementAndGet();
        return w.sub(g.mul(lr));
    }

    @Compile
    static Tensor doubled(Tensor x, double lr) {
        return x.mul(lr * 2);
    }

    @Compile
    static Tensor branch(Tensor x, double a) {
        return a > 0.5 ? x.mul(a) : x.add(a);
    }

    @Compile
    static Tensor affine(Tensor x, double a) {
        return x.mul(a).add(0.5);
    }

    @Compile
    static Tensor f32(Tensor x, float a) {
        return x.mul(a).add(a);
    }

    @Compile
    static Tensor inLoop(Tensor x, double decay, double shift) {
        return Weft.fori(0, 3, x, (i, c) -> c.mul(decay).add(shift));
    }

    @Compile
    static Tensor gradient(Tensor w, double lambda) {
        return Weft.grad((Tensor v) -> v.mul(v).sum().mul(lambda).add(v.sum())).apply(w);
    }

    @Test
    void aRateUsedThroughWeftsOperationsCompilesOnceAndTracesOncePerNewValue() {
        Tensor w = Tensor.of(new double[] {1, 2, 3});
        Tensor g = Tensor.of(new double[] {0.5, -1, 4});
        String err = Stderr.of(() -> {
            TRACES.set(0);
            double lr = 0.1;
            for (int step = 0; step < 20; step++, lr *= 0.9) {
                double[] out = sgd(w, g, lr).toDoubleArray();
                assertThat(out).containsExactly(1 - lr * 0.5, 2 + lr, 3 - lr * 4);
            }
            assertThat(TRACES.get()).isEqualTo(20);
            assertThat(sgd(w, g, 0.1).toDoubleArray()).containsExactly(1 - 0.05, 2.1, 3 - 0.4);
            assertThat(TRACES.get()).as("a value seen before runs without a trace").isEqualTo(20);
        });
        assertThat(err).doesNotContain("has been compiled");
    }

    @Test
    void hostArithmeticOnTheValueStillGivesEachValuesResultAndIsNamedByTheWarning() {
        Tensor x = Tensor.of(new double[] {1, -2});
        String err = Stderr.of(() -> {
            for (int k = 1; k <= 12; k++) {
                double lr = k * 0.25;
                assertThat(doubled(x, lr).toDoubleArray()).containsExactly(2 * lr, -4 * lr);
            }
        });
        assertThat(err.lines().filter(l -> l.contains("has been compiled")).toList()).hasSize(1);
        assertThat(err).contains("TracedScalarsTest.doubled(Tensor, double) has been compiled 9 times")
                .contains("argument 1 changed from 2.0 to 2.25")
                .contains("differs at").contains("TracedScalarsTest.java")
                .contains("host arithmetic");
    }

    @Compile
    static Tensor checked(Tensor x, Double a) {
        if (a < 0) {
            throw new IllegalArgumentException("a must not be negative, got " + a);
        }
        return x.mul(a);
    }

    @Test
    void specialValuesNullAndAValueTheBodyRefusesBehaveAsEagerDoes() {
        Tensor x = Tensor.of(new double[] {1, -2});
        assertThat(checked(x, 0.5).toDoubleArray()).containsExactly(0.5, -1);
        assertThat(checked(x, Double.NaN).toDoubleArray()).containsExactly(Double.NaN, Double.NaN);
        assertThat(checked(x, Double.POSITIVE_INFINITY).toDoubleArray())
                .containsExactly(Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY);
        assertThat(checked(x, 0.0).toDoubleArray()).containsExactly(0.0, -0.0);
        assertThat(1 / checked(x, -0.0).toDoubleArray()[0]).as("-0.0 is not 0.0").isEqualTo(Double.NEGATIVE_INFINITY);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> checked(x, -1.0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got -1.0");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> checked(x, null))
                .isInstanceOf(dev.weft.WeftException.class).hasMessageContaining("argument 1");
        assertThat(checked(x, 2.0).toDoubleArray()).as("after the failures").containsExactly(2, -4);
    }

    @Test
    void aBranchOnTheValueRunsTheBranchOfEachValue() {
        Tensor x = Tensor.of(new double[] {1, 2});
        for (double a : new double[] {0.25, 0.75, 0.3, 0.9, 0.5, 0.6}) {
            double[] expected = a > 0.5 ? new double[] {a, 2 * a} : new double[] {1 + a, 2 + a};
            assertThat(branch(x, a).toDoubleArray()).as("a = " + a).containsExactly(expected);
        }
    }

    @Test
    void aConstantThatMerelyEqualsTheFirstValueStaysAConstantForOthers() {
        Tensor x = Tensor.of(new double[] {1, 2});
        for (double a : new double[] {0.5, 0.25, 0.3, 0.5, 2}) {
            assertThat(affine(x, a).toDoubleArray()).as("a = " + a).containsExactly(a + 0.5, 2 * a + 0.5);
        }
    }

    @Test
    void aFloatIsAnF32ScalarRoundedAsEagerRoundsIt() {
        Tensor x = Tensor.of(new float[] {1, 3});
        for (float a : new float[] {0.1f, 0.7f, 1e-3f, -2.5f}) {
            Tensor eager = x.mul(a).add(a);
            assertThat(f32(x, a).toFloatArray()).as("a = " + a).containsExactly(eager.toFloatArray());
        }
    }

    @Test
    void valuesUsedInsideALoopBodyAreReadThere() {
        Tensor x = Tensor.of(new double[] {1, -1});
        String err = Stderr.of(() -> {
            for (int k = 0; k < 12; k++) {
                double d = 0.5 + 0.03 * k, s = 0.1 * k;
                double v0 = 1, v1 = -1;
                for (int i = 0; i < 3; i++) {
                    v0 = v0 * d + s;
                    v1 = v1 * d + s;
                }
                assertThat(inLoop(x, d, s).toDoubleArray()).containsExactly(new double[] {v0, v1}, within(1e-15));
            }
        });
        assertThat(err).doesNotContain("has been compiled");
    }

    @Compile
    static Update<Tensor, Adam.State<Tensor>> adamStep(Tensor w, Adam.State<Tensor> state, double lr) {
        return adamEager(w, state, lr);
    }

    static Update<Tensor, Adam.State<Tensor>> adamEager(Tensor w, Adam.State<Tensor> state, double lr) {
        Tensor g = Weft.grad((Tensor v) -> v.mul(v).sum()).apply(w);
        return Adam.of(lr).update(g, state, w);
    }

    @Test
    void anOptimizersRateIsTracedToo() {
        Tensor w = Tensor.of(new double[] {1, -2, 0.5});
        Adam.State<Tensor> state = Adam.of(0.1).init(w);
        String err = Stderr.of(() -> {
            for (int k = 0; k < 12; k++) {
                double lr = 0.1 * Math.pow(0.8, k);
                Update<Tensor, Adam.State<Tensor>> compiled = adamStep(w, state, lr), eager = adamEager(w, state, lr);
                assertThat(compiled.params().toDoubleArray()).as("lr = " + lr)
                        .containsExactly(eager.params().toDoubleArray(), within(1e-15));
                assertThat(compiled.params().toDoubleArray()[0]).isNotEqualTo(1.0);
            }
        });
        assertThat(err).doesNotContain("has been compiled");
    }

    @Test
    void aValueInsideAGradientIsRead() {
        Tensor w = Tensor.of(new double[] {1, -2});
        for (double lambda : new double[] {0.5, 0.1, 3, 0.1}) {
            assertThat(gradient(w, lambda).toDoubleArray())
                    .containsExactly(new double[] {2 * lambda + 1, -4 * lambda + 1}, within(1e-15));
        }
    }

    /** A rate that differs between ranks, under a data-parallel gradient: each rank's own number, compiled as eager. */
    @Ranks({1, 2, 3})
    void eachRanksValueOnFakeRanks(Comm c) {
        Tensor w = Tensor.of(new double[] {1, 2});
        for (int step = 0; step < 5; step++) {
            double lr = 0.1 / (step + 1) + (step % 2 == 0 ? 0 : 0.01 * c.rank());
            Tensor compiled = dataParallelStep(c, w, lr);
            Tensor eager = dataParallelEager(c, w, lr);
            assertThat(compiled.toDoubleArray()).containsExactly(eager.toDoubleArray(), within(1e-14));
        }
    }

    @Compile
    static Tensor dataParallelStep(Comm c, Tensor w, double lr) {
        return dataParallelEager(c, w, lr);
    }

    static Tensor dataParallelEager(Comm c, Tensor w, double lr) {
        Tensor x = Tensor.of(new double[] {c.rank() + 1, 1});
        Tensor g = Weft.grad((Tensor v) -> c.allreduce(v.mul(x).sum(), ReduceOp.SUM).mul(lr)).apply(c.replicated(w));
        return w.sub(g.mul(lr));
    }
}
