package dev.weft.it.comm;

import static dev.weft.testing.TensorAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.DeadlockException;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.comm.fake.RanksFailedException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.CommBinding;
import dev.weft.testing.Ranks;
import dev.weft.testing.RankRunner;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Ordering, effects that must survive unused results, and run-time failures of compiled communication. */
class CommSemanticsTest {
    /** The line of each rank's blocking call, recorded while tracing. */
    private static final Map<Integer, String> LINES = new ConcurrentHashMap<>();

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** The mpi4jax ordering case: opposite orders on the two ranks, in one compiled method. */
    @Compile
    static Tensor exchangeInOppositeOrders(Comm c, Tensor x) {
        if (c.rank() == 0) {
            c.send(x, 1, 0);
            return c.recv(x.dtype(), x.shape(), 1, 0);
        }
        Tensor got = c.recv(x.dtype(), x.shape(), 0, 0);
        c.send(x, 0, 0);
        return got;
    }

    @Ranks(2)
    void oppositeSendRecvOrdersInOneMethodComplete(Comm c) {
        Tensor x = Tensor.of(new double[] {c.rank() + 0.5, -c.rank(), 7}, 3, 1);
        Tensor other = Tensor.of(new double[] {1 - c.rank() + 0.5, -(1 - c.rank()), 7}, 3, 1);
        assertThat(exchangeInOppositeOrders(c, x)).isEqualTo(other);
    }

    /** Sends, waits and discards the wait's result (Reactant.jl #2591). */
    @Compile
    static Tensor sendAndDropTheWait(Comm c, Tensor x) {
        c.wait(c.isend(x.mul(3), 1, 6));
        return x.add(1);
    }

    /** Reduces and discards the result. */
    @Compile
    static Tensor allreduceAndDropIt(Comm c, Tensor x) {
        c.allreduce(x, ReduceOp.SUM);
        return x.mul(2);
    }

    @Ranks(2)
    void anUnusedWaitStillSends(Comm c) {
        Tensor x = Tensor.of(new int[] {4, 5, 6});
        if (c.rank() == 0) {
            assertThat(sendAndDropTheWait(c, x)).isEqualTo(Tensor.of(new int[] {5, 6, 7}));
            assertThat(Weft.lower(CommSemanticsTest.class, "sendAndDropTheWait", c, TensorSpec.of(DType.I32, 3))
                    .toMlir()).contains("call_target_name = \"weft.mpi.isend\"",
                            "call_target_name = \"weft.mpi.wait\"");
        } else {
            assertThat(c.recv(DType.I32, new long[] {3}, 0, 6)).isEqualTo(Tensor.of(new int[] {12, 15, 18}));
        }
    }

    @Ranks({2, 3})
    void anUnusedAllreduceStillRunsOnEveryRank(Comm c) {
        Tensor x = Tensor.of(new float[] {c.rank() + 1});
        if (c.rank() == 0) {
            assertThat(allreduceAndDropIt(c, x)).isEqualTo(Tensor.of(new float[] {2}));
            assertThat(Weft.lower(CommSemanticsTest.class, "allreduceAndDropIt", c, TensorSpec.of(DType.F32, 1))
                    .toMlir()).contains("call_target_name = \"weft.mpi.allreduce\"");
        } else {
            float sum = c.size() * (c.size() + 1) / 2f;
            assertThat(c.allreduce(x, ReduceOp.SUM)).isEqualTo(Tensor.of(new float[] {sum}));
        }
    }

    @Compile
    static Tensor receiveFirst(Comm c, Tensor x) {
        int peer = 1 - c.rank();
        LINES.put(c.rank(), CallSite.here()); Tensor got = c.recv(x.dtype(), x.shape(), peer, 4);
        c.send(x, peer, 4);
        return got;
    }

    @Test
    void bothRanksReceivingFirstInCompiledCodeDeadlockWithAReport() {
        RanksFailedException e = assertThrows(() -> onRanks(2, c -> receiveFirst(c, Tensor.zeros(DType.F32, 5))));
        assertThat(e.failures()).containsOnlyKeys(0, 1);
        for (int r = 0; r < 2; r++) {
            assertThat(e.failures().get(r)).isInstanceOf(DeadlockException.class);
            String report = ((DeadlockException) e.failures().get(r)).report();
            for (int q = 0; q < 2; q++) {
                assertThat(report).contains("rank " + q + ": blocked in recv(5 x f32) on 'world' from rank " + (1 - q)
                        + " tag 4 at " + LINES.get(q));
            }
        }
    }

    /** Where {@link #sum} communicates; set by the ranks that trace it (a final field: they share this class). */
    private static final AtomicReference<String> SUM_LINE = new AtomicReference<>();

    @Compile
    static Tensor sum(Comm c, Tensor x) {
        SUM_LINE.set(CallSite.here()); return c.allreduce(x, ReduceOp.SUM);
    }

    @Test
    void mismatchedAllreduceShapesAcrossRanksNameBoth() {
        RanksFailedException e = assertThrows(() -> onRanks(2,
                c -> sum(c, Tensor.zeros(DType.F32, 3 + c.rank()))));
        assertThat(e.failures()).containsOnlyKeys(0, 1);
        String sumLine = SUM_LINE.get();
        for (int r = 0; r < 2; r++) {
            assertThat(e.failures().get(r).getMessage())
                    .startsWith(sumLine + ": schedule mismatch on world at collective #0: ")
                    .contains("rank 0 allreduce(SUM) f32[3] at " + sumLine,
                            "rank 1 allreduce(SUM) f32[4] at " + sumLine);
        }
    }

    @Test
    void aRankThatThrowsFailsItsPeersWithItsNumber() {
        RanksFailedException e = assertThrows(() -> onRanks(3, c -> {
            if (c.rank() == 2) {
                throw new IllegalStateException("rank two gives up");
            }
            sum(c, Tensor.ones(DType.I64, 3));
        }));
        assertThat(e.failures()).containsOnlyKeys(0, 1, 2);
        assertThat(e.getCause()).hasMessage("rank two gives up");
        for (int r = 0; r < 2; r++) {
            assertThat(e.failures().get(r).getMessage()).contains("rank 2 failed", "rank two gives up");
        }
        assertThatThrownBy(() -> RankRunner.run(2, c -> {
            if (c.rank() == 1) {
                throw new IllegalStateException("no");
            }
            sum(c, Tensor.ones(DType.I64, 3));
        })).hasMessageContaining("rank 1: IllegalStateException: no").hasMessageContaining("rank 0:");
    }

    @FunctionalInterface
    private interface Body {
        void run(Comm c);
    }

    private static void onRanks(int n, Body body) {
        FakeWorld.run(n, w -> CommBinding.with(w, () -> {
            body.run(Comm.of(w));
            return null;
        }));
    }

    private static RanksFailedException assertThrows(Runnable run) {
        return org.junit.jupiter.api.Assertions.assertThrows(RanksFailedException.class, run::run);
    }
}
