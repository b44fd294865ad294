package dev.weft.it.control;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.Jvp;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.testing.Ranks;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code Weft.whileLoop}, a loop on a data-dependent condition (JAX's {@code while_loop}): Newton's square root and a
 * conjugate-gradient solve until the residual is small, eager and compiled (equal to the bit), on one process and
 * with the dot products allreduced over 1 to 3 fake ranks; forward mode through it, vmap with per-element trip
 * counts, and the errors: reverse mode, a condition that is not a bool scalar, a body of the wrong arity.
 */
class WhileLoopTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Newton's iteration for sqrt(a) from a, carrying the estimate and the step count. */
    static List<Tensor> newton(Tensor a) {
        return Weft.whileLoop(c -> c.get(0).mul(c.get(0)).sub(a).abs().gt(1e-12),
                c -> List.of(c.get(0).add(a.div(c.get(0))).mul(0.5), c.get(1).add(1)),
                List.of(a, Tensor.scalar(DType.I32, 0)));
    }

    @Compile
    static List<Tensor> newtonCompiled(Tensor a) {
        return newton(a);
    }

    @Test
    void newtonsSquareRootRunsUntilConverged() {
        for (double v : new double[] {2, 1e6, 0.25, 1}) {
            Tensor a = Tensor.scalar(DType.F64, v);
            List<Tensor> eager = newton(a), compiled = newtonCompiled(a);
            assertThat(eager.get(0).item()).isCloseTo(Math.sqrt(v), within(1e-12 * Math.max(1, v)));
            assertThat(compiled.get(0).item()).isEqualTo(eager.get(0).item());
            assertThat(compiled.get(1).item()).isEqualTo(eager.get(1).item());
            if (v == 1) {
                assertThat(eager.get(1).item()).isZero();
            } else {
                assertThat(eager.get(1).item()).isPositive();
            }
        }
        assertThat(newton(Tensor.scalar(DType.F64, 1e6)).get(1).item()).isGreaterThan(5);
    }

    /**
     * Conjugate gradients for {@code A x = b}, rows split over the ranks of {@code c}: each rank holds its rows of A
     * and its entries of x, b; the matrix-vector product allgathers p, the dot products are allreduced, and the loop
     * runs until the residual's norm is below {@code tol} (the same on every rank).
     */
    static List<Tensor> cg(Comm c, Tensor aRows, Tensor b, double tol) {
        Tensor x = Tensor.zeros(b.dtype(), b.shape());
        Tensor rr = c.allreduce(b.mul(b).sum(), ReduceOp.SUM);
        return Weft.whileLoop(s -> s.get(3).gt(tol * tol), s -> {
            Tensor xi = s.get(0), r = s.get(1), p = s.get(2), rs = s.get(3);
            Tensor ap = aRows.matmul(c.allgather(p));
            Tensor alpha = rs.div(c.allreduce(p.mul(ap).sum(), ReduceOp.SUM));
            Tensor xn = xi.add(p.mul(alpha)), rn = r.sub(ap.mul(alpha));
            Tensor rsn = c.allreduce(rn.mul(rn).sum(), ReduceOp.SUM);
            return List.of(xn, rn, rn.add(p.mul(rsn.div(rs))), rsn, s.get(4).add(1));
        }, List.of(x, b, b, rr, Tensor.scalar(DType.I32, 0)));
    }

    @Compile
    static List<Tensor> cgCompiled(Comm c, Tensor aRows, Tensor b, double tol) {
        return cg(c, aRows, b, tol);
    }

    /** A symmetric positive definite n×n matrix: 4 on the diagonal, -1 beside it, and a little more. */
    static double[][] spd(int n) {
        double[][] a = new double[n][n];
        for (int i = 0; i < n; i++) {
            a[i][i] = 4 + 0.1 * i;
            if (i > 0) {
                a[i][i - 1] = a[i - 1][i] = -1;
            }
        }
        return a;
    }

    @Ranks({1, 2, 3})
    void conjugateGradientsSolveOverTheRanks(Comm c) {
        int local = 4, n = local * c.size();
        double[][] a = spd(n);
        double[] rows = new double[local * n], b = new double[local];
        for (int i = 0; i < local; i++) {
            int g = c.rank() * local + i;
            System.arraycopy(a[g], 0, rows, i * n, n);
            b[i] = 1 + g % 3;
        }
        Tensor aRows = Tensor.of(rows, local, n), bl = Tensor.of(b, local);
        List<Tensor> eager = cg(c, aRows, bl, 1e-10), compiled = cgCompiled(c, aRows, bl, 1e-10);
        assertThat(compiled.get(0).toDoubleArray()).containsExactly(eager.get(0).toDoubleArray());
        assertThat(compiled.get(4).item()).isEqualTo(eager.get(4).item());
        assertThat(eager.get(4).item()).isBetween(1.0, (double) n);
        // the residual of the whole system, every rank's rows against the gathered solution
        Tensor x = c.allgather(eager.get(0));
        double[] ax = aRows.matmul(x).toDoubleArray();
        for (int i = 0; i < local; i++) {
            assertThat(ax[i]).isCloseTo(b[i], within(1e-9));
        }
    }

    @Test
    void aConditionFalseAtOnceRunsNoStep() {
        Tensor x = Tensor.of(new float[] {1, 2});
        assertThat(Weft.whileLoop(v -> v.sum().lt(0), v -> v.mul(Float.NaN), x).toFloatArray())
                .containsExactly(1, 2);
    }

    @Test
    void forwardModeDifferentiatesTheSteps() {
        Tensor a = Tensor.scalar(DType.F64, 2);
        Jvp j = Weft.jvp(in -> List.of(newton(in.getFirst()).getFirst()), List.of(a),
                List.of(Tensor.scalar(DType.F64, 1)));
        assertThat(j.tangents().getFirst().item()).isCloseTo(1 / (2 * Math.sqrt(2)), within(1e-9));
    }

    @Test
    void reverseModeIsAnErrorNamingTheLine() {
        assertThatThrownBy(() -> Weft.grad(a -> newton(a).getFirst()).apply(Tensor.scalar(DType.F64, 2)))
                .isInstanceOf(WeftException.class).hasMessageContaining("cannot differentiate a whileLoop")
                .hasMessageStartingWith("WhileLoopTest.java:");
        // a loop that depends on no differentiated value is fine under grad
        Tensor g = Weft.grad((Tensor w) -> w.mul(newton(Tensor.scalar(DType.F64, 9)).getFirst()).sum())
                .apply(Tensor.of(new double[] {1, 1}));
        assertThat(g.toDoubleArray()).containsExactly(3, 3);
    }

    @Test
    void vmapRunsEachElementItsOwnNumberOfSteps() {
        Tensor as = Tensor.of(new double[] {1, 4, 1e4});
        Tensor roots = Weft.vmap((Tensor a) -> newton(a).getFirst()).apply(as);
        assertThat(roots.toDoubleArray()).containsExactly(new double[] {1, 2, 100}, within(1e-9));
        // a condition on an unbatched value stays one loop
        Tensor doubled = Weft.vmap((Tensor v) -> Weft.whileLoop(s -> s.get(1).lt(3),
                s -> List.of(s.get(0).mul(2), s.get(1).add(1)), List.of(v, Tensor.scalar(DType.I32, 0))).getFirst())
                .apply(Tensor.of(new double[] {1, 2, 3}));
        assertThat(doubled.toDoubleArray()).containsExactly(8, 16, 24);
    }

    @Test
    void aConditionThatIsNotABoolScalarIsAnError() {
        Tensor x = Tensor.of(new float[] {1, 2});
        assertThatThrownBy(() -> Weft.whileLoop(v -> v.gt(0), v -> v, x)).isInstanceOf(DTypeException.class)
                .hasMessageContaining("one bool scalar").hasMessageStartingWith("WhileLoopTest.java:");
        assertThatThrownBy(() -> Weft.whileLoop(v -> v.get(0).sum().gt(0), v -> List.of(v.get(0), v.get(0)),
                List.of(x))).isInstanceOf(ShapeException.class)
                .hasMessageContaining("the body returns List[Tensor, Tensor] but the loop carries List[Tensor]");
    }
}
