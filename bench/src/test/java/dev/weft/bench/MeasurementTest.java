package dev.weft.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
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

    @Test
    void theRatioIsReferenceTimeOverWeftTime() {
        Measurement weft = Measurement.parse("sample 2\ncheck 10\n");
        Measurement ref = Measurement.parse("sample 5\ncheck 10.00001\n");
        Row row = new Row("c", weft, "C", ref, Unit.TIME, Optional.empty(), 1e-5, List.of());
        assertThat(row.ratio()).isEqualTo(OptionalDouble.of(2.5));
        assertThat(row.checkMismatch()).isEmpty();
        assertThat(row.allNotes()).containsExactly("results agree");
    }

    @Test
    void rowsThatMustNotBeComparedHaveNoRatio() {
        Measurement weft = Measurement.parse("sample 2\n");
        Row row = new Row("c", weft, "MPI", Measurement.parse("sample 1\n"), Unit.TIME, Optional.of("fake ranks"), 0,
                List.of());
        assertThat(row.ratio()).isEmpty();
        Row missing = new Row("c", weft, "mpi4py", new Outcome.Missing("no mpi4py"), Unit.TIME, Optional.empty(), 0,
                List.of());
        assertThat(missing.ratio()).isEmpty();
        assertThat(missing.allNotes()).containsExactly("mpi4py not measured: no mpi4py");
    }

    @Test
    void checksThatDifferBeyondTheToleranceAreReported() {
        Row row = new Row("c", Measurement.parse("sample 1\ncheck 100\n"), "C", Measurement.parse("sample 1\ncheck 101\n"),
                Unit.TIME, Optional.empty(), 1e-3, List.of());
        assertThat(row.checkMismatch()).hasValue("CHECK MISMATCH: Weft 100.0, C 101.0");
        assertThat(MarkdownTable.render(List.of(row))).contains("| 1.00 |", "CHECK MISMATCH");
    }
}
