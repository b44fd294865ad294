package dev.weft.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class RowTest {
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
