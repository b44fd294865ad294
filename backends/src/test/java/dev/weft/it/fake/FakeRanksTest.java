package dev.weft.it.fake;

import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.backends.cli.FakeRanks;
import dev.weft.it.mpi.Mpirun;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code bin/weft run --comm fake}: how a run on fake ranks ends, in a JVM of its own. */
class FakeRanksTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private static Mpirun.Result run(int ranks, Class<?> program) throws Exception {
        Mpirun.Result r = Mpirun.plain(TIMEOUT, FakeRanks.class, Integer.toString(ranks), program.getName());
        assertThat(r.timedOut()).as(r.output()).isFalse();
        return r;
    }

    @Test
    void systemExitZeroOnOneRankWhileAnotherRunsFailsAndNamesIt() throws Exception {
        Mpirun.Result r = run(2, FakeRanksPrograms.ExitWhileAnotherRankRuns.class);
        assertThat(r.exitCode()).as(r.output()).isEqualTo(1);
        assertThat(r.output()).contains("weft: System.exit was called on rank 1 while rank 0 was still running, so "
                        + "the job fails with status 1")
                .containsPattern("\n  rank 0: (running|blocked in recv\\(1 x i32\\) on 'world' from rank 1 tag 0 at "
                        + "FakeRanksPrograms.java:\\d+)\n")
                .contains("at dev.weft.it.fake.FakeRanksPrograms$ExitWhileAnotherRankRuns.main("
                        + "FakeRanksPrograms.java:")
                .contains("weft: flight recorder of rank 0 of 2", "weft: flight recorder of rank 1 of 2");
    }

    @Test
    void systemExitInACustomReduceOpEndsTheJobNamingTheWaitingRank() throws Exception {
        Mpirun.Result r = run(2, FakeRanksPrograms.ExitInCustomReduceOp.class);
        assertThat(r.exitCode()).as(r.output()).isEqualTo(1);
        assertThat(r.output()).containsPattern("weft: System.exit was called on rank (\\d) while rank (?!\\1)\\d was "
                        + "still running(.|\n)*\n  rank \\d: blocked in allreduce\\(quit, 4 x f32\\) on 'world' "
                        + "\\(collective #1\\) waiting for rank \\1 to compute the result at "
                        + "FakeRanksPrograms.java:\\d+\n");
    }

    @Test
    void tooManyRequestsNotWaitedFailNamingTheFirst() throws Exception {
        Mpirun.Result r = run(2, FakeRanksPrograms.TooManyRequests.class);
        assertThat(r.exitCode()).as(r.output()).isEqualTo(1);
        assertThat(r.output()).containsPattern("rank 0 failed: dev.weft.backends.comm.CommException: "
                + "FakeRanksPrograms.java:(\\d+): isend on 'world': 65536 requests of this rank are started and not "
                + "waited, as many as -Dweft.requests.max or WEFT_MAX_REQUESTS allows \\(default 65536\\); the first "
                + "still outstanding is isend\\(1 x f32\\) on 'world' to rank 1 tag 0 at FakeRanksPrograms.java:\\1: "
                + "wait for every request");
    }

    @Test
    void aRankEndingWithRequestsNeverWaitedNamesThem() throws Exception {
        Mpirun.Result r = run(2, FakeRanksPrograms.NeverWaited.class);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).containsPattern("weft: rank 0 of 2: 5 requests were started and never waited: "
                + "isend\\(1 x i32\\) on 'world' to rank 1 tag 0 at FakeRanksPrograms.java:(\\d+); isend\\(1 x i32\\) "
                + "on 'world' to rank 1 tag 0 at FakeRanksPrograms.java:\\1; isend\\(1 x i32\\) on 'world' to rank 1 "
                + "tag 0 at FakeRanksPrograms.java:\\1; and 2 more \\(")
                .doesNotContain("rank 1 of 2:");
    }

    @Test
    void aRankRunningOutOfHeapEndsTheJobNamingIt() throws Exception {
        List<String> flags = new ArrayList<>(Mpirun.JVM_FLAGS);
        flags.add("-Xmx128m");
        Mpirun.Result r = Mpirun.plain(TIMEOUT, flags, FakeRanks.class, "2",
                FakeRanksPrograms.HeapHog.class.getName());
        assertThat(r.timedOut()).as(r.output()).isFalse();
        assertThat(r.exitCode()).as(r.output()).isEqualTo(1);
        assertThat(r.output()).containsPattern("(?m)^rank \\d failed: java.lang.OutOfMemoryError: Java heap space$")
                .containsPattern("weft: ranks? [01](, 1)? ran out of memory: fake ranks share this JVM's heap \\(\\d+ "
                        + "MiB, set with -Xmx\\)")
                .doesNotContain("Exception in thread");
    }

    @Test
    void systemExitZeroOnEveryRankExitsZero() throws Exception {
        Mpirun.Result r = run(3, FakeRanksPrograms.EveryRankExits.class);
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).doesNotContain("still running");
    }

    @Test
    void systemExitOnTheOnlyRankStillRunningKeepsItsStatus() throws Exception {
        Mpirun.Result r = run(1, FakeRanksPrograms.ExitAlone.class);
        assertThat(r.exitCode()).as(r.output()).isEqualTo(3);
        assertThat(r.output()).doesNotContain("still running");
    }

    @Test
    void aFailedRankPrintsItsStackTrace() throws Exception {
        Mpirun.Result r = run(2, FakeRanksPrograms.RankThrows.class);
        assertThat(r.exitCode()).as(r.output()).isEqualTo(1);
        assertThat(r.output()).contains("rank 1 failed: java.lang.IllegalStateException: rank 1 gave up\n",
                        "\tat dev.weft.it.fake.FakeRanksPrograms$RankThrows.computeSomething("
                                + "FakeRanksPrograms.java:",
                        "\tat dev.weft.it.fake.FakeRanksPrograms$RankThrows.main(FakeRanksPrograms.java:")
                .containsPattern("rank 0 failed: dev.weft.backends.comm.CommException: FakeRanksPrograms.java:\\d+: "
                        + "recv\\(1 x i32\\) on 'world' from rank 1 tag 0 cannot complete: world rank 1 failed: "
                        + "IllegalStateException: rank 1 gave up\n")
                .contains("\tcaused by the failure of rank 1 (below)");
    }
}
