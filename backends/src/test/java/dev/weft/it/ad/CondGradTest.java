package dev.weft.it.ad;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.testing.Ranks;
import java.util.List;
import org.assertj.core.data.Offset;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Reverse mode of {@code cond} runs only the branch taken: a norm guard {@code cond(|w|² > 0, |w|, 3·sum(w))} at
 * {@code w = 0} has the gradient of its false branch, 3 everywhere (PyTorch's answer), where selecting between both
 * branches' derivatives pulled a zero cotangent through {@code sqrt}'s infinite slope at 0 and gave NaN.
 */
class CondGradTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** {@code |w|} where it is positive, else {@code 3 sum(w)}: the true branch is singular at 0. */
    static Tensor guarded(Tensor w) {
        Tensor n2 = w.mul(w).sum();
        return Weft.cond(n2.gt(0), n2::sqrt, () -> w.sum().mul(3));
    }

    static Tensor gradEager(Tensor w) {
        return Weft.grad(CondGradTest::guarded).apply(w);
    }

    @Compile
    static Tensor gradCompiled(Tensor w) {
        return gradEager(w);
    }

    @Compile
    static Tensor vjpCompiled(Tensor w, Tensor ct) {
        return Weft.vjp(v -> List.of(guarded(v.getFirst()).mul(v.getFirst())), List.of(w)).pullback(List.of(ct))
                .getFirst();
    }

    /** The guard inside a loop: each step adds the guarded value of the carry to it. */
    static Tensor looped(Tensor w) {
        return Weft.fori(0, 3, w, (i, c) -> c.add(guarded(c).mul(0.5))).sum();
    }

    @Compile
    static Tensor loopGradCompiled(Tensor w) {
        return Weft.grad(CondGradTest::looped).apply(w);
    }

    /** d/dw of sum(grad guarded): the second derivative, through a cond both ways. */
    @Compile
    static Tensor gradOfGradCompiled(Tensor w) {
        return Weft.grad(v -> Weft.grad(CondGradTest::guarded).apply(v).mul(v).sum()).apply(w);
    }

    /** A branch that communicates: an allreduce on one side, local work on the other. */
    static Tensor reduced(Comm c, Tensor w) {
        return Weft.grad(v -> Weft.cond(v.sum().gt(0), () -> c.allreduce(v.mul(v), ReduceOp.SUM).sum(),
                () -> v.sum().mul(2))).apply(w);
    }

    @Compile
    static Tensor reducedCompiled(Comm c, Tensor w) {
        return reduced(c, w);
    }

    @Ranks({1, 2, 3})
    void aBranchThatCommunicatesIsDifferentiatedAsEagerly(Comm c) {
        for (double sign : new double[] {1, -1}) {
            Tensor w = Tensor.of(new double[] {sign * (c.rank() + 1), sign * 0.5});
            assertThat(reducedCompiled(c, w).toDoubleArray()).containsExactly(reduced(c, w).toDoubleArray());
        }
    }

    @Test
    void theBranchNotTakenPassesNoDerivative() {
        Tensor zero = Tensor.of(new double[] {0, 0, 0});
        assertThat(gradCompiled(zero).toDoubleArray()).containsExactly(3, 3, 3);
        assertThat(gradEager(zero).toDoubleArray()).containsExactly(3, 3, 3);
        Tensor w = Tensor.of(new double[] {1, 2, 2});
        assertThat(gradCompiled(w).toDoubleArray()).containsExactly(1 / 3.0, 2 / 3.0, 2 / 3.0);
        assertThat(gradCompiled(w).toDoubleArray()).containsExactly(gradEager(w).toDoubleArray());
    }

    @Test
    void aPullbackThroughTheGuardAtZero() {
        Tensor zero = Tensor.of(new double[] {0, 0});
        // d/dw (f(w) w)·ct at 0 = f(0) ct + (grad f · ct-weighted w) = 0 + 0, finite
        assertThat(vjpCompiled(zero, Tensor.of(new double[] {1, 1})).toDoubleArray()).containsExactly(0, 0);
        Tensor w = Tensor.of(new double[] {3, 4});
        Tensor ct = Tensor.of(new double[] {1, 2});
        // f = 5; d/dw_i (f w_j) ct_j = f ct_i + w_i/f sum_j w_j ct_j = 5 ct_i + w_i (11/5)
        assertThat(vjpCompiled(w, ct).toDoubleArray()).containsExactly(new double[] {5 + 3 * 11 / 5.0,
                10 + 4 * 11 / 5.0}, Offset.offset(1e-12));
    }

    @Test
    void insideALoopAndUnderGradOfGrad() {
        Tensor zero = Tensor.of(new double[] {0, 0});
        // each step: c <- c + 1.5 sum(c) at c = 0 stays 0; d/dc of one step is I + 1.5·ones (the false branch)
        double[] g = loopGradCompiled(zero).toDoubleArray();
        double step = 1 + 1.5 * 2;
        assertThat(g).containsExactly(step * step * step, step * step * step);
        assertThat(gradOfGradCompiled(zero).toDoubleArray()).containsExactly(3, 3);
        Tensor w = Tensor.of(new double[] {0.3, -0.4});
        double h = 1e-6;
        double[] exact = loopGradCompiled(w).toDoubleArray();
        for (int i = 0; i < 2; i++) {
            double[] up = {0.3, -0.4}, down = {0.3, -0.4};
            up[i] += h;
            down[i] -= h;
            double fd = (looped(Tensor.of(up)).item() - looped(Tensor.of(down)).item()) / (2 * h);
            assertThat(exact[i]).isCloseTo(fd, Offset.offset(1e-6));
        }
    }
}
