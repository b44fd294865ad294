package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.TracedValueException;
import dev.weft.Weft;
import dev.weft.testing.TensorAssert;
import java.util.List;
import java.util.Random;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Transforms compose with each other, with {@code @Compile} and with control flow nested in control flow: compiled
 * results equal eager ones bit for bit, and both equal finite differences.
 */
class NestingTest {
    private static final Random RND = new Random(11);

    private static Tensor random(long... shape) {
        return AdRulesTest.random(shape, -1, 1, false, RND);
    }

    @Test
    void jvpInsideCompileOfALoopCapturingAnOuterValue() {
        Tensor x = random(5), w = random(5), tx = random(5), tw = random(5);
        List<Tensor> eager = NestingPrograms.jvpEager(x, w, tx, tw);
        TensorAssert.assertThat(NestingPrograms.jvpCompiled(x, w, tx, tw).getFirst()).isEqualTo(eager.getFirst());
        double eps = 1e-6;
        double[] plus = NestingPrograms.capturing(x.add(tx.mul(eps)), w.add(tw.mul(eps))).toDoubleArray();
        double[] minus = NestingPrograms.capturing(x.sub(tx.mul(eps)), w.sub(tw.mul(eps))).toDoubleArray();
        AdRulesTest.assertClose(eager.getFirst().toDoubleArray(), difference(plus, minus, eps), 1e-6);
    }

    @Test
    void theJvpOfALoopIsOneLoopInTheCompiledProgram() {
        String mlir = Weft.lower(NestingPrograms.class, "jvpCompiled", TensorSpec.of(DType.F64, 5),
                TensorSpec.of(DType.F64, 5), TensorSpec.of(DType.F64, 5), TensorSpec.of(DType.F64, 5)).toMlir();
        assertThat(mlir.split("stablehlo.while", -1)).hasSize(2);
    }

    @Test
    void gradAndJvpThroughAForiInsideACondInsideAFori() {
        for (double sign : new double[] {1, -1}) {
            Tensor x = random(4).abs().add(0.1).mul(sign), w = random(4), t = random(4);
            Tensor g = NestingPrograms.nestedGradEager(x, w);
            TensorAssert.assertThat(NestingPrograms.nestedGradCompiled(x, w)).isEqualTo(g);
            Tensor tangent = NestingPrograms.nestedJvpEager(x, w, t).getFirst();
            TensorAssert.assertThat(NestingPrograms.nestedJvpCompiled(x, w, t).getFirst()).isEqualTo(tangent);
            UnaryOperator<Tensor> f = v -> NestingPrograms.nested(v, w);
            AdRulesTest.assertClose(tangent.toDoubleArray(), directional(x, t, f), 1e-6);
            double dot = 0;
            for (int i = 0; i < 4; i++) {
                dot += g.toDoubleArray()[i] * t.toDoubleArray()[i];
            }
            double sumOfTangent = 0;
            for (double d : tangent.toDoubleArray()) {
                sumOfTangent += d;
            }
            assertThat(dot).isCloseTo(sumOfTangent, within(1e-12));
        }
    }

    @Test
    void gradOfGradThroughALoop() {
        Tensor x = random(6);
        Tensor eager = NestingPrograms.secondEager(x);
        TensorAssert.assertThat(NestingPrograms.secondCompiled(x)).isEqualTo(eager);
        double eps = 1e-5;
        double[] xs = x.toDoubleArray(), d2 = eager.toDoubleArray();
        for (int i = 0; i < xs.length; i++) {
            double[] plus = xs.clone(), minus = xs.clone();
            plus[i] += eps;
            minus[i] -= eps;
            double gp = firstDerivative(plus)[i], gm = firstDerivative(minus)[i];
            assertThat(d2[i]).isCloseTo((gp - gm) / (2 * eps), within(1e-6));
        }
    }

    @Test
    void jvpOfJvpThroughALoop() {
        Tensor x = random(5), t = random(5);
        Tensor eager = NestingPrograms.jvpOfJvpEager(x, t);
        TensorAssert.assertThat(NestingPrograms.jvpOfJvpCompiled(x, t)).isEqualTo(eager);
        double eps = 1e-4;
        double[] a = NestingPrograms.loop(x.add(t.mul(eps))).toDoubleArray();
        double[] b = NestingPrograms.loop(x).toDoubleArray();
        double[] c = NestingPrograms.loop(x.sub(t.mul(eps))).toDoubleArray();
        double[] second = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            second[i] = (a[i] - 2 * b[i] + c[i]) / (eps * eps);
        }
        AdRulesTest.assertClose(eager.toDoubleArray(), second, 1e-4);
    }

    @Test
    void aJvpInsideALoopBody() {
        Tensor x = random(3);
        Tensor eager = NestingPrograms.jvpInsideLoop(x);
        TensorAssert.assertThat(NestingPrograms.jvpInsideLoopCompiled(x)).isEqualTo(eager);
        double[] c = x.toDoubleArray();
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < c.length; i++) {
                c[i] = Math.cos(c[i] * c[i]) * c[i] * c[i];
            }
        }
        AdRulesTest.assertClose(eager.toDoubleArray(), c, 1e-12);
    }

    @Test
    void anEagerLoopTracesItsBodyOnceAndGivesAFreshResultPerCall() {
        int[] runs = new int[1];
        Tensor x = Tensor.of(new double[] {1, 2});
        Tensor a = Weft.fori(0, 5, x, (i, c) -> {
            runs[0]++;
            return c.add(1);
        });
        Tensor b = Weft.fori(0, 5, x, (i, c) -> c.add(1));
        assertThat(runs[0]).isEqualTo(1);
        assertThat(a).isNotSameAs(b);
        assertThat(a.toDoubleArray()).containsExactly(6, 7);
        assertThat(b.toDoubleArray()).containsExactly(6, 7);
    }

    @Test
    void aValueKeptFromAnEagerLoopBodyIsAnErrorWhereItIsUsed() {
        Tensor[] kept = new Tensor[1];
        Weft.fori(0, 2, Tensor.of(new double[] {1}), (i, c) -> kept[0] = c.add(c));
        assertThatThrownBy(() -> kept[0].mul(2))
                .isInstanceOf(TracedValueException.class)
                .hasMessageStartingWith("NestingTest.java:")
                .hasMessageContaining("outside the fori body or cond branch");
    }

    private static double[] firstDerivative(double[] x) {
        return Weft.grad(u -> NestingPrograms.loop(u).sum()).apply(Tensor.of(x)).toDoubleArray();
    }

    private static double[] directional(Tensor x, Tensor t, UnaryOperator<Tensor> f) {
        double eps = 1e-6;
        return difference(f.apply(x.add(t.mul(eps))).toDoubleArray(), f.apply(x.sub(t.mul(eps))).toDoubleArray(),
                eps);
    }

    private static double[] difference(double[] plus, double[] minus, double eps) {
        double[] d = new double[plus.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = (plus[i] - minus[i]) / (2 * eps);
        }
        return d;
    }
}
