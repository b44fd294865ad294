package dev.weft.it.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.comm.MessageMismatchException;
import dev.weft.backends.comm.check.CheckMode;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.backends.comm.check.ScheduleMismatchException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.testing.Ranks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The schedule check on fake ranks: every mismatch of {@link MismatchPrograms} fails on the ranks it involves
 * before the mismatched operation runs, naming each rank's operation and line; programs MPI accepts pass, however
 * the ranks split their communication into compiled programs (rank-specialised programs, programs only some ranks
 * call, compiled on one rank and eager on another, the patterns of mpi4jax's tests); a compiled run checks the
 * collectives it declares in one exchange; eager collectives are checked by default, and {@code off} checks nothing.
 */
class ScheduleCheckTest {
    @BeforeAll
    static void install() {
        Weft.install();
    }

    @AfterEach
    void defaultMode() {
        System.clearProperty(CheckMode.PROPERTY);
    }

    private static Tensor x() {
        return Tensor.of(new float[] {1, 2, 3, 4});
    }

    @Compile
    static Tensor mismatched(Comm c, Tensor x, int index) {
        return MismatchPrograms.CASES.get(index).program().apply(c, x);
    }

    @Ranks({2, 3})
    void everyMismatchFailsNamingBothOperations(Comm c) {
        for (int i = 0; i < MismatchPrograms.CASES.size(); i++) {
            MismatchPrograms.Case k = MismatchPrograms.CASES.get(i);
            int index = i;
            WeftException e = MismatchPrograms.outcome(c, () -> mismatched(c, x(), index));
            if (k.failsOn().test(c.rank())) {
                assertThat(e).as(k.name()).isInstanceOf(ScheduleMismatchException.class);
                assertThat(e.getMessage()).as(k.name()).startsWith("MismatchPrograms.java:")
                        .contains("schedule mismatch on world").contains(k.fragments());
            } else {
                assertThat(e).as(k.name()).isNull();
            }
        }
    }

    @Compile
    static Tensor halo(Comm c, Tensor x, int steps) {
        int up = c.rank() - 1;
        int down = c.rank() + 1;
        return Weft.fori(0, steps, x, (i, y) -> {
            Tensor fromUp = y;
            Tensor fromDown = y;
            if (down < c.size()) {
                c.send(y, down, 1);
            }
            if (up >= 0) {
                fromUp = c.recv(DType.F32, new long[] {4}, up, 1);
                c.send(y, up, 2);
            }
            if (down < c.size()) {
                fromDown = c.recv(DType.F32, new long[] {4}, down, 2);
            }
            return fromUp.add(fromDown).mul(0.5f);
        });
    }

    @Compile
    static Tensor ring(Comm c, Tensor x) {
        Request in = c.irecv(DType.F32, new long[] {4}, (c.rank() + c.size() - 1) % c.size(), 0);
        Request out = c.isend(x, (c.rank() + 1) % c.size(), 0);
        c.wait(out);
        return c.allreduce(c.wait(in), ReduceOp.SUM);
    }

    /** Rank 0 sends six messages in one loop; the last rank receives them in two loops of three. */
    @Compile
    static Tensor loopsOfOtherShapes(Comm c, Tensor x) {
        int last = c.size() - 1;
        if (last == 0) {
            return x;
        }
        if (c.rank() == 0) {
            Weft.fori(0, 6, x, (i, y) -> {
                c.send(y, last, 3);
                return y;
            });
        } else if (c.rank() == last) {
            Tensor a = Weft.fori(0, 3, x, (i, y) -> c.recv(DType.F32, new long[] {4}, 0, 3));
            return Weft.fori(0, 3, a, (i, y) -> c.recv(DType.F32, new long[] {4}, 0, 3).add(y));
        }
        return x;
    }

    /** Point-to-point inside a data-dependent branch is not checked; the collective after it still is. */
    @Compile
    static Tensor exchangeInBranch(Comm c, Tensor x) {
        Tensor y = Weft.cond(x.sum().gt(0), () -> c.sendrecv(x, (c.rank() + 1) % c.size(),
                (c.rank() + c.size() - 1) % c.size(), 4), () -> x);
        return c.allreduce(y, ReduceOp.MAX);
    }

    @Ranks({1, 2, 3, 4})
    void rankSpecialisedProgramsThatPairUpPass(Comm c) {
        long before = CommCheck.exchanges();
        assertThat(halo(c, x(), 3).shape()).containsExactly(4);
        assertThat(ring(c, x()).toFloatArray()).containsExactly(c.size(), 2f * c.size(), 3f * c.size(),
                4f * c.size());
        assertThat(loopsOfOtherShapes(c, x()).shape()).containsExactly(4);
        assertThat(exchangeInBranch(c, x()).toFloatArray()).containsExactly(1, 2, 3, 4);
        if (c.size() == 1) {
            assertThat(CommCheck.exchanges()).isEqualTo(before);
        }
    }

    /** The branches run different collectives. */
    @Compile
    static Tensor collectiveInABranch(Comm c, Tensor x) {
        return Weft.cond(x.sum().gt(0), () -> c.allreduce(x, ReduceOp.SUM), () -> c.bcast(x, 0));
    }

    @Ranks(2)
    void aBranchIsCheckedAsItRuns(Comm c) {
        assertThat(collectiveInABranch(c, x()).toFloatArray()).containsExactly(2, 4, 6, 8);
        Tensor negativeOnRankZero = c.rank() == 0 ? x().neg() : x();
        assertThatThrownBy(() -> collectiveInABranch(c, negativeOnRankZero))
                .isInstanceOf(ScheduleMismatchException.class)
                .hasMessageContaining("at collective #1: rank 0 bcast(root 0) f32[4] at ScheduleCheckTest.java:")
                .hasMessageContaining("rank 1 allreduce(SUM) f32[4] at ScheduleCheckTest.java:");
        assertThat(collectiveInABranch(c, x()).toFloatArray()).containsExactly(2, 4, 6, 8);
    }

    @Compile
    static Tensor allreduceOnce(Comm c, Tensor x) {
        return c.allreduce(x, ReduceOp.SUM);
    }

    @Compile
    static Tensor tenAllreduces(Comm c, Tensor x) {
        return Weft.fori(0, 10, x, (i, y) -> c.allreduce(y, ReduceOp.MAX));
    }

    /** A run's ten collectives are checked in one exchange: per rank, one per call and one per barrier. */
    @Ranks(2)
    void aRunChecksTheCollectivesItDeclaresInOneExchange(Comm c) {
        Tensor y = tenAllreduces(c, x());
        c.barrier();
        long before = CommCheck.exchanges();
        c.barrier();
        for (int i = 0; i < 50; i++) {
            y = tenAllreduces(c, y);
        }
        c.barrier();
        long exchanged = CommCheck.exchanges() - before;
        assertThat(exchanged).isBetween(2L * 50, 2L * 53);
        assertThat(y.toFloatArray()).containsExactly(1, 2, 3, 4);
    }

    @Ranks(2)
    void eagerCollectivesAreCheckedByDefault(Comm c) {
        assertThat(c.allreduce(x(), ReduceOp.SUM).toFloatArray()).containsExactly(2, 4, 6, 8);
        assertThatThrownBy(() -> c.allreduce(x(), c.rank() == 0 ? ReduceOp.SUM : ReduceOp.MAX))
                .isInstanceOf(ScheduleMismatchException.class)
                .hasMessageStartingWith("ScheduleCheckTest.java:")
                .hasMessageContaining("rank 0 allreduce(SUM) f32[4] at ScheduleCheckTest.java:")
                .hasMessageContaining("rank 1 allreduce(MAX) f32[4] at ScheduleCheckTest.java:");
        Tensor wrongSize = c.rank() == 0 ? x() : Tensor.zeros(DType.F32, 100_000);
        assertThatThrownBy(() -> c.allreduce(wrongSize, ReduceOp.SUM))
                .isInstanceOf(ScheduleMismatchException.class)
                .hasMessageContaining("rank 1 allreduce(SUM) f32[100000] at ScheduleCheckTest.java:");
        assertThat(c.allreduce(x(), ReduceOp.SUM).toFloatArray()).containsExactly(2, 4, 6, 8);
    }

    @Compile
    static Tensor gatheredRows(Comm c, Tensor x, int first, int second) {
        return c.allgatherv(x, new long[] {first, second});
    }

    /**
     * The ranks of a variable-count collective pass operands of different rows, which agree when their counts do;
     * counts that differ between ranks are a mismatch naming each rank's counts and line, eager and compiled.
     */
    @Ranks(2)
    void variableCountsThatDifferBetweenRanksAreNamed(Comm c) {
        Tensor mine = Tensor.ones(DType.F32, 2 - c.rank(), 3);
        assertThat(c.allgatherv(mine, new long[] {2, 1}).shape()).containsExactly(3, 3);
        assertThat(gatheredRows(c, mine, 2, 1).shape()).containsExactly(3, 3);
        long[] differ = c.rank() == 0 ? new long[] {2, 0} : new long[] {0, 1};
        Tensor rows = Tensor.ones(DType.F32, differ[c.rank()], 3);
        assertThatThrownBy(() -> c.allgatherv(rows, differ))
                .isInstanceOf(ScheduleMismatchException.class)
                .hasMessageStartingWith("ScheduleCheckTest.java:")
                .hasMessageContaining("rank 0 allgatherv(counts [2, 0]) f32[2,3] at ScheduleCheckTest.java:")
                .hasMessageContaining("rank 1 allgatherv(counts [0, 1]) f32[1,3] at ScheduleCheckTest.java:");
        assertThatThrownBy(() -> gatheredRows(c, rows, (int) differ[0], (int) differ[1]))
                .isInstanceOf(ScheduleMismatchException.class)
                .hasMessageContaining("rank 0 allgatherv(counts [2, 0]) f32[2,3] at ScheduleCheckTest.java:")
                .hasMessageContaining("rank 1 allgatherv(counts [0, 1]) f32[1,3] at ScheduleCheckTest.java:");
        assertThat(c.allgatherv(mine, new long[] {2, 1}).toFloatArray()).hasSize(9).containsOnly(1f);
    }

    @Ranks(2)
    void eagerMessagesTravelWithTheirEnvelope(Comm c) {
        if (c.rank() == 0) {
            c.send(x(), 1, 9);
            c.send(x(), 1, 9);
        } else {
            assertThat(c.recv(DType.F32, new long[] {4}, 0, 9).toFloatArray()).containsExactly(1, 2, 3, 4);
            assertThatThrownBy(() -> c.recv(DType.I32, new long[] {4}, 0, 9))
                    .isInstanceOf(ScheduleMismatchException.class)
                    .hasMessageStartingWith("ScheduleCheckTest.java:")
                    .hasMessageContaining("at message #1 from rank 0 to rank 1 with tag 9: rank 0 send(to 1, tag 9)"
                            + " f32[4] at ScheduleCheckTest.java:")
                    .hasMessageContaining("rank 1 recv(from 0, tag 9) i32[4] at ScheduleCheckTest.java:");
        }
        c.barrier();
        if (c.rank() == 0) {
            c.wait(c.isend(x(), 1, 8));
        } else {
            Request r = c.irecv(DType.F32, new long[] {5}, 0, 8);
            assertThatThrownBy(() -> c.wait(r)).isInstanceOf(ScheduleMismatchException.class)
                    .hasMessageContaining("at message #0 from rank 0 to rank 1 with tag 8: rank 0 isend(to 1, tag 8)"
                            + " f32[4] at ScheduleCheckTest.java:")
                    .hasMessageContaining("rank 1 irecv(from 0, tag 8) f32[5] at ScheduleCheckTest.java:");
        }
        c.barrier();
    }



    /** mpi4jax's send/recv tests: only ranks 0 and 1 of three call compiled programs; rank 2 compiles nothing. */
    @Ranks(3)
    void onlyTheRanksThatCommunicateCompile(Comm c) {
        if (c.rank() == 0) {
            ValidPrograms.sendTo(c, x().mul(3), 1, 1);
        } else if (c.rank() == 1) {
            assertThat(ValidPrograms.recvFrom(c, 0, 1).toFloatArray()).containsExactly(3, 6, 9, 12);
        }
        c.barrier();
    }

    /** mpi4jax's pattern: rank 0 compiles one receive program per peer, each peer one send program. */
    @Ranks({2, 3, 4})
    void oneRankCompilesAReceivePerPeer(Comm c) {
        if (c.rank() == 0) {
            for (int peer = 1; peer < c.size(); peer++) {
                assertThat(ValidPrograms.recvFrom(c, peer, peer).toFloatArray())
                        .containsExactly(peer, 2 * peer, 3 * peer, 4 * peer);
            }
        } else {
            ValidPrograms.sendTo(c, x().mul(c.rank()), 0, c.rank());
        }
        c.barrier();
    }



    /**
     * Valid MPI that splits communication into programs differently per rank: rank 0's one program runs the two
     * allreduces rank 1 runs in two calls; a last batch of another shape on one rank compiles anew there only; a
     * compiled allreduce on rank 0 meets eager ones on the others.
     */
    @Ranks({2, 3})
    void programsThatSplitCollectivesDifferentlyPass(Comm c) {
        Tensor y = c.rank() == 0 ? ValidPrograms.twoSums(c, x()) : allreduceOnce(c, allreduceOnce(c, x()));
        float n = c.size() * c.size();
        assertThat(y.toFloatArray()).containsExactly(n, 2 * n, 3 * n, 4 * n);
        for (int batch = 0; batch < 3; batch++) {
            Tensor data = batch == 2 && c.rank() == 0 ? Tensor.ones(DType.F32, 5) : Tensor.ones(DType.F32, 4);
            float total = 4f * c.size() + (batch == 2 ? 1 : 0);
            assertThat(ValidPrograms.total(c, data).item()).isEqualTo(total);
        }
        Tensor z = c.rank() == 0 ? allreduceOnce(c, x()) : c.allreduce(x(), ReduceOp.SUM);
        assertThat(z.toFloatArray()).containsExactly(c.size(), 2f * c.size(), 3f * c.size(), 4f * c.size());
    }

    /**
     * {@code off} sends messages without envelopes, so a receive of another length fails as the runtime refuses it
     * (and of another dtype of the same size too on fake ranks, which know the sender's dtype; MPI passes it);
     * collectives, whose counts MPI cannot survive disagreeing on, are checked all the same.
     */
    @Ranks(2)
    void offStillChecksCollectives(Comm c) {
        System.setProperty(CheckMode.PROPERTY, "off");
        c.barrier();
        for (int i = 0; i < MismatchPrograms.CASES.size(); i++) {
            MismatchPrograms.Case k = MismatchPrograms.CASES.get(i);
            int index = i;
            WeftException e = MismatchPrograms.outcome(c, () -> mismatched(c, x(), index));
            if (k.name().startsWith("send") && c.rank() == 0) {
                assertThat(e).as(k.name()).isNull();
            } else if (k.name().startsWith("send")) {
                assertThat(e).as(k.name()).isInstanceOf(MessageMismatchException.class);
            } else {
                assertThat(e).as(k.name()).isInstanceOf(ScheduleMismatchException.class);
                assertThat(e.getMessage()).as(k.name()).contains(k.fragments());
            }
        }
        WeftException shorter = MismatchPrograms.outcome(c, () -> {
            if (c.rank() == 0) {
                c.send(x(), 1, 6);
            } else {
                c.recv(DType.F32, new long[] {3}, 0, 6);
            }
        });
        if (c.rank() == 1) {
            assertThat(shorter).isInstanceOf(MessageMismatchException.class)
                    .hasMessageContaining("ScheduleCheckTest.java:").hasMessageContaining("receives 3 x f32 from rank 0 tag 6");
        } else {
            assertThat(shorter).isNull();
        }
    }

    @Ranks(1)
    void anUnknownModeIsAnError(Comm c) {
        System.setProperty(CheckMode.PROPERTY, "sometimes");
        assertThatThrownBy(() -> allreduceOnce(c, x())).isInstanceOf(WeftException.class)
                .hasMessageContaining("weft.check must be one of off, schedule, strict, got 'sometimes'");
    }
}
