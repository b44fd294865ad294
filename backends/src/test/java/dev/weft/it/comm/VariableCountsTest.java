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
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@code allgatherv}, {@code gatherv}, {@code scatterv} and {@code alltoallv} on 1 to 4 fake ranks (and under mpirun
 * through {@code GradProgram}), with counts that include zero: values against the rows each rank passes, written out
 * here, compiled equal to eager, and gradients of a global loss against central differences.
 */
public class VariableCountsTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Rank r's count in the gathers: {@code (r + 2) % 3}, so rank 1 passes none. */
    static long[] counts(int n) {
        long[] c = new long[n];
        for (int r = 0; r < n; r++) {
            c[r] = (r + 2) % 3;
        }
        return c;
    }

    /** What rank r sends rank j in the alltoallv: {@code (r + 2j) % 3} rows. */
    static long sendCount(int r, int j) {
        return (r + 2L * j) % 3;
    }

    /** {@code rows} rows of two columns: {@code [100 r + 10 i + c]} offset by {@code base}. */
    static Tensor rows(int r, long rows, double base) {
        double[] v = new double[(int) rows * 2];
        for (int i = 0; i < rows; i++) {
            v[2 * i] = base + 100 * r + 10 * i;
            v[2 * i + 1] = base + 100 * r + 10 * i + 1;
        }
        return Tensor.of(v, rows, 2);
    }

    static long[][] alltoallCounts(Comm c) {
        int n = c.size(), me = c.rank();
        long[] send = new long[n], recv = new long[n];
        for (int j = 0; j < n; j++) {
            send[j] = sendCount(me, j);
            recv[j] = sendCount(j, me);
        }
        return new long[][] {send, recv};
    }

    /** Rank r's alltoallv operand: the rows for rank j are {@code rows(r, sendCount(r, j), 1000 j)}. */
    static Tensor alltoallOperand(int r, int n) {
        List<Tensor> parts = new ArrayList<>();
        for (int j = 0; j < n; j++) {
            parts.add(rows(r, sendCount(r, j), 1000 * j));
        }
        return Tensor.concat(0, parts.toArray(Tensor[]::new));
    }

    static List<Tensor> all(Comm c, Tensor mine, Tensor full, Tensor toAll) {
        long[] counts = counts(c.size());
        long[][] a2a = alltoallCounts(c);
        return List.of(c.allgatherv(mine, counts), c.gatherv(mine, counts, c.size() - 1),
                c.scatterv(full, counts, 0), c.alltoallv(toAll, a2a[0], a2a[1]));
    }

    @Compile
    static List<Tensor> allCompiled(Comm c, Tensor mine, Tensor full, Tensor toAll) {
        return all(c, mine, full, toAll);
    }

    @Ranks({1, 2, 3, 4})
    void valuesAreMpisAndCompiledEqualsEager(Comm c) {
        checkValues(c);
    }

    public static void checkValues(Comm c) {
        int n = c.size(), me = c.rank();
        long[] counts = counts(n);
        long total = 0;
        for (long k : counts) {
            total += k;
        }
        Tensor mine = rows(me, counts[me], 0);
        Tensor full = rows(me, total, 0);
        Tensor toAll = alltoallOperand(me, n);
        for (List<Tensor> got : List.of(all(c, mine, full, toAll), allCompiled(c, mine, full, toAll))) {
            List<Tensor> expected = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                expected.add(rows(r, counts[r], 0));
            }
            double[] gathered = Tensor.concat(0, expected.toArray(Tensor[]::new)).toDoubleArray();
            assertThat(got.get(0).shape()).containsExactly(total, 2);
            assertThat(got.get(0).toDoubleArray()).containsExactly(gathered);
            if (me == n - 1) {
                assertThat(got.get(1).toDoubleArray()).containsExactly(gathered);
            } else {
                assertThat(got.get(1).shape()).containsExactly(0, 2);
            }
            // scatterv from rank 0: rows [offset, offset + counts[me]) of rank 0's full operand
            long offset = 0;
            for (int r = 0; r < me; r++) {
                offset += counts[r];
            }
            assertThat(got.get(2).toDoubleArray())
                    .containsExactly(rows(0, total, 0).slice(0, offset, offset + counts[me]).toDoubleArray());
            List<Tensor> received = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                received.add(rows(i, sendCount(i, me), 1000 * me));
            }
            assertThat(got.get(3).toDoubleArray())
                    .containsExactly(Tensor.concat(0, received.toArray(Tensor[]::new)).toDoubleArray());
        }
    }

    /** A global loss of x: its first {@code counts[rank]} rows go to the gathers, the rest to the alltoallv. */
    static Tensor loss(Comm c, Tensor x) {
        long[] counts = counts(c.size());
        long[][] a2a = alltoallCounts(c);
        long k = counts[c.rank()];
        Tensor mine = x.slice(0, 0, k);
        Tensor toAll = x.slice(0, k, x.shape()[0]);
        Tensor s = c.allgatherv(mine.mul(mine), counts).sum().mul(c.rank() + 1)
                .add(c.gatherv(mine.sin(), counts, 0).sum())
                .add(c.alltoallv(toAll.exp(), a2a[0], a2a[1]).mul(c.rank() + 2).sum());
        Tensor wide = c.allgatherv(mine, counts);
        return s.add(c.scatterv(wide.mul(wide), counts, 0).sum());
    }

    @Ranks({1, 2, 3})
    void gradientsAreThoseOfTheGlobalLoss(Comm c) {
        checkGradients(c);
    }

    /** Each rank's gradient, summed against a direction over the ranks, against central differences. */
    public static void checkGradients(Comm c) {
        int n = c.size(), me = c.rank();
        long rows = counts(n)[me];
        for (int j = 0; j < n; j++) {
            rows += sendCount(me, j);
        }
        Tensor x = Tensor.arange(DType.F64, rows * 2).reshape(rows, 2).mul(0.01).add(0.1 * me);
        Tensor t = Tensor.arange(DType.F64, rows * 2).reshape(rows, 2).mul(-0.3).add(0.2 * (me + 1));
        Tensor g = Weft.grad((Tensor v) -> loss(c, v)).apply(x);
        assertThat(g.shape()).containsExactly(rows, 2);
        double dot = c.allreduce(g.mul(t).sum(), ReduceOp.SUM).item();
        double h = 1e-6;
        double plus = c.allreduce(loss(c, x.add(t.mul(h))), ReduceOp.SUM).item();
        double minus = c.allreduce(loss(c, x.sub(t.mul(h))), ReduceOp.SUM).item();
        double fd = (plus - minus) / (2 * h);
        assertThat(Math.abs(fd)).as("a loss that depends on x").isGreaterThan(0.1);
        assertThat(dot).isCloseTo(fd, within(1e-6 * (1 + Math.abs(fd))));
    }

    @Ranks({2})
    void countsThatDoNotAddUpAreErrorsNamingTheLine(Comm c) {
        Tensor x = rows(c.rank(), 2, 0);
        assertThatThrownBy(() -> c.allgatherv(x, new long[] {2, 2, 2})).isInstanceOf(ShapeException.class)
                .hasMessageStartingWith("VariableCountsTest.java:").hasMessageContaining("3 entries");
        assertThatThrownBy(() -> c.allgatherv(x, new long[] {2, -1})).isInstanceOf(ShapeException.class)
                .hasMessageContaining("negative");
        assertThatThrownBy(() -> c.allgatherv(x, new long[] {1, 1})).isInstanceOf(ShapeException.class)
                .hasMessageContaining("needs 1 rows");
        assertThatThrownBy(() -> c.scatterv(x, new long[] {1, 2}, 0)).isInstanceOf(ShapeException.class)
                .hasMessageContaining("needs 3 rows");
        assertThatThrownBy(() -> c.alltoallv(x, new long[] {1, 2}, new long[] {1, 1}))
                .isInstanceOf(ShapeException.class).hasMessageContaining("needs 3 rows");
        assertThatThrownBy(() -> c.gatherv(x, new long[] {2, 2}, 5)).isInstanceOf(WeftException.class)
                .hasMessageContaining("root rank 5");
    }

    /** Rank 1 sends rank 0 two rows where rank 0 expects one: every rank's call fails at its line, saying so. */
    @Ranks({2})
    void alltoallvCountsThatDisagreeBetweenRanksAreErrorsOnEveryRank(Comm c) {
        long[] send = c.rank() == 0 ? new long[] {1, 1} : new long[] {2, 1};
        Tensor x = rows(c.rank(), (int) (send[0] + send[1]), 0);
        assertThatThrownBy(() -> c.alltoallv(x, send, new long[] {1, 1})).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("VariableCountsTest.java:")
                .hasMessageContaining("alltoallv(f64)")
                .hasMessageContaining("rank 1 sends 4 elements to rank 0, which receives 2 from it");
    }
}
