package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code jacfwd} and {@code jacrev} give the full Jacobian, of shape {@code f(x).shape ++ x.shape}, equal to each
 * other, to central finite differences, and compiled to eager.
 */
class JacobianTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** f64[2,3] → f64[3]: column sums of sin(x)·x², a non-diagonal Jacobian. */
    static Tensor f(Tensor x) {
        return x.sin().mul(x.mul(x)).sum(0).add(x.sum().mul(0.5));
    }

    @Compile
    static List<Tensor> compiled(Tensor x) {
        return List.of(Weft.jacfwd(JacobianTest::f).apply(x), Weft.jacrev(JacobianTest::f).apply(x));
    }

    @Test
    void bothModesGiveTheJacobianOfFiniteDifferences() {
        double[] xs = {0.3, -1.1, 0.7, 2.0, -0.4, 1.3};
        Tensor x = Tensor.of(xs, 2, 3);
        Tensor fwd = Weft.jacfwd(JacobianTest::f).apply(x);
        Tensor rev = Weft.jacrev(JacobianTest::f).apply(x);
        assertThat(fwd.shape()).containsExactly(3, 2, 3);
        assertThat(rev.shape()).containsExactly(3, 2, 3);
        double[] jf = fwd.toDoubleArray(), jr = rev.toDoubleArray();
        double h = 1e-6;
        for (int j = 0; j < xs.length; j++) {
            double[] up = xs.clone(), down = xs.clone();
            up[j] += h;
            down[j] -= h;
            double[] fu = f(Tensor.of(up, 2, 3)).toDoubleArray(), fd = f(Tensor.of(down, 2, 3)).toDoubleArray();
            for (int i = 0; i < 3; i++) {
                double expected = (fu[i] - fd[i]) / (2 * h);
                assertThat(jf[i * 6 + j]).isCloseTo(expected, Offset.offset(1e-7));
                assertThat(jr[i * 6 + j]).isCloseTo(jf[i * 6 + j], Offset.offset(1e-12));
            }
        }
        List<Tensor> c = compiled(x);
        assertThat(c.get(0).toDoubleArray()).containsExactly(jf, Offset.offset(1e-12));
        assertThat(c.get(1).toDoubleArray()).containsExactly(jr, Offset.offset(1e-12));
    }
}
