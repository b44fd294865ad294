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
import dev.weft.comm.CartComm;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.testing.Ranks;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Cartesian communicators and {@link Comm#PROC_NULL} on 1 to 6 fake ranks (and under mpirun through
 * {@code GradProgram}): the grid against row-major arithmetic written out here, neighbour collectives against what
 * each neighbour holds, compiled equal to eager, and gradients against central differences.
 */
public class CartCommTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @Test
    void dimsCreateBalancesTheFactorsLikeMpi() {
        // MPI_Dims_create's answers (Open MPI and MPICH agree on these)
        assertThat(Comm.dimsCreate(12, 2)).containsExactly(4, 3);
        assertThat(Comm.dimsCreate(7, 2)).containsExactly(7, 1);
        assertThat(Comm.dimsCreate(8, 3)).containsExactly(2, 2, 2);
        assertThat(Comm.dimsCreate(16, 2)).containsExactly(4, 4);
        assertThat(Comm.dimsCreate(24, 3)).containsExactly(4, 3, 2);
        assertThat(Comm.dimsCreate(6, 1)).containsExactly(6);
        assertThat(Comm.dimsCreate(1, 3)).containsExactly(1, 1, 1);
        assertThat(Comm.dimsCreate(36, 2)).containsExactly(6, 6);
        assertThatThrownBy(() -> Comm.dimsCreate(0, 2)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("CartCommTest.java:");
    }

    /** A 2-D grid, periodic along dimension 0 only. */
    static CartComm grid(Comm c) {
        return c.cart(Comm.dimsCreate(c.size(), 2), new boolean[] {true, false});
    }

    @Ranks({1, 2, 3, 4, 6})
    void coordinatesAndShiftsAreRowMajor(Comm c) {
        checkGrid(c);
    }

    public static void checkGrid(Comm c) {
        CartComm g = grid(c);
        int[] dims = g.dims();
        int r = g.rank();
        assertThat(g.size()).isEqualTo(c.size());
        assertThat(g.coords()).containsExactly(r / dims[1], r % dims[1]);
        for (int q = 0; q < g.size(); q++) {
            assertThat(g.rankOf(g.coords(q))).isEqualTo(q);
        }
        int row = r / dims[1], col = r % dims[1];
        CartComm.Shift down = g.shift(0, 1);
        assertThat(down.dest()).isEqualTo(Math.floorMod(row + 1, dims[0]) * dims[1] + col);
        assertThat(down.source()).isEqualTo(Math.floorMod(row - 1, dims[0]) * dims[1] + col);
        CartComm.Shift right = g.shift(1, 1);
        assertThat(right.dest()).isEqualTo(col + 1 < dims[1] ? r + 1 : Comm.PROC_NULL);
        assertThat(right.source()).isEqualTo(col > 0 ? r - 1 : Comm.PROC_NULL);
        assertThat(g.rankOf(row - dims[0], col)).as("periodic wrap").isEqualTo(r);
        assertThat(g).isNotEqualTo(c);
    }

    /** Rank q's operand: {@code [q, 10 q + 1]}. */
    static Tensor operand(int q) {
        return Tensor.of(new double[] {q, 10 * q + 1}, 2);
    }

    static List<Tensor> neighbourCalls(CartComm g, Tensor x) {
        // block k of the alltoall operand: this rank's operand plus 100 (k + 1)
        Tensor[] blocks = new Tensor[4];
        for (int k = 0; k < 4; k++) {
            blocks[k] = x.add(100 * (k + 1)).reshape(1, 2);
        }
        return List.of(g.neighborAllgather(x), g.neighborAlltoall(Tensor.concat(0, blocks)));
    }

    @Compile
    static List<Tensor> neighbourCallsCompiled(CartComm g, Tensor x) {
        return neighbourCalls(g, x);
    }

    @Ranks({1, 2, 3, 4, 6})
    void neighbourCollectivesFollowMpisOrder(Comm c) {
        checkNeighbours(c);
    }

    public static void checkNeighbours(Comm c) {
        CartComm g = grid(c);
        int r = g.rank();
        int[] dims = g.dims();
        int row = r / dims[1], col = r % dims[1];
        // MPI's neighbour order: dimension 0's −1, +1, then dimension 1's −1, +1 (none past the closed edges)
        int[] neighbour = {Math.floorMod(row - 1, dims[0]) * dims[1] + col,
            Math.floorMod(row + 1, dims[0]) * dims[1] + col,
            col > 0 ? r - 1 : -1, col + 1 < dims[1] ? r + 1 : -1};
        for (List<Tensor> got : List.of(neighbourCalls(g, operand(r)), neighbourCallsCompiled(g, operand(r)))) {
            assertThat(got.get(0).shape()).containsExactly(4, 2);
            assertThat(got.get(1).shape()).containsExactly(4, 2);
            for (int k = 0; k < 4; k++) {
                double[] gathered = got.get(0).slice(0, k, k + 1).toDoubleArray();
                double[] exchanged = got.get(1).slice(0, k, k + 1).toDoubleArray();
                if (neighbour[k] < 0) {
                    assertThat(gathered).containsExactly(0, 0);
                    assertThat(exchanged).containsExactly(0, 0);
                    continue;
                }
                int q = neighbour[k];
                assertThat(gathered).containsExactly(q, 10 * q + 1);
                // neighbour q sent me its block for the opposite direction: k ^ 1
                int sentAs = k ^ 1;
                assertThat(exchanged).as("block %d from rank %d", k, q)
                        .containsExactly(q + 100 * (sentAs + 1), 10 * q + 1 + 100 * (sentAs + 1));
            }
        }
    }

    static Tensor loss(CartComm g, Tensor x) {
        Tensor weights = Tensor.arange(DType.F64, 8).reshape(4, 2).add(g.rank());
        Tensor halo = g.neighborAlltoall(Tensor.concat(0, x.reshape(1, 2), x.mul(x).reshape(1, 2),
                x.sin().reshape(1, 2), x.mul(3).reshape(1, 2)));
        return halo.mul(weights).sum().add(g.neighborAllgather(x.exp()).sum());
    }

    @Ranks({1, 2, 3, 4})
    void gradientsAreThoseOfTheGlobalLoss(Comm c) {
        checkGradients(c);
    }

    /** Each rank's gradient, summed against a direction over the ranks, against central differences. */
    public static void checkGradients(Comm c) {
        CartComm g = grid(c);
        Tensor x = operand(c.rank()).mul(0.1);
        Tensor t = Tensor.of(new double[] {0.3, -0.2 * (c.rank() + 1)});
        Tensor grad = Weft.grad((Tensor v) -> loss(g, v)).apply(x);
        double dot = c.allreduce(grad.mul(t).sum(), ReduceOp.SUM).item();
        double h = 1e-6;
        double plus = c.allreduce(loss(g, x.add(t.mul(h))), ReduceOp.SUM).item();
        double minus = c.allreduce(loss(g, x.sub(t.mul(h))), ReduceOp.SUM).item();
        double fd = (plus - minus) / (2 * h);
        assertThat(dot).isCloseTo(fd, within(1e-6 * (1 + Math.abs(fd))));
    }

    static List<Tensor> procNull(Comm c, Tensor x) {
        c.send(x, Comm.PROC_NULL, 0);
        Tensor r = c.recv(DType.F32, new long[] {2}, Comm.PROC_NULL, 0);
        Tensor sr = c.sendrecv(x, Comm.PROC_NULL, Comm.PROC_NULL, 3);
        Request a = c.isend(x, Comm.PROC_NULL, 1);
        Request b = c.irecv(DType.F64, new long[] {3}, Comm.PROC_NULL, 1);
        List<Tensor> waited = c.waitAll(a, b);
        return List.of(r, sr, waited.get(0), waited.get(1));
    }

    @Compile
    static List<Tensor> procNullCompiled(Comm c, Tensor x) {
        return procNull(c, x);
    }

    @Ranks({1, 2})
    void procNullIsANoOpAndReceivesZeros(Comm c) {
        Tensor x = Tensor.of(new double[] {1.5, -2});
        for (List<Tensor> got : List.of(procNull(c, x), procNullCompiled(c, x))) {
            assertThat(got.get(0).dtype()).isEqualTo(DType.F32);
            assertThat(got.get(0).toDoubleArray()).containsExactly(0, 0);
            assertThat(got.get(1).toDoubleArray()).containsExactly(0, 0);
            assertThat(got.get(2).toDoubleArray()).containsExactly(1.5, -2);
            assertThat(got.get(3).toDoubleArray()).containsExactly(0, 0, 0);
        }
        // a shift off a closed edge exchanges with PROC_NULL on one side only
        CartComm line = c.cart(new int[] {c.size()}, new boolean[] {false});
        CartComm.Shift s = line.shift(0, 1);
        Tensor got = line.sendrecv(Tensor.of(new double[] {line.rank() + 1.0}), s.dest(), s.source(), 5);
        assertThat(got.item()).isEqualTo(line.rank() == 0 ? 0 : line.rank());
    }

    @Ranks({1})
    void aZeroDimensionalGridHoldsOneRankWithNoNeighbours(Comm c) {
        CartComm point = c.cart(new int[0], new boolean[0]);
        assertThat(point.coords()).isEmpty();
        assertThat(point.rankOf()).isZero();
        Tensor x = Tensor.of(new double[] {1, 2});
        assertThat(point.neighborAllgather(x).shape()).containsExactly(0, 2);
        assertThat(point.neighborAlltoall(Tensor.zeros(DType.F64, 0, 2)).shape()).containsExactly(0, 2);
    }

    @Ranks({2})
    void badGridsAreErrorsNamingTheLine(Comm c) {
        assertThatThrownBy(() -> c.cart(new int[] {3}, new boolean[] {false})).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("CartCommTest.java:").hasMessageContaining("hold 3 ranks but the"
                        + " communicator has 2");
        assertThatThrownBy(() -> c.cart(new int[] {2, 1}, new boolean[] {false})).isInstanceOf(WeftException.class)
                .hasMessageContaining("2 dimensions");
        CartComm g = c.cart(new int[] {2}, new boolean[] {false});
        assertThatThrownBy(() -> g.rankOf(2)).isInstanceOf(WeftException.class)
                .hasMessageStartingWith("CartCommTest.java:").hasMessageContaining("off the grid");
        assertThatThrownBy(() -> g.shift(1, 1)).isInstanceOf(WeftException.class)
                .hasMessageContaining("dimension 1");
        assertThatThrownBy(() -> g.neighborAlltoall(Tensor.zeros(DType.F32, 3))).isInstanceOf(ShapeException.class)
                .hasMessageContaining("axis 0 of 2 blocks");
    }
}
