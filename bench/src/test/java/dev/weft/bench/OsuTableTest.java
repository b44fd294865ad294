package dev.weft.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import org.junit.jupiter.api.Test;

class OsuTableTest {
    private static Measurement m(String lines) {
        return Measurement.parse(lines);
    }

    @Test
    void ratiosAreWeftOverCMedianOverMedian() {
        OsuRow row = new OsuRow("allreduce", "Open MPI", 8, m("sample 1e-6\nsample 3e-6\nsample 2e-6\ncheck 4\n"),
                m("sample 2.4e-6\ncheck 4\n"), m("sample 1.5e-6\ncheck 4\n"), m("sample 0.02\ncheck 4\n"),
                m("sample 5e-6\ncheck 4\n"), Optional.empty());
        assertThat(row.foriRatio().getAsDouble()).isEqualTo(1.2, within(1e-12));
        assertThat(row.callRatio().getAsDouble()).isEqualTo(0.75, within(1e-12));
        assertThat(row.mismatches()).isEmpty();
        OsuRow mpich = new OsuRow("allreduce", "MPICH", 8, m("sample 2e-6\ncheck 4\n"), m("sample 2e-6\ncheck 4\n"),
                m("sample 2e-6\ncheck 4\n"), m("sample 0.02\ncheck 4\n"), m("sample 5e-6\ncheck 4\n"), Optional.empty());
        String table = OsuTable.render(List.of(row, mpich));
        assertThat(table)
                .contains("in a compiled loop: allreduce (Open MPI) 0/1, allreduce (MPICH) 1/1; per compiled call:"
                        + " allreduce (Open MPI) 1/1, allreduce (MPICH) 1/1.")
                .contains("#### allreduce (Open MPI)", "#### allreduce (MPICH)")
                .contains("| 8 B | 2.00 (1.00–3.00) | 2.40 (2.40–2.40) | **1.20** | 1.50 (1.50–1.50) | 0.75 |"
                        + " 20.0 ms, 5.00 µs |")
                .contains("Results agree");
    }

    @Test
    void fakeRanksAndMissingReferencesGiveNoRatioAndSayWhy() {
        OsuRow fake = new OsuRow("bcast", "Open MPI", 8 << 20, new Outcome.Missing("no C"), m("sample 1e-3\n"),
                m("sample 1e-3\n"), m("sample 1\n"), new Outcome.Missing("no C"), Optional.of("fake ranks"));
        assertThat(fake.foriRatio()).isEqualTo(OptionalDouble.empty());
        assertThat(fake.weftRan()).isTrue();
        assertThat(OsuTable.render(List.of(fake))).contains("in a compiled loop: bcast (Open MPI) 0/0;",
                "| 8 MiB | — | 1000 (1000–1000) | n/a |",
                "C not measured: no C.", "fake ranks.");
    }

    @Test
    void aWeftSeriesThatDiffersFromCIsAMismatch() {
        OsuRow row = new OsuRow("scan", "Open MPI", 2048, m("sample 1\ncheck 10\n"), m("sample 1\ncheck 10\n"),
                m("sample 1\ncheck 11\n"), m("sample 1\ncheck 10\n"), m("sample 1\ncheck 10\n"), Optional.empty());
        assertThat(row.mismatches()).containsExactly("CHECK MISMATCH scan (Open MPI) 2048 B: C 10.0, call 11.0");
        assertThat(OsuTable.render(List.of(row))).contains("| 2 KiB |", "Results disagree.");
        assertThat(new OsuRow("scan", "Open MPI", 8, m("sample 1\n"), new Outcome.Missing("crashed"), m("sample 1\n"),
                m("sample 1\n"), m("sample 1\n"), Optional.empty()).weftRan()).isFalse();
    }

    @Test
    void sizesAreNamedInBinaryUnits() {
        assertThat(List.of(8L, 512L, 2048L, 128L << 10, 8L << 20).stream().map(OsuTable::size))
                .containsExactly("8 B", "512 B", "2 KiB", "128 KiB", "8 MiB");
        assertThat(OsuSweep.Settings.FULL.sizes()).hasSize(11).startsWith(8L).endsWith(8L << 20);
    }
}
