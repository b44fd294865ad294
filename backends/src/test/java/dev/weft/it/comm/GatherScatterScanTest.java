package dev.weft.it.comm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.testing.Ranks;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@code gather}, {@code scatter}, {@code scan} and {@code exscan} on 1 to 4 fake ranks (and under mpirun through
 * {@code GradProgram}): values against what each rank computes from every rank's inputs, compiled equal to eager,
 * and gradients of the one global loss against central differences (their results vary from rank to rank, so each
 * rank's counts).
 */
public class GatherScatterScanTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Rank r's operand: {@code [r + 1, 10 (r + 1), -(r + 1)]}. */
    static Tensor operand(int r) {
        return Tensor.of(new double[] {r + 1, 10 * (r + 1), -(r + 1)}, 3);
    }

    static List<Tensor> all(Comm c, Tensor x) {
        Tensor full = Tensor.arange(DType.F64, 4L * c.size()).reshape(c.size() * 2L, 2).add(c.rank() * 100);
        return List.of(c.gather(x, c.size() - 1), c.scatter(full, 0), c.scan(x, ReduceOp.SUM),
                c.exscan(x, ReduceOp.SUM), c.scan(x, ReduceOp.MAX), c.exscan(x, ReduceOp.MIN),
                c.scan(x.mul(0.5), ReduceOp.PROD));
    }

    @Compile
    static List<Tensor> allCompiled(Comm c, Tensor x) {
        return all(c, x);
    }

    @Ranks({1, 2, 3, 4})
    void valuesAreMpisAndCompiledEqualsEager(Comm c) {
        checkValues(c);
    }

    /** Every routine's result on this rank against the plain reference, eager and compiled. */
    public static void checkValues(Comm c) {
        int n = c.size(), r = c.rank();
        for (List<Tensor> got : List.of(all(c, operand(r)), allCompiled(c, operand(r)))) {
            if (r == n - 1) {
                double[] g = new double[3 * n];
                for (int s = 0; s < n; s++) {
                    System.arraycopy(operand(s).toDoubleArray(), 0, g, 3 * s, 3);
                }
                assertThat(got.get(0).toDoubleArray()).containsExactly(g);
            } else {
                assertThat(got.get(0).shape()).containsExactly(0);
            }
            // scatter from rank 0: rows 2r, 2r+1 of rank 0's [0, 1, 2, ...]
            assertThat(got.get(1).toDoubleArray()).containsExactly(4 * r, 4 * r + 1, 4 * r + 2, 4 * r + 3);
            double inclusive = 0, exclusive = 0;
            for (int s = 0; s <= r; s++) {
                inclusive += s + 1;
                exclusive += s < r ? s + 1 : 0;
            }
            assertThat(got.get(2).toDoubleArray()).containsExactly(inclusive, 10 * inclusive, 0.0 - inclusive);
            assertThat(got.get(3).toDoubleArray()).containsExactly(exclusive, 10 * exclusive, 0.0 - exclusive);
            assertThat(got.get(4).toDoubleArray()).containsExactly(r + 1, 10 * (r + 1), -1);
            double[] minEx = got.get(5).toDoubleArray();
            if (r == 0) {
                assertThat(minEx).containsExactly(Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY,
                        Double.POSITIVE_INFINITY);
            } else {
                assertThat(minEx).containsExactly(1, 10, -r);
            }
            double prod = 1;
            for (int s = 0; s <= r; s++) {
                prod *= 0.5 * (s + 1);
            }
            assertThat(got.get(6).toDoubleArray()[0]).isCloseTo(prod, within(1e-15));
        }
    }

    /** A loss that varies: every rank's sum of the routines' results, differently weighted. */
    static double total(Comm c, Tensor x) {
        return c.allreduce(loss(c, x), ReduceOp.SUM).item();
    }

    static Tensor loss(Comm c, Tensor x) {
        Tensor sq = x.mul(x);
        Tensor s = c.scan(sq, ReduceOp.SUM).mul(c.rank() + 1).sum().add(c.exscan(x.sin(), ReduceOp.SUM).sum())
                .add(c.gather(x.exp(), 0).sum().mul(2)).add(c.scan(x, ReduceOp.MAX).sum());
        Tensor full = c.allgather(x).reshape(c.size(), 3);
        return s.add(c.scatter(full.mul(full), 0).sum());
    }

    @Ranks({1, 2, 3})
    void gradientsAreThoseOfTheGlobalLoss(Comm c) {
        checkGradients(c);
    }

    /** Each rank's gradient, summed against a direction over the ranks, against central differences. */
    public static void checkGradients(Comm c) {
        Tensor x = operand(c.rank()).mul(0.1);
        Tensor t = Tensor.of(new double[] {0.3, -0.7, 0.2 * (c.rank() + 1)});
        Tensor g = Weft.grad((Tensor v) -> loss(c, v)).apply(x);
        double dot = c.allreduce(g.mul(t).sum(), ReduceOp.SUM).item();
        double h = 1e-6;
        double fd = (total(c, x.add(t.mul(h))) - total(c, x.sub(t.mul(h)))) / (2 * h);
        assertThat(dot).isCloseTo(fd, within(1e-6 * (1 + Math.abs(fd))));
    }

    @Ranks({2})
    void badRootsAndShapesAreErrorsNamingTheLine(Comm c) {
        assertThatThrownBy(() -> c.gather(operand(0), 2)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("GatherScatterScanTest.java:").hasMessageContaining("root rank 2");
        assertThatThrownBy(() -> c.scatter(Tensor.zeros(DType.F32, 3), 0)).isInstanceOf(ShapeException.class)
                .hasMessageContaining("does not split along axis 0 into 2");
    }
}
