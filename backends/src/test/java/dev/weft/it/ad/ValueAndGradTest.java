package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.ValueAndGrad;
import dev.weft.Weft;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code Weft.valueAndGrad}: the value and the gradient of {@code grad}, from one evaluation of the function. */
class ValueAndGradTest {
    private static final AtomicInteger CALLS = new AtomicInteger();

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** {@code sum(sin(x) x)}, counting its evaluations. */
    static Tensor f(Tensor x) {
        CALLS.incrementAndGet();
        return x.sin().mul(x).sum();
    }

    @Compile
    static List<Tensor> compiled(Tensor x) {
        ValueAndGrad vg = Weft.valueAndGrad(ValueAndGradTest::f).apply(x);
        return List.of(vg.value(), vg.grad());
    }

    /** {@code sum(a b) + sum(a)·k} for f64 {@code a}, {@code b} and an i32 scalar {@code k}. */
    static Tensor several(List<Tensor> in) {
        Tensor a = in.get(0), b = in.get(1), k = in.get(2);
        return a.mul(b).sum().add(a.sum().mul(k.cast(a.dtype())));
    }

    @Compile
    static List<Tensor> severalCompiled(Tensor a, Tensor b, Tensor k) {
        return Weft.grad(ValueAndGradTest::several, 1, 0).apply(List.of(a, b, k));
    }

    @Test
    void gradientsWithRespectToSeveralArgumentsInTheOrderNamed() {
        Tensor a = Tensor.of(new double[] {1, 2}), b = Tensor.of(new double[] {-3, 0.5}), k = Tensor.of(new int[] {4})
                .reshape();
        List<Tensor> g = Weft.grad(ValueAndGradTest::several, 0, 1).apply(List.of(a, b, k));
        assertThat(g.get(0).toDoubleArray()).containsExactly(1, 4.5);
        assertThat(g.get(1).toDoubleArray()).containsExactly(1, 2);
        List<Tensor> c = severalCompiled(a, b, k);
        assertThat(c.get(0).toDoubleArray()).containsExactly(1, 2);
        assertThat(c.get(1).toDoubleArray()).containsExactly(1, 4.5);
        assertThatThrownBy(() -> Weft.grad(ValueAndGradTest::several, 2).apply(List.of(a, b, k)))
                .isInstanceOf(DTypeException.class)
                .hasMessageContaining("grad: argument 2 must be f32 or f64, got i32[]");
        assertThatThrownBy(() -> Weft.grad(ValueAndGradTest::several, 3).apply(List.of(a, b, k)))
                .isInstanceOf(ShapeException.class).hasMessageContaining("grad: argument 3 does not exist");
    }

    @Test
    void theValueAndTheGradientFromOneEvaluation() {
        double[] xs = {0.5, -1.25, 2};
        Tensor x = Tensor.of(xs);
        CALLS.set(0);
        ValueAndGrad eager = Weft.valueAndGrad(ValueAndGradTest::f).apply(x);
        assertThat(CALLS.get()).isEqualTo(1);
        double value = 0;
        double[] grad = new double[xs.length];
        for (int i = 0; i < xs.length; i++) {
            value += Math.sin(xs[i]) * xs[i];
            grad[i] = Math.cos(xs[i]) * xs[i] + Math.sin(xs[i]);
        }
        assertThat(eager.value().item()).isEqualTo(value);
        assertThat(eager.grad().toDoubleArray()).containsExactly(grad);
        assertThat(eager.grad().toDoubleArray()).containsExactly(Weft.grad(ValueAndGradTest::f).apply(x)
                .toDoubleArray());
        List<Tensor> c = compiled(x);
        assertThat(c.get(0).item()).isEqualTo(value);
        assertThat(c.get(1).toDoubleArray()).containsExactly(grad);
    }
}
