package dev.weft.it.comm;

import static dev.weft.testing.TensorAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.testing.Ranks;
import java.util.List;
import java.util.function.LongBinaryOperator;
import org.junit.jupiter.api.BeforeAll;

/**
 * Every communication op, eager and compiled, on 1 to 4 fake ranks, for every numeric dtype and odd sizes, checked
 * against values computed here from each rank's known input.
 */
class CommOpsTest {
    private static final List<DType> NUMERIC = List.of(DType.F32, DType.F64, DType.I32, DType.I64);
    private static final int LEN = 5;
    private static final int BLOCK = 3;
    /** Rank-ordered, non-commutative: {@code a * 2 + b}, so a wrong order gives a wrong answer. */
    private static final ReduceOp TWICE_PLUS = ReduceOp.custom("twice_plus", (a, b) -> a.mul(2).add(b));

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Rank {@code r}'s input: small positive integers, exact in every dtype and under a 4-rank product. */
    private static long value(int r, int i) {
        return (r * 7L + i * 3L) % 5 + 1;
    }

    private static long[] values(int r, int n) {
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
            v[i] = value(r, i);
        }
        return v;
    }

    private static Tensor tensor(DType t, long[] v, long... shape) {
        return Tensor.of(v, shape).cast(t);
    }

    private static Tensor input(DType t, int r, int n) {
        return tensor(t, values(r, n), n);
    }

    private static long[] fold(int ranks, int n, LongBinaryOperator f) {
        long[] acc = values(0, n);
        for (int r = 1; r < ranks; r++) {
            long[] v = values(r, n);
            for (int i = 0; i < n; i++) {
                acc[i] = f.applyAsLong(acc[i], v[i]);
            }
        }
        return acc;
    }

    @Compile
    static Tensor rankPlus(Comm c, Tensor x) {
        return x.add(c.rankTensor().cast(x.dtype()));
    }

    @Compile
    static Tensor barrierThenIncrement(Comm c, Tensor x) {
        c.barrier();
        return x.add(1);
    }

    /** A blocking send in a ring: each rank's receive is started first, or no send could complete. */
    @Compile
    static Tensor ringSend(Comm c, Tensor x) {
        Request in = c.irecv(x.dtype(), x.shape(), (c.rank() + c.size() - 1) % c.size(), 3);
        c.send(x, (c.rank() + 1) % c.size(), 3);
        return c.wait(in);
    }

    /** A blocking receive in a ring, the send started first. */
    @Compile
    static Tensor ringRecv(Comm c, Tensor x) {
        Request out = c.isend(x, (c.rank() + 1) % c.size(), 3);
        Tensor got = c.recv(x.dtype(), x.shape(), (c.rank() + c.size() - 1) % c.size(), 3);
        c.wait(out);
        return got;
    }

    @Compile
    static Tensor ringWaitAll(Comm c, Tensor x) {
        Request in = c.irecv(x.dtype(), x.shape(), (c.rank() + c.size() - 1) % c.size(), 4);
        Request out = c.isend(x, (c.rank() + 1) % c.size(), 4);
        return c.waitAll(in, out).getFirst();
    }

    @Compile
    static Tensor ringWaitEach(Comm c, Tensor x) {
        Request out = c.isend(x, (c.rank() + 1) % c.size(), 5);
        Request in = c.irecv(x.dtype(), x.shape(), (c.rank() + c.size() - 1) % c.size(), 5);
        Tensor got = c.wait(in);
        return got.add(c.wait(out));
    }

    /** A reduce op is a compile-time constant argument. */
    @Compile
    static Tensor allreduce(Comm c, Tensor x, ReduceOp op) {
        return c.allreduce(x, op);
    }

    @Compile
    static Tensor allgather(Comm c, Tensor x) {
        return c.allgather(x);
    }

    @Compile
    static Tensor reduceScatter(Comm c, Tensor x) {
        return c.reduceScatter(x, ReduceOp.SUM);
    }

    @Compile
    static Tensor bcast(Comm c, Tensor x, int root) {
        return c.bcast(x, root);
    }

    @Compile
    static Tensor reduce(Comm c, Tensor x, int root) {
        return c.reduce(x, ReduceOp.MAX, root);
    }

    @Compile
    static Tensor alltoall(Comm c, Tensor x) {
        return c.alltoall(x);
    }

    @Compile
    static Tensor shift(Comm c, Tensor x) {
        return c.sendrecv(x, (c.rank() + 1) % c.size(), (c.rank() + c.size() - 1) % c.size(), 9);
    }

    @Compile
    static Tensor shiftReshaped(Comm c, Tensor x) {
        long[] back = {1, x.size()};
        return c.sendrecv(x, (c.rank() + 1) % c.size(), 10, x.dtype(), back, (c.rank() + c.size() - 1) % c.size(),
                10);
    }

    @Compile
    static Tensor sumOnBoth(Comm world, Comm other, Tensor x) {
        Request fromOther = other.irecv(x.dtype(), x.shape(), world.rank(), 0);
        Request toOther = other.isend(x.mul(10), world.rank(), 0);
        Request fromWorld = world.irecv(x.dtype(), x.shape(), world.rank(), 0);
        Request toWorld = world.isend(x, world.rank(), 0);
        Tensor viaWorld = world.wait(fromWorld);
        Tensor viaOther = other.wait(fromOther);
        world.wait(toWorld);
        other.wait(toOther);
        return world.allreduce(viaWorld, ReduceOp.SUM).add(other.allreduce(viaOther, ReduceOp.SUM));
    }

    @Ranks({1, 2, 3, 4})
    void rankTensorIsThisRankAtRunTime(Comm c) {
        for (DType t : NUMERIC) {
            Tensor x = input(t, 0, LEN);
            Tensor expected = x.add(c.rank());
            assertThat(rankPlus(c, x)).isEqualTo(expected);
            assertThat(c.rankTensor()).hasDType(DType.I32).hasShape();
            assertThat(c.rankTensor().item()).isEqualTo(c.rank());
        }
    }

    @Ranks({1, 2, 3, 4})
    void barrierCompletesOnEveryRank(Comm c) {
        c.barrier();
        for (DType t : NUMERIC) {
            assertThat(barrierThenIncrement(c, input(t, c.rank(), LEN)))
                    .isEqualTo(tensor(t, values(c.rank(), LEN), LEN).add(1));
        }
    }

    @Ranks({1, 2, 3, 4})
    void pointToPointRingDeliversTheLeftNeighboursTensor(Comm c) {
        int left = (c.rank() + c.size() - 1) % c.size();
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            Tensor fromLeft = input(t, left, LEN);
            // a ring of blocking sends deadlocks (no send completes before its receive is posted): one side of
            // each blocking call is started first
            Request early = c.irecv(t, new long[] {LEN}, left, 2);
            c.send(x, (c.rank() + 1) % c.size(), 2);
            assertThat(c.wait(early)).isEqualTo(fromLeft);
            Request sent = c.isend(x, (c.rank() + 1) % c.size(), 3);
            assertThat(c.recv(t, new long[] {LEN}, left, 3)).isEqualTo(fromLeft);
            assertThat(c.wait(sent)).isEqualTo(x);
            assertThat(ringSend(c, x)).isEqualTo(fromLeft);
            assertThat(ringRecv(c, x)).isEqualTo(fromLeft);

            Request in = c.irecv(t, new long[] {LEN}, left, 4);
            Request out = c.isend(x, (c.rank() + 1) % c.size(), 4);
            List<Tensor> done = c.waitAll(in, out);
            assertThat(done.getFirst()).isEqualTo(fromLeft);
            assertThat(done.get(1)).isEqualTo(x);
            assertThat(ringWaitAll(c, x)).isEqualTo(fromLeft);
            assertThat(ringWaitEach(c, x)).isEqualTo(fromLeft.add(x));
        }
    }

    @Ranks({1, 2, 3, 4})
    void allreduceWithEveryOpMatchesAFoldInRankOrder(Comm c) {
        int n = c.size();
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            check(c, x, ReduceOp.SUM, tensor(t, fold(n, LEN, Long::sum), LEN));
            check(c, x, ReduceOp.PROD, tensor(t, fold(n, LEN, (a, b) -> a * b), LEN));
            check(c, x, ReduceOp.MIN, tensor(t, fold(n, LEN, Math::min), LEN));
            check(c, x, ReduceOp.MAX, tensor(t, fold(n, LEN, Math::max), LEN));
            check(c, x, TWICE_PLUS, tensor(t, fold(n, LEN, (a, b) -> a * 2 + b), LEN));
        }
    }

    private static void check(Comm c, Tensor x, ReduceOp op, Tensor expected) {
        assertThat(c.allreduce(x, op)).as("eager %s", op.name()).isEqualTo(expected);
        assertThat(allreduce(c, x, op)).as("compiled %s", op.name()).isEqualTo(expected);
    }

    @Ranks({1, 2, 3, 4})
    void allgatherConcatenatesInRankOrder(Comm c) {
        int n = c.size();
        long[] all = new long[n * LEN];
        for (int r = 0; r < n; r++) {
            System.arraycopy(values(r, LEN), 0, all, r * LEN, LEN);
        }
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            Tensor expected = tensor(t, all, n * LEN);
            assertThat(c.allgather(x)).isEqualTo(expected);
            assertThat(allgather(c, x)).isEqualTo(expected);
        }
    }

    @Ranks({1, 2, 3, 4})
    void reduceScatterLeavesThisRanksBlockOfTheSum(Comm c) {
        int n = c.size();
        long[] sum = fold(n, n * BLOCK, Long::sum);
        long[] mine = new long[BLOCK];
        System.arraycopy(sum, c.rank() * BLOCK, mine, 0, BLOCK);
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), n * BLOCK);
            Tensor expected = tensor(t, mine, BLOCK);
            assertThat(c.reduceScatter(x, ReduceOp.SUM)).isEqualTo(expected);
            assertThat(reduceScatter(c, x)).isEqualTo(expected);
        }
    }

    @Ranks({1, 2, 3, 4})
    void bcastDeliversTheRootsTensor(Comm c) {
        int root = c.size() - 1;
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            Tensor expected = input(t, root, LEN);
            assertThat(c.bcast(x, root)).isEqualTo(expected);
            assertThat(bcast(c, x, root)).isEqualTo(expected);
        }
    }

    @Ranks({1, 2, 3, 4})
    void reduceGivesTheRootTheResultAndOthersTheirOperand(Comm c) {
        int root = c.size() / 2;
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            Tensor expected = c.rank() == root ? tensor(t, fold(c.size(), LEN, Math::max), LEN) : x;
            assertThat(c.reduce(x, ReduceOp.MAX, root)).isEqualTo(expected);
            assertThat(reduce(c, x, root)).isEqualTo(expected);
        }
    }

    @Ranks({1, 2, 3, 4})
    void alltoallTransposesBlocks(Comm c) {
        int n = c.size();
        long[] got = new long[n * BLOCK];
        for (int src = 0; src < n; src++) {
            System.arraycopy(values(src, n * BLOCK), c.rank() * BLOCK, got, src * BLOCK, BLOCK);
        }
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), n * BLOCK);
            Tensor expected = tensor(t, got, n * BLOCK);
            assertThat(c.alltoall(x)).isEqualTo(expected);
            assertThat(alltoall(c, x)).isEqualTo(expected);
        }
    }

    @Ranks({1, 2, 3, 4})
    void sendrecvShiftsAroundTheRing(Comm c) {
        int left = (c.rank() + c.size() - 1) % c.size();
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            Tensor expected = input(t, left, LEN);
            assertThat(c.sendrecv(x, (c.rank() + 1) % c.size(), left, 9)).isEqualTo(expected);
            assertThat(shift(c, x)).isEqualTo(expected);
            assertThat(shiftReshaped(c, x)).isEqualTo(expected.reshape(1, LEN));
        }
    }

    @Ranks({1, 2, 3, 4})
    void splitGroupsByColourAndOrdersByKey(Comm c) {
        Comm sub = c.split(c.rank() % 2, -c.rank());
        int n = c.size();
        int members = 0;
        int above = 0;
        long[] gathered = new long[0];
        long[] sum = new long[LEN];
        for (int r = n - 1; r >= 0; r--) {
            if (r % 2 == c.rank() % 2) {
                members++;
                if (r > c.rank()) {
                    above++;
                }
                long[] v = values(r, LEN);
                long[] next = new long[gathered.length + LEN];
                System.arraycopy(gathered, 0, next, 0, gathered.length);
                System.arraycopy(v, 0, next, gathered.length, LEN);
                gathered = next;
                for (int i = 0; i < LEN; i++) {
                    sum[i] += v[i];
                }
            }
        }
        assertThat(sub.size()).isEqualTo(members);
        assertThat(sub.rank()).isEqualTo(above);
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            assertThat(sub.allreduce(x, ReduceOp.SUM)).isEqualTo(tensor(t, sum, LEN));
            assertThat(allreduce(sub, x, ReduceOp.SUM)).isEqualTo(tensor(t, sum, LEN));
            assertThat(allgather(sub, x)).isEqualTo(tensor(t, gathered, gathered.length));
        }
    }

    @Ranks({1, 2, 3, 4})
    void dupIsASeparateMatchingSpaceOverTheSameRanks(Comm c) {
        Comm d = c.dup();
        assertThat(d).isNotEqualTo(c);
        assertThat(d.rank()).isEqualTo(c.rank());
        assertThat(d.size()).isEqualTo(c.size());
        long[] sum = fold(c.size(), LEN, Long::sum);
        for (DType t : NUMERIC) {
            Tensor x = input(t, c.rank(), LEN);
            Tensor expected = tensor(t, sum, LEN).mul(11);
            assertThat(sumOnBoth(c, d, x)).isEqualTo(expected);
            assertThat(allreduce(d, x, ReduceOp.SUM)).isEqualTo(tensor(t, sum, LEN));
        }
    }
}
