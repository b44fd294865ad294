package dev.weft.it.mpi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.weft.it.check.MismatchPrograms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ranks that disagree under {@code mpirun -np 2} (without the check: a SIGSEGV, silently wrong results or a hang)
 * fail within seconds on the ranks the mismatch involves, with both sides named, no JVM crash, non-zero exit; and
 * programs MPI accepts pass under Open MPI and MPICH with the check on. The bound is
 * generous for a loaded machine: the failures it catches are hangs.
 */
class MpiScheduleCheckTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final Duration BOUND = Duration.ofSeconds(45);

    @ParameterizedTest
    @EnumSource(Mpirun.Flavor.class)
    void compiledMismatchesFailOnTheRanksTheyInvolve(Mpirun.Flavor flavor, @TempDir Path dir) throws Exception {
        assumeTrue(flavor.launcher().isPresent(), flavor.missing());
        Mpirun.Result r = run(flavor, dir, "compiled", Map.of());
        for (MismatchPrograms.Case c : MismatchPrograms.CASES) {
            for (int rank = 0; rank < 2; rank++) {
                String prefix = "rank " + rank + ": " + c.name() + ": ";
                String line = r.output().lines().filter(l -> l.startsWith(prefix)).findFirst().orElse("");
                if (c.failsOn().test(rank)) {
                    assertThat(line).as(r.output()).startsWith(prefix + "MismatchPrograms.java:")
                            .contains("schedule mismatch on world").contains(c.fragments());
                } else {
                    assertThat(line).as(r.output()).isEqualTo(prefix + "passed");
                }
            }
        }
    }

    /**
     * Eager operations that disagree fail by default, and with {@code WEFT_CHECK=off} too where MPI would corrupt
     * memory (collectives' counts); {@code off} lets only a receive of another dtype of the same size through.
     */
    @ParameterizedTest
    @ValueSource(strings = {"schedule", "off"})
    void eagerMismatchesFail(String mode, @TempDir Path dir) throws Exception {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
        Mpirun.Result r = run(Mpirun.Flavor.OPEN_MPI, dir, "eager", Map.of("WEFT_CHECK", mode));
        for (int rank = 0; rank < 2; rank++) {
            assertThat(r.output()).as(r.output()).contains(
                    "rank " + rank + ": eager 0: ScheduleCheckProgram.java:",
                    "rank 0 allreduce(SUM) f32[4] at ScheduleCheckProgram.java:",
                    "rank 1 allreduce(SUM) f32[100000] at ScheduleCheckProgram.java:",
                    "rank 0 allreduce(SUM) f32[4] at", "rank 1 allreduce(MAX) f32[4] at",
                    "rank 0 bcast(root 0) f32[4] at", "rank 1 bcast(root 1) f32[4] at",
                    "rank 1 bcast(root 0) f32[4] at", "rank 0 barrier at",
                    "rank " + rank + ": eager 7: ScheduleCheckProgram.java:",
                    "rank 1 bcast(root 0) f32[100000] at");
        }
        assertThat(r.output()).contains("rank 0: eager 5: passed", "rank 0: eager 6: passed");
        if (mode.equals("off")) {
            assertThat(r.output()).contains("rank 1: eager 5: passed", "rank 1: eager 6: ScheduleCheckProgram.java:",
                    "recv on 'world' (rank 1 of 2, peer rank 0) failed: MPI_ERR_TRUNCATE");
        } else {
            assertThat(r.output()).contains("rank 1: eager 5: ScheduleCheckProgram.java:",
                    "at message #0 from rank 0 to rank 1 with tag 5: rank 0 send(to 1, tag 5) f32[4] at",
                    "rank 1 recv(from 0, tag 5) i32[4] at ScheduleCheckProgram.java:",
                    "at message #1 from rank 0 to rank 1 with tag 5: rank 0 send(to 1, tag 5) f32[4] at",
                    "rank 1 recv(from 0, tag 5) f32[3] at ScheduleCheckProgram.java:");
        }
    }

    /** Programs MPI accepts pass with the check on, on three ranks, under both MPIs, with the answers of MPI. */
    @ParameterizedTest
    @EnumSource(Mpirun.Flavor.class)
    void validProgramsPass(Mpirun.Flavor flavor) throws Exception {
        assumeTrue(flavor.launcher().isPresent(), flavor.missing());
        Mpirun.Result r = Mpirun.run(flavor, 3, TIMEOUT, Map.of(), ScheduleCheckProgram.class, "valid");
        assertThat(r.timedOut()).as(r.output()).isFalse();
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains(
                "rank 0: valid [3.0, 6.0, 9.0, 12.0] [9.0, 18.0, 27.0, 36.0] 13.0 [1.0, 2.0, 3.0, 4.0] 30.0",
                "rank 1: valid [3.0, 6.0, 9.0, 12.0] [9.0, 18.0, 27.0, 36.0] 13.0 [3.0, 6.0, 9.0, 12.0] 0.0",
                "rank 2: valid [3.0, 6.0, 9.0, 12.0] [9.0, 18.0, 27.0, 36.0] 13.0 [1.0, 2.0, 3.0, 4.0] 0.0");
    }

    private static Mpirun.Result run(Mpirun.Flavor flavor, Path dir, String mode, Map<String, String> env)
            throws Exception {
        Map<String, String> all = new HashMap<>(env);
        all.put("JAVA_TOOL_OPTIONS", "-XX:ErrorFile=" + dir.resolve("hs_err_pid%p.log"));
        Mpirun.Result r = Mpirun.run(flavor, 2, TIMEOUT, all, ScheduleCheckProgram.class, mode);
        assertThat(r.timedOut()).as("still running after %s:%n%s", TIMEOUT, r.output()).isFalse();
        assertThat(r.elapsed()).as(r.output()).isLessThan(BOUND);
        assertThat(r.exitCode()).as(r.output()).isNotZero();
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).as(r.output())
                    .noneMatch(f -> f.startsWith("hs_err"));
        }
        assertThat(r.output()).doesNotContain("A fatal error has been detected");
        return r;
    }
}
