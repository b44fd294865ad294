package dev.weft.it.mpi;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Failures under {@code mpirun}: a throwing, exiting, interrupted, killed or out-of-memory rank, or one with too
 * many requests not waited, ends the whole job within seconds, non-zero, without a JVM crash; MPI and usage errors name the op and the line. The JVMs write
 * crash reports to the test's directory ({@code -XX:ErrorFile}), which must stay free of them. The bounds on
 * elapsed time are generous for a loaded machine: the failures they catch are hangs.
 */
class MpiFaultTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    /** Most of a job's time is the JVMs starting; a job that ends within this after its fault did not hang. */
    private static final Duration BOUND = Duration.ofSeconds(40);

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
        assertThat(errors).hasSize(10);
        for (String e : errors) {
            String line = e.substring(e.lastIndexOf('|') + 1);
            assertThat(line).isNotEqualTo("-1");
            assertThat(e).startsWith("FaultPrograms.java:" + line + ": ");
        }
        assertThat(errors.get(0)).contains("schedule mismatch on world at message #0 from rank 0 to rank 1 with tag 1:"
                + " rank 0 send(to 1, tag 1) f64[4] at FaultPrograms.java:", "rank 1 recv(from 0, tag 1) f64[2] at");
        assertThat(errors.get(1)).contains("schedule mismatch on world at message #0 from rank 0 to rank 1 with tag 2:"
                + " rank 0 send(to 1, tag 2) f64[4] at FaultPrograms.java:", "rank 1 recv(from 0, tag 2) f64[8] at");
        assertThat(errors.get(2)).contains("request of communicator world.dup#0 waited on world");
        assertThat(errors.get(3)).contains("waited");
        assertThat(errors.get(4)).contains("wait on 'world' (rank 1)", "isend(1 x f64) on 'world.dup#0' to rank 1 "
                + "tag 10", "was not started by this communicator handle");
        assertThat(errors.get(5)).contains("wait on 'world.dup#0': isend(1 x f64)", "was already waited at "
                + "FaultPrograms.java:");
        assertThat(errors.get(6)).contains("barrier on 'world' from thread \"other\": MPI runs at MPI_THREAD_SINGLE, "
                + "so only the thread that initialised it (\"main\") may communicate",
                "WEFT_MPI_THREAD_LEVEL=multiple");
        assertThat(errors.get(7)).contains("allreduce on 'world': input buffer of 8 bytes cannot hold 2 x f64 (16 "
                + "bytes)");
        assertThat(errors.get(8)).contains("allreduce on 'world': MPI needs native buffers, got a heap segment");
        assertThat(errors.get(9)).contains("allreduce on 'world' from thread \"other\": MPI runs at "
                + "MPI_THREAD_SINGLE");
    }

    @ParameterizedTest
    @ValueSource(strings = {"INT", "TERM"})
    void aSignalToMpirunEndsADeadlockedJobWithoutACrash(String signal, @TempDir Path dir) throws Exception {
        Background job = Background.start(dir, "deadlock", dir.toString());
        ProcessHandle rank0 = job.awaitWaiting(0);
        job.awaitWaiting(1);
        ProcessHandle mpirun = rank0.parent().orElseThrow();
        assertThat(mpirun.info().command().orElse("")).as("the parent of rank 0").containsAnyOf("mpirun", "orterun");
        Thread.sleep(1000); // time for both ranks to get from their pid file into MPI_Recv
        long sent = System.nanoTime();
        int rc = new ProcessBuilder("kill", "-" + signal, Long.toString(mpirun.pid())).start().waitFor();
        assertThat(rc).isZero();
        Mpirun.Result r = job.result();
        assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("time from SIG%s to the end:%n%s", signal,
                r.output()).isLessThan(Duration.ofSeconds(15));
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        assertThat(r.output()).contains("flight recorder of rank 0 of 2", "recv f32[1] from 1 tag 0");
        assertNoCrash(dir, r);
    }

    @Test
    void killingOneRankEndsTheJob(@TempDir Path dir) throws Exception {
        Background job = Background.start(dir, "kill", dir.toString());
        job.awaitWaiting(0);
        ProcessHandle rank1 = job.awaitWaiting(1);
        Thread.sleep(1000); // time for both ranks to get from their pid file into MPI
        long killed = System.nanoTime();
        assertThat(rank1.destroyForcibly()).isTrue();
        Mpirun.Result r = job.result();
        assertThat(Duration.ofNanos(System.nanoTime() - killed)).as("time from SIGKILL to the end:%n%s",
                r.output()).isLessThan(Duration.ofSeconds(15));
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        assertNoCrash(dir, r);
    }

    @Test
    void systemExitOnOneRankAbortsTheJobWithItsStatus(@TempDir Path dir) throws Exception {
        Mpirun.Result r = run(dir, "exit", "3");
        assertThat(r.exitCode()).as(r.output()).isEqualTo(3);
        assertThat(r.output()).contains("rank 1 of 2: exit with status 3 before the program's end: aborting the MPI "
                + "job");
        assertNoCrash(dir, r);
    }

    @Test
    void systemExitZeroOnOneRankWhileTheOtherWaitsEndsTheJob(@TempDir Path dir) throws Exception {
        Mpirun.Result r = run(dir, "exit", "0");
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        assertThat(r.output()).contains("rank 1 of 2: System.exit before the other ranks ended: MPI_Finalize has "
                + "waited 10 s for them");
        assertNoCrash(dir, r);
    }

    @Test
    void systemExitZeroOnEveryRankFinalizes(@TempDir Path dir) throws Exception {
        Mpirun.Result r = run(dir, "exitAll");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("sum = 2.0").doesNotContain("weft: rank");
        assertNoCrash(dir, r);
    }

    @Test
    void aShapeErrorWhileTracingOnOneRankEndsTheJob(@TempDir Path dir) throws Exception {
        Mpirun.Result r = run(dir, "trace");
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        assertThat(r.output()).contains("rank 1 of 2: uncaught exception", "ShapeException: FaultPrograms.java:",
                "add: shapes [2] and [3] are not broadcast-compatible");
        assertNoCrash(dir, r);
    }

    @Test
    void runningOutOfMemoryOnOneRankEndsTheJob(@TempDir Path dir) throws Exception {
        Mpirun.Result r = run(dir, "oom");
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        assertThat(r.output()).contains("rank 1 of 2: uncaught exception", "java.lang.OutOfMemoryError");
        assertNoCrash(dir, r);
    }

    @Test
    void tooManyRequestsNotWaitedEndTheJobNamingTheFirst(@TempDir Path dir) throws Exception {
        Map<String, String> env = new HashMap<>(crashReportsIn(dir));
        env.put("WEFT_MAX_REQUESTS", "1000");
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, env, FaultPrograms.class, "requests");
        assertThat(r.elapsed()).as("mpirun output:%n%s", r.output()).isLessThan(BOUND);
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        assertThat(r.output()).contains("rank 0 of 2: uncaught exception", "CommException: FaultPrograms.java:",
                "isend on 'world': 1000 requests of this rank are started and not waited, as many as "
                        + "-Dweft.requests.max or WEFT_MAX_REQUESTS allows (default 65536); the first still "
                        + "outstanding is isend(1 x f32) on 'world' to rank 1 tag 0 at FaultPrograms.java:");
        assertNoCrash(dir, r);
    }

    @Test
    void requestsNeverWaitedAreReportedAtTheEnd(@TempDir Path dir) throws Exception {
        Mpirun.Result r = run(dir, "neverWaited");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("weft: rank 0 of 2: 5 requests were started and never waited: isend(1 x i32)"
                + " on 'world' to rank 1 tag 0 at FaultPrograms.java:").doesNotContain("weft: rank 1 of 2");
        assertNoCrash(dir, r);
    }

    /** Runs a fault program on two ranks, which must end within {@link #BOUND}. */
    private static Mpirun.Result run(Path dir, String... args) throws Exception {
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, crashReportsIn(dir), FaultPrograms.class, args);
        assertThat(r.elapsed()).as("mpirun output:%n%s", r.output()).isLessThan(BOUND);
        return r;
    }

    /** Has the JVMs write crash reports to {@code dir}. */
    static Map<String, String> crashReportsIn(Path dir) {
        return Map.of("JAVA_TOOL_OPTIONS", "-XX:ErrorFile=" + dir.resolve("hs_err_pid%p.log"));
    }

    static void assertNoCrash(Path dir, Mpirun.Result r) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).as(r.output())
                    .noneMatch(f -> f.startsWith("hs_err"));
        }
        assertThat(r.output()).doesNotContain("A fatal error has been detected");
    }

    /** A two-rank job of a fault program running on another thread, so that the test can act on it meanwhile. */
    private record Background(Path dir, CompletableFuture<Mpirun.Result> job) {
        static Background start(Path dir, String... args) {
            return new Background(dir, CompletableFuture.supplyAsync(() -> {
                try {
                    return Mpirun.run(2, TIMEOUT, crashReportsIn(dir), FaultPrograms.class, args);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }

        /** The process of {@code rank}, once it wrote that it is about to block. */
        ProcessHandle awaitWaiting(int rank) throws Exception {
            Path pid = dir.resolve("rank" + rank + ".pid");
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (!Files.exists(pid)) {
                if (job.isDone()) {
                    throw new AssertionError("the job ended before rank " + rank + " waited:\n" + job.get().output());
                }
                assertThat(System.nanoTime()).as("rank %d never waited", rank).isLessThan(deadline);
                Thread.sleep(100);
            }
            return ProcessHandle.of(Long.parseLong(Files.readString(pid))).orElseThrow();
        }

        Mpirun.Result result() throws Exception {
            Mpirun.Result r = job.get();
            assertThat(r.timedOut()).as("mpirun still ran after %s:%n%s", TIMEOUT, r.output()).isFalse();
            return r;
        }
    }
}
