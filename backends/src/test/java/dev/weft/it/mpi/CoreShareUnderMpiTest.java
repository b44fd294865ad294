package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.time.Duration;
import java.util.Map;
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
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, Map.of(), CoreShareProgram.class);
        assertThat(r.exitCode()).as(r.output()).isZero();
        String yield = processors > 2 ? "unset" : "1";
        for (int rank = 0; rank < 2; rank++) {
            assertThat(r.output()).contains("rank " + rank + ": OMPI_MCA_mpi_yield_when_idle=" + yield
                    + " MPIR_CVAR_POLLS_BEFORE_YIELD=" + yield);
        }
        assertThat(r.output()).containsPattern("blas=(none|" + Math.max(1, processors / 2) + ")\\R");
    }

    @Test
    void theUsersSettingsWin() throws Exception {
        assumeThat(Mpirun.find()).as("Open MPI").isPresent();
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, Map.of("OMPI_MCA_mpi_yield_when_idle", "0",
                "OPENBLAS_NUM_THREADS", "2"), CoreShareProgram.class);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("rank 0: OMPI_MCA_mpi_yield_when_idle=0")                // OpenBLAS caps the count at the processors
                .containsPattern("blas=(none|" + Math.min(2, Runtime.getRuntime().availableProcessors()) + ")\\R");
    }
}
