package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.time.Duration;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Under {@code mpirun -np 2}: MPI is asked to yield while it waits exactly when 2 ranks leave no core of this machine
 * spare, OpenBLAS runs each rank's share of the cores, and a value the user set stays.
 */
class CoreShareUnderMpiTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @Test
    void twoRanksShareTheCoresAndYieldWhenNoneIsSpare() throws Exception {
        assumeThat(Mpirun.find()).as("Open MPI").isPresent();
        int processors = Runtime.getRuntime().availableProcessors();
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, Map.of("WEFT_DEBUG", "1"), CoreShareProgram.class);
        assertThat(r.exitCode()).as(r.output()).isZero();
        String yield = processors > 2 ? "unset" : "1";
        String waits = processors > 2 ? "MPI polls while it waits" : "MPI yields while it waits (no spare core)";
        for (int rank = 0; rank < 2; rank++) {
            assertThat(r.output()).contains("rank " + rank + ": OMPI_MCA_mpi_yield_when_idle=" + yield
                    + " MPIR_CVAR_POLLS_BEFORE_YIELD=" + yield);
            assertThat(r.output()).containsPattern("r" + rank + " \\| MPI .*2 rank\\(s\\) on this node, .*"
                    + Pattern.quote(waits) + "\\R");
        }
        assertThat(r.output()).containsPattern("blas=(none|" + Math.max(1, processors / 2) + ")\\R");
    }

    @Test
    void theUsersSettingsWin() throws Exception {
        assumeThat(Mpirun.find()).as("Open MPI").isPresent();
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, Map.of("OMPI_MCA_mpi_yield_when_idle", "0",
                "OPENBLAS_NUM_THREADS", "2", "WEFT_DEBUG", "1"), CoreShareProgram.class);
        assertThat(r.exitCode()).as(r.output()).isZero();
        // WEFT_DEBUG tells the user's settings as the decision, not Weft's own
        assertThat(r.output()).contains("MPI waits as OMPI_MCA_mpi_yield_when_idle=0 (the user's) says")
                .doesNotContain("MPI yields while it waits").doesNotContain("MPI polls while it waits");
        if (!r.output().contains("blas=none")) {
            assertThat(r.output()).contains("weft: OpenBLAS threads as OPENBLAS_NUM_THREADS=2 says");
        }
        assertThat(r.output()).contains("rank 0: OMPI_MCA_mpi_yield_when_idle=0")                // OpenBLAS caps the count at the processors
                .containsPattern("blas=(none|" + Math.min(2, Runtime.getRuntime().availableProcessors()) + ")\\R");
    }
}
