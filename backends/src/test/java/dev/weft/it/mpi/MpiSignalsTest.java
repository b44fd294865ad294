package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The JVM keeps its own SIGSEGV handling under each MPI: compiled code that meets nulls ({@link NullChecksProgram})
 * gets NullPointerExceptions on every rank, not a UCX backtrace and a dead job.
 */
class MpiSignalsTest {
    @ParameterizedTest
    @EnumSource(Mpirun.Flavor.class)
    void compiledNullChecksStayNullPointerExceptions(Mpirun.Flavor flavor) throws Exception {
        MpiParityTest.requireLauncher(flavor);
        Mpirun.Result r = Mpirun.run(flavor, 2, Duration.ofSeconds(90), Map.of(), NullChecksProgram.class);
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isZero();
        assertThat(r.output()).contains("rank 0 caught 10000", "rank 1 caught 10000").doesNotContain("SIGSEGV");
    }
}
