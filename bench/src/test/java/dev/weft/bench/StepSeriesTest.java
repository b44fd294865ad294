package dev.weft.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class StepSeriesTest {
    /** 40 steps: a slow first, a warm-up falling to 1.25, 1.2 at step 6, then 1.0 and 1.1 alternating. */
    private static double[] steps() {
        double[] s = new double[40];
        s[0] = 50;
        double[] warm = {3, 2, 1.5, 1.25, 1.2};
        System.arraycopy(warm, 0, s, 1, warm.length);
        for (int i = 6; i < s.length; i++) {
            s[i] = i % 2 == 0 ? 1.0 : 1.1;
        }
        return s;
    }

    @Test
    void splitsTheStepsIntoFirstEarlySteadyAndStepsUntilSteady() {
        Measurement run = new Measurement(steps(), OptionalDouble.of(2.3), List.of("loss 2.1 at step 40"), Map.of());
        StepSeries s = StepSeries.of(run);
        assertThat(s.first().samples()).containsExactly(50);
        // steps 2-20: 3, 2, 1.5, 1.25, 1.2 and seven of each of 1.0 and 1.1; the median of 19 is the tenth smallest
        assertThat(s.early().samples()).hasSize(19);
        assertThat(s.early().median()).isEqualTo(1.1);
        assertThat(s.steady().samples()).containsExactly(Arrays.copyOfRange(steps(), 20, 40));
        assertThat(s.steady().median()).isEqualTo(1.05, org.assertj.core.api.Assertions.within(1e-12));
        // 1.2 x 1.05 = 1.26: step 5 (1.25) is the first within it
        assertThat(s.stepsToSteady()).isEqualTo(5);
        assertThat(s.steady().check()).isEqualTo(OptionalDouble.of(2.3));
        assertThat(s.steady().info()).containsExactly("loss 2.1 at step 40");
        assertThat(s.first().check()).isEmpty();
    }

    @Test
    void aRunOfFewerStepsThanTheEarlyWindowTwiceIsRejected() {
        Measurement run = new Measurement(Arrays.copyOf(steps(), StepSeries.MIN_STEPS - 1), OptionalDouble.empty(),
                List.of(), Map.of());
        assertThatThrownBy(() -> StepSeries.of(run)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least " + StepSeries.MIN_STEPS);
    }
}
