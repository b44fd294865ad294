package dev.weft.it.check;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.backends.comm.check.CheckMode;
import dev.weft.backends.comm.check.ScheduleCheck;
import dev.weft.backends.comm.check.ScheduleMismatchException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.testing.Ranks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The schedule check on fake ranks: every mismatch of {@link MismatchPrograms} fails on every rank before the
 * program runs, naming each rank's operation and line; rank-specialised programs that pair up are not flagged;
 * a program is checked once, not per call; {@code strict} checks eager collectives and {@code off} nothing.
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
    void everyMismatchFailsOnEveryRankNamingBothOperations(Comm c) {
        for (int i = 0; i < MismatchPrograms.CASES.size(); i++) {
            MismatchPrograms.Case k = MismatchPrograms.CASES.get(i);
            int index = i;
            assertThatThrownBy(() -> mismatched(c, x(), index)).as(k.name())
                    .isInstanceOf(ScheduleMismatchException.class)
                    .hasMessageStartingWith("MismatchPrograms.java:")
                    .hasMessageContaining("schedule mismatch on world")
                    .satisfies(e -> assertThat(e.getMessage()).contains(k.fragments()));
            c.barrier();
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
        long before = ScheduleCheck.exchanges();
        assertThat(halo(c, x(), 3).shape()).containsExactly(4);
        assertThat(ring(c, x()).toFloatArray()).containsExactly(c.size(), 2f * c.size(), 3f * c.size(),
                4f * c.size());
        assertThat(loopsOfOtherShapes(c, x()).shape()).containsExactly(4);
        assertThat(exchangeInBranch(c, x()).toFloatArray()).containsExactly(1, 2, 3, 4);
        if (c.size() == 1) {
            assertThat(ScheduleCheck.exchanges()).isEqualTo(before);
        }
    }

    /** The branches run different collectives; rank 1 runs another collective before the cond. */
    @Compile
    static Tensor collectivesAroundABranch(Comm c, Tensor x) {
        Tensor y = c.rank() == 0 ? x : c.allreduce(x, ReduceOp.SUM);
        return Weft.cond(y.sum().gt(0), () -> c.allreduce(y, ReduceOp.SUM), () -> c.bcast(y, 0));
    }

    @Ranks(2)
    void aBranchWithDifferentCollectivesIsComparedAsOneBlock(Comm c) {
        assertThatThrownBy(() -> collectivesAroundABranch(c, x())).isInstanceOf(ScheduleMismatchException.class)
                .hasMessageContaining("at collective #0: rank 0 a Weft.cond whose branches run different"
                        + " collectives at ScheduleCheckTest.java:")
                .hasMessageContaining("rank 1 allreduce(SUM) f32[4] at ScheduleCheckTest.java:");
    }

    @Compile
    static Tensor allreduceOnce(Comm c, Tensor x) {
        return c.allreduce(x, ReduceOp.SUM);
    }

    @Ranks(2)
    void aProgramIsCheckedAtItsFirstCallOnly(Comm c) {
        Tensor y = allreduceOnce(c, x());
        c.barrier();
        long after = ScheduleCheck.exchanges();
        c.barrier();
        for (int i = 0; i < 50; i++) {
            y = allreduceOnce(c, x());
        }
        c.barrier();
        assertThat(ScheduleCheck.exchanges()).isEqualTo(after);
        assertThat(y.toFloatArray()).containsExactly(2, 4, 6, 8);
    }

    @Ranks(2)
    void strictChecksEagerCollectives(Comm c) {
        System.setProperty(CheckMode.PROPERTY, "strict");
        c.barrier();
        assertThat(c.allreduce(x(), ReduceOp.SUM).toFloatArray()).containsExactly(2, 4, 6, 8);
        assertThatThrownBy(() -> c.allreduce(x(), c.rank() == 0 ? ReduceOp.SUM : ReduceOp.MAX))
                .isInstanceOf(ScheduleMismatchException.class)
                .hasMessageStartingWith("ScheduleCheckTest.java:")
                .hasMessageContaining("rank 0 allreduce(SUM) f32[4] at ScheduleCheckTest.java:")
                .hasMessageContaining("rank 1 allreduce(MAX) f32[4] at ScheduleCheckTest.java:");
        c.barrier();
    }

    @Ranks(2)
    void offLeavesMismatchesToTheRuntime(Comm c) {
        System.setProperty(CheckMode.PROPERTY, "off");
        c.barrier();
        int reduceOp = 3;
        assertThat(MismatchPrograms.CASES.get(reduceOp).name()).isEqualTo("reduce op");
        assertThatThrownBy(() -> mismatched(c, x(), reduceOp)).isInstanceOf(WeftException.class)
                .isNotInstanceOf(ScheduleMismatchException.class);
        c.barrier();
    }

    @Ranks(1)
    void anUnknownModeIsAnError(Comm c) {
        System.setProperty(CheckMode.PROPERTY, "sometimes");
        assertThatThrownBy(() -> allreduceOnce(c, x())).isInstanceOf(WeftException.class)
                .hasMessageContaining("weft.check must be one of off, schedule, strict, got 'sometimes'");
    }
}
