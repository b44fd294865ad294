package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
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
