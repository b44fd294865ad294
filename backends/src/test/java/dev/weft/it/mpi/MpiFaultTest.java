package dev.weft.it.mpi;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Failures under {@code mpirun}: a throwing rank ends the job; MPI and usage errors name the op and the line. */
class MpiFaultTest {
    @BeforeAll
    static void requireMpirun() {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
    }

    @Test
    void aRankThatThrowsEndsTheJobWithAFailure() throws Exception {
        Mpirun.Result r = Mpirun.run(2, Duration.ofSeconds(20), FaultPrograms.class, "throw");
        assertThat(r.timedOut()).as("mpirun still ran after 20 s:%n%s", r.output()).isFalse();
        assertThat(r.exitCode()).isNotZero();
        // Open MPI's own MPI_ABORT banner is not asserted: its help-text path fails now and then in containers.
        assertThat(r.output()).contains("rank 1 of 2: uncaught exception", "aborting the MPI job",
                "rank 1 fails on purpose");
    }

    @Test
    void errorsNameTheOperationAndTheLine(@TempDir Path dir) throws Exception {
        Mpirun.Result r = Mpirun.run(2, Duration.ofSeconds(60), FaultPrograms.class, "errors", dir.toString());
        assertThat(r.exitCode()).as("mpirun output:%n%s", r.output()).isZero();
        List<String> errors = Files.readAllLines(dir.resolve("errors.txt"));
        assertThat(errors).hasSize(7);
        for (String e : errors) {
            String line = e.substring(e.lastIndexOf('|') + 1);
            assertThat(line).isNotEqualTo("-1");
            assertThat(e).startsWith("FaultPrograms.java:" + line + ": ");
        }
        assertThat(errors.get(0)).contains("recv on 'world' (rank 1 of 2, peer rank 0) failed")
                .containsIgnoringCase("truncated");
        assertThat(errors.get(1)).contains("message size mismatch on 'world': rank 1 receives 8 x f64 from rank 0 "
                + "tag 2, but 4 elements were sent");
        assertThat(errors.get(2)).contains("request of communicator world.dup#0 waited on world");
        assertThat(errors.get(3)).contains("waited");
        assertThat(errors.get(4)).contains("wait on 'world' (rank 1)", "isend(1 x f64) on 'world.dup#0' to rank 1 "
                + "tag 10", "was not started by this communicator handle");
        assertThat(errors.get(5)).contains("wait on 'world.dup#0': isend(1 x f64)", "was already waited at "
                + "FaultPrograms.java:");
        assertThat(errors.get(6)).contains("barrier on 'world' from thread \"other\": MPI runs at MPI_THREAD_SINGLE, "
                + "so only the thread that initialised it (\"main\") may communicate",
                "WEFT_MPI_THREAD_LEVEL=multiple");
    }
}
