package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.RuntimeReduceOp;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleBinaryOperator;
import java.util.stream.Stream;

import static dev.weft.backends.comm.TestBuffers.at;
import static dev.weft.backends.comm.TestBuffers.filler;
import static dev.weft.backends.comm.TestBuffers.of;
import static dev.weft.backends.comm.TestBuffers.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every collective on 1 to 4 ranks, every numeric dtype and an odd count, against references computed here from
 * the inputs {@link #value}.
 */
class FakeCollectivesTest {
    private static final int COUNT = 5;

    static Stream<Arguments> worlds() {
        List<Arguments> args = new ArrayList<>();
        for (int n = 1; n <= 4; n++) {
            for (DType t : new DType[] {DType.F32, DType.F64, DType.I32, DType.I64}) {
                args.add(Arguments.of(n, t));
            }
        }
        return args.stream();
    }

    /** Rank {@code rank}'s {@code i}-th input element: small integers in [-4, 4], exact in every dtype. */
    private static double value(int rank, long i) {
        return (rank * 7 + i * 3) % 9 - 4;
    }

    private static MemorySegment input(DType t, int rank, int count) {
        double[] v = new double[count];
        for (int i = 0; i < count; i++) {
            v[i] = value(rank, i);
        }
        return of(t, v);
    }

    /** {@code ((x0 op x1) op x2) ...} of element {@code i} over ranks {@code 0..n-1}. */
    private static double reference(DoubleBinaryOperator op, int n, long i) {
        double acc = value(0, i);
        for (int r = 1; r < n; r++) {
            acc = op.applyAsDouble(acc, value(r, i));
        }
        return acc;
    }

    private static final RuntimeReduceOp[] OPS = {RuntimeReduceOp.SUM, RuntimeReduceOp.PROD, RuntimeReduceOp.MIN, RuntimeReduceOp.MAX};
    private static final DoubleBinaryOperator[] REFS = {Double::sum, (a, b) -> a * b, Math::min, Math::max};

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("worlds")
    void allreduceGivesEveryRankTheReduction(int n, DType t) {
        FakeWorld.run(n, world -> {
            for (int k = 0; k < OPS.length; k++) {
                MemorySegment out = filler(t, COUNT);
                world.allreduce(input(t, world.rank(), COUNT), out, t, COUNT, OPS[k], at(10));
                double[] expected = new double[COUNT];
                for (int i = 0; i < COUNT; i++) {
                    // an integer product has no negative zero
                    expected[i] = reference(REFS[k], n, i) + (t.isInteger() ? 0.0 : -0.0);
                }
                assertThat(read(out, t, COUNT)).as("%s", OPS[k]).containsExactly(expected);
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("worlds")
    void allreduceWorksInPlace(int n, DType t) {
        FakeWorld.run(n, world -> {
            MemorySegment buf = input(t, world.rank(), COUNT);
            world.allreduce(buf, buf, t, COUNT, RuntimeReduceOp.SUM, at(11));
            for (int i = 0; i < COUNT; i++) {
                assertThat(read(buf, t, COUNT)[i]).isEqualTo(reference(Double::sum, n, i));
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("worlds")
    void reduceGivesOnlyTheRootTheReduction(int n, DType t) {
        FakeWorld.run(n, world -> {
            for (int root = 0; root < n; root++) {
                MemorySegment out = filler(t, COUNT);
                world.reduce(input(t, world.rank(), COUNT), out, t, COUNT, RuntimeReduceOp.MAX, root, at(12));
                for (int i = 0; i < COUNT; i++) {
                    double expected = world.rank() == root ? reference(Math::max, n, i) : -99;
                    assertThat(read(out, t, COUNT)[i]).as("root %d element %d", root, i).isEqualTo(expected);
                }
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("worlds")
    void bcastCopiesTheRootsBuffer(int n, DType t) {
        FakeWorld.run(n, world -> {
            for (int root = 0; root < n; root++) {
                MemorySegment buf = input(t, world.rank(), COUNT);
                world.bcast(buf, t, COUNT, root, at(13));
                for (int i = 0; i < COUNT; i++) {
                    assertThat(read(buf, t, COUNT)[i]).as("root %d element %d", root, i).isEqualTo(value(root, i));
                }
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("worlds")
    void allgatherConcatenatesInRankOrder(int n, DType t) {
        FakeWorld.run(n, world -> {
            MemorySegment out = filler(t, (long) COUNT * n);
            world.allgather(input(t, world.rank(), COUNT), out, t, COUNT, at(14));
            double[] got = read(out, t, (long) COUNT * n);
            for (int r = 0; r < n; r++) {
                for (int i = 0; i < COUNT; i++) {
                    assertThat(got[r * COUNT + i]).isEqualTo(value(r, i));
                }
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("worlds")
    void reduceScatterLeavesEachRankItsBlockOfTheSum(int n, DType t) {
        FakeWorld.run(n, world -> {
            MemorySegment out = filler(t, COUNT);
            world.reduceScatter(input(t, world.rank(), COUNT * n), out, t, COUNT, RuntimeReduceOp.SUM, at(15));
            double[] got = read(out, t, COUNT);
            for (int i = 0; i < COUNT; i++) {
                assertThat(got[i]).isEqualTo(reference(Double::sum, n, (long) world.rank() * COUNT + i));
            }
        });
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("worlds")
    void alltoallTransposesBlocks(int n, DType t) {
        FakeWorld.run(n, world -> {
            MemorySegment out = filler(t, (long) COUNT * n);
            world.alltoall(input(t, world.rank(), COUNT * n), out, t, COUNT, at(16));
            double[] got = read(out, t, (long) COUNT * n);
            for (int j = 0; j < n; j++) {
                for (int i = 0; i < COUNT; i++) {
                    // block j of my output is block rank() of rank j's input
                    assertThat(got[j * COUNT + i]).isEqualTo(value(j, (long) world.rank() * COUNT + i));
                }
            }
        });
    }

    @Test
    void barrierHoldsEveryRankUntilAllArrive() {
        int n = 3;
        int[] arrived = new int[1];
        FakeWorld.run(n, world -> {
            synchronized (arrived) {
                arrived[0]++;
            }
            world.barrier(at(17));
            synchronized (arrived) {
                assertThat(arrived[0]).isEqualTo(n);
            }
        });
    }

    @Test
    void boolDataMovesThroughBcastAllgatherAndAlltoall() {
        FakeWorld.run(3, world -> {
            int me = world.rank();
            MemorySegment flag = of(DType.BOOL, me == 1 ? 1 : 0);
            world.bcast(flag, DType.BOOL, 1, 1, at(20));
            assertThat(read(flag, DType.BOOL, 1)).containsExactly(1);

            MemorySegment all = filler(DType.BOOL, 3);
            world.allgather(of(DType.BOOL, me == 2 ? 1 : 0), all, DType.BOOL, 1, at(21));
            assertThat(read(all, DType.BOOL, 3)).containsExactly(0, 0, 1);

            MemorySegment swapped = filler(DType.BOOL, 3);
            double[] mine = {0, 0, 0};
            mine[(me + 1) % 3] = 1;
            world.alltoall(of(DType.BOOL, mine), swapped, DType.BOOL, 1, at(22));
            double[] expected = {0, 0, 0};
            expected[(me + 2) % 3] = 1;
            assertThat(read(swapped, DType.BOOL, 3)).containsExactly(expected);
        });
    }

    @Test
    void f32SumAccumulatesInRankOrder() {
        float[] x = {1f, 1e8f, -1e8f, 1f};
        float leftFold = ((x[0] + x[1]) + x[2]) + x[3];
        float pairwise = (x[0] + x[1]) + (x[2] + x[3]);
        assertThat(leftFold).isEqualTo(1f);
        assertThat(pairwise).isEqualTo(0f);
        FakeWorld.run(4, world -> {
            MemorySegment out = filler(DType.F32, 1);
            world.allreduce(of(DType.F32, x[world.rank()]), out, DType.F32, 1, RuntimeReduceOp.SUM, at(30));
            assertThat(out.get(ValueLayout.JAVA_FLOAT_UNALIGNED, 0)).isEqualTo(leftFold);
        });
    }

    @Test
    void customOpCombinesInRankOrderEvenWhenNotCommutative() {
        // 2x2 matrix product, row-major: associative, not commutative
        RuntimeReduceOp matmul = RuntimeReduceOp.custom("matmul2x2", (inout, in, count, dtype) -> {
            double[] a = read(in, dtype, 4);
            double[] b = read(inout, dtype, 4);
            double[] c = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
            MemorySegment.copy(of(dtype, c), 0, inout, 0, 4 * dtype.byteSize());
        });
        double[][] m = {{1, 2, 0, 1}, {1, 0, 3, 1}, {2, 0, 0, 1}};
        // m0 * m1 = [[7, 2], [3, 1]]; times m2 = [[14, 2], [6, 1]]
        FakeWorld.run(3, world -> {
            MemorySegment out = filler(DType.F64, 4);
            world.allreduce(of(DType.F64, m[world.rank()]), out, DType.F64, 4, matmul, at(31));
            assertThat(read(out, DType.F64, 4)).containsExactly(14, 2, 6, 1);
        });
    }

    @Test
    void emptyBuffersAreValid() {
        FakeWorld.run(2, world -> {
            MemorySegment empty = MemorySegment.NULL;
            world.allreduce(empty, empty, DType.F32, 0, RuntimeReduceOp.SUM, at(33));
            world.alltoall(empty, empty, DType.I32, 0, at(34));
            if (world.rank() == 0) {
                world.send(empty, DType.I64, 0, 1, 0, at(35));
            } else {
                world.recv(empty, DType.I64, 0, 0, 0, at(36));
            }
        });
    }

    @Test
    void reductionOnBoolIsRejectedAtTheCall() {
        assertThatThrownBy(() -> FakeWorld.run(1, world -> world.allreduce(of(DType.BOOL, 1), filler(DType.BOOL, 1),
                DType.BOOL, 1, RuntimeReduceOp.SUM, at(32))))
                .isInstanceOf(RanksFailedException.class)
                .cause().isInstanceOf(CommException.class)
                .hasMessage("User.java:32: allreduce on 'world': SUM is not defined on bool");
    }
}
