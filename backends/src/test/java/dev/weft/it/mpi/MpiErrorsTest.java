package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.it.CommErrorCases;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The misuses of {@link CommErrorCases} fail under {@code mpirun} as they do on fake ranks. */
class MpiErrorsTest {
    @Test
    void commMistakesNameTheLineUnderMpi() throws Exception {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
        Mpirun.Result r = Mpirun.run(2, Duration.ofSeconds(90), ErrorCasesProgram.class);
        assertThat(r.exitCode()).as("mpirun output:%n%s", r.output()).isZero();
        int rows = CommErrorCases.CASES.size();
        assertThat(r.output()).contains("rank 0: " + rows + " rows ok", "rank 1: " + rows + " rows ok");
    }
}
