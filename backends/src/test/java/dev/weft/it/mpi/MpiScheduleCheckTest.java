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

/**
 * Ranks that disagree under {@code mpirun -np 2} (without the check: a SIGSEGV, silently wrong results or a hang)
 * fail within seconds on both ranks with the schedule mismatch named, no JVM crash, non-zero exit. The bound is
 * generous for a loaded machine: the failures it catches are hangs.
 */
class MpiScheduleCheckTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final Duration BOUND = Duration.ofSeconds(45);

    @ParameterizedTest
    @EnumSource(Mpirun.Flavor.class)
    void compiledMismatchesFailOnBothRanks(Mpirun.Flavor flavor, @TempDir Path dir) throws Exception {
        assumeTrue(flavor.launcher().isPresent(), flavor.missing());
        Mpirun.Result r = run(flavor, dir, Map.of(), "compiled");
        for (MismatchPrograms.Case c : MismatchPrograms.CASES) {
            for (int rank = 0; rank < 2; rank++) {
                String line = r.output().lines().filter(l -> l.startsWith("rank ")).filter(l -> l.contains(c.name()))
                        .findFirst().orElse("");
                assertThat(r.output()).as(r.output()).contains("rank " + rank + ": " + c.name()
                        + ": MismatchPrograms.java:");
                assertThat(line).contains("schedule mismatch on world").contains(c.fragments());
            }
        }
        assertThat(r.output()).doesNotContain("no mismatch found");
    }

    @Test
    void strictCatchesEagerCollectivesThatDisagree(@TempDir Path dir) throws Exception {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
        Mpirun.Result r = run(Mpirun.Flavor.OPEN_MPI, dir, Map.of("WEFT_CHECK", "strict"), "eager");
        for (int rank = 0; rank < 2; rank++) {
            assertThat(r.output()).as(r.output()).contains(
                    "rank " + rank + ": eager 0: ScheduleCheckProgram.java:",
                    "rank 0 allreduce(SUM) f32[4] at ScheduleCheckProgram.java:",
                    "rank 1 allreduce(SUM) f32[100000] at ScheduleCheckProgram.java:",
                    "rank 0 allreduce(SUM) f32[4] at", "rank 1 allreduce(MAX) f32[4] at",
                    "rank 0 bcast(root 0) f32[4] at", "rank 1 bcast(root 1) f32[4] at",
                    "rank 1 bcast(root 0) f32[4] at", "rank 0 barrier at");
        }
        assertThat(r.output()).doesNotContain("no mismatch found");
    }

    @Test
    void aRankWaitingInTheCheckForRanksThatRunEagerlyIsToldWhyInSeconds(@TempDir Path dir) throws Exception {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
        Mpirun.Result r = run(Mpirun.Flavor.OPEN_MPI, dir, Map.of("WEFT_COMM_TIMEOUT", "14"), "mixed");
        assertThat(r.exitCode()).as("output:%n%s", r.output()).isNotZero();
        assertThat(r.output()).containsPattern("weft: rank 0 of 2 has waited 1\\d\\.\\d\\d s in the schedule check of the"
                + " compiled program called at ScheduleCheckProgram.java:\\d+ \\(.*\\): the other ranks have not called"
                + " that program compiled").contains("WEFT_CHECK=off", "past WEFT_COMM_TIMEOUT=14 s");
    }

    private static Mpirun.Result run(Mpirun.Flavor flavor, Path dir, Map<String, String> env, String mode)
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
