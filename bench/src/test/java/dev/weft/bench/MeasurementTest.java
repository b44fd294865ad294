package dev.weft.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class MeasurementTest {
    @Test
    void readsTheProtocolAndIgnoresOtherLines() {
        Measurement m = Measurement.parse("""
                weft: building...
                sample 3.0e-3
                sample 1.0e-3
                info BLAS: none
                sample 2.0e-3
                check 418866.5
                """);
        assertThat(m.samples()).containsExactly(3.0e-3, 1.0e-3, 2.0e-3);
        assertThat(m.check()).hasValue(418866.5);
        assertThat(m.info()).containsExactly("BLAS: none");
        assertThat(m.median()).isEqualTo(2.0e-3);
        assertThat(m.min()).isEqualTo(1.0e-3);
        assertThat(m.max()).isEqualTo(3.0e-3);
    }

    @Test
    void aSeriesTimedAlongsideIsReadApart() {
        Measurement m = Measurement.parse("""
                sample 3.0e-7
                [C] sample 2.0e-7
                sample 5.0e-7
                [C] sample 4.0e-7
                [C] check 15
                check 15
                [C] info in the same job
                """);
        assertThat(m.samples()).containsExactly(3.0e-7, 5.0e-7);
        assertThat(m.info()).isEmpty();
        assertThat(m.alongside("C")).isInstanceOfSatisfying(Measurement.class, c -> {
            assertThat(c.samples()).containsExactly(2.0e-7, 4.0e-7);
            assertThat(c.check()).hasValue(15.0);
            assertThat(c.info()).containsExactly("in the same job");
        });
        assertThat(m.alongside("NumPy")).isInstanceOf(Outcome.Missing.class);
        assertThatThrownBy(() -> Measurement.parse("sample 1\n[C] check 2\n"))
                .hasMessageContaining("[C]: no 'sample' line");
    }

    @Test
    void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        Measurement m = Measurement.parse("sample 4\nsample 1\nsample 10\nsample 2\n");
        assertThat(m.median()).isEqualTo(3.0);
        assertThat(m.check()).isEmpty();
    }

    @Test
    void outputWithoutSamplesIsRejected() {
        assertThatThrownBy(() -> Measurement.parse("check 1\n")).hasMessageContaining("no 'sample' line");
    }

    @Test
    void timesAreShownWithAUnitAndTheRange() {
        Measurement m = Measurement.parse("sample 0.0123\nsample 0.0121\nsample 0.0130\n");
        assertThat(Unit.TIME.format(m)).isEqualTo("12.3 ms (12.1–13.0 ms)");
        Measurement mixed = Measurement.parse("sample 9.5e-4\nsample 1.2e-3\nsample 1.0e-3\n");
        assertThat(Unit.TIME.format(mixed)).isEqualTo("1.00 ms (950 µs–1.20 ms)");
        Measurement steps = Measurement.parse("sample 0.002\nsample 0.001\nsample 0.004\n");
        assertThat(Unit.STEPS_PER_SECOND.format(steps)).isEqualTo("500 steps/s (250–1000 steps/s)");
    }
}
