package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.testing.RankRunner;
import dev.weft.testing.Ranks;
import dev.weft.testing.TensorAssert;
import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The user-facing test support of {@code dev.weft:weft-testing}, run on the fake runtime. */
class RanksTest {
    @Ranks({1, 3})
    void runsOnEveryRankWithItsOwnWorld(Comm world) {
        assertThat(Comm.world()).isEqualTo(world);
        assertThat(world.rank()).isBetween(0, world.size() - 1);
    }

    @Test
    void failingRanksAreNamedWithTheirMessagesAndTheFirstIsTheCause() {
        assertThatThrownBy(() -> RankRunner.run(4, world -> {
            if (world.rank() % 2 == 1) {
                assertThat(world.rank()).as("rank check").isEqualTo(-1);
            }
        })).isInstanceOf(AssertionError.class)
                .hasMessageContaining("2 of 4 ranks failed")
                .hasMessageContaining("rank 1: AssertionFailedError: [rank check]")
                .hasMessageContaining("rank 3: AssertionFailedError: [rank check]")
                .hasMessageNotContaining("rank 0:")
                .cause().isInstanceOf(AssertionError.class).hasMessageContaining("expected: -1");
    }

    private static void failOn(int rank) {
        throw new IllegalStateException("rank " + rank + " failed on purpose");
    }

    @Test
    void everyFailingRanksStackTraceIsPrinted() {
        AssertionError e = catchThrowableOfType(AssertionError.class, () -> RankRunner.run(3, world -> {
            if (world.rank() > 0) {
                failOn(world.rank());
            }
        }));
        StringWriter printed = new StringWriter();
        e.printStackTrace(new PrintWriter(printed));
        assertThat(printed.toString()).contains("IllegalStateException: rank 1 failed on purpose",
                "IllegalStateException: rank 2 failed on purpose");
        assertThat(printed.toString().split("at dev.weft.it.RanksTest.failOn\\(", -1)).hasSize(3);
    }

    @Test
    void checkedExceptionsAreReportedUnwrapped() {
        assertThatThrownBy(() -> RankRunner.run(2, world -> {
            if (world.rank() == 1) {
                throw new java.io.IOException("disk");
            }
        })).hasMessageContaining("rank 1: IOException: disk").cause().isInstanceOf(java.io.IOException.class);
    }

    @Test
    void tensorAssertPrintsBothTensors() {
        Tensor a = Tensor.of(new float[] {1, 2, 3});
        TensorAssert.assertThat(a).hasShape(3).hasDType(DType.F32).isEqualTo(Tensor.of(new float[] {1, 2, 3}))
                .isCloseTo(Tensor.of(new float[] {1, 2, 3.05f}), 0.1);
        assertThatThrownBy(() -> TensorAssert.assertThat(a).isCloseTo(Tensor.of(new float[] {1, 2, 4}), 0.1))
                .hasMessageContaining(a.toString()).hasMessageContaining(Tensor.of(new float[] {1, 2, 4}).toString())
                .hasMessageContaining("flat index 2");
        assertThatThrownBy(() -> TensorAssert.assertThat(a).hasShape(1, 3)).hasMessageContaining("[1, 3]");
        assertThatThrownBy(() -> TensorAssert.assertThat(a).isEqualTo(Tensor.of(new int[] {1, 2, 3})))
                .hasMessageContaining("but was");
    }
}
