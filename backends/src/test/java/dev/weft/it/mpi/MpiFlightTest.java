package dev.weft.it.mpi;

import dev.weft.backends.cli.Doctor;
import dev.weft.backends.comm.flight.FlightAnalysis;
import dev.weft.backends.comm.flight.FlightDump;
import dev.weft.backends.comm.flight.FlightFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code WEFT_COMM_TIMEOUT} under {@code mpirun -np 2}: a rank blocked past it prints its flight recorder, the job
 * ends non-zero within seconds, every rank writes its file to {@code WEFT_FLIGHT_DIR}, and {@code bin/weft doctor}
 * names the divergence. The time bound is generous for a loaded machine: the failure it catches is a hang.
 */
class MpiFlightTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final Duration BOUND = Duration.ofSeconds(45);

    @BeforeAll
    static void requireMpirun() {
        assumeTrue(Mpirun.find().isPresent(), "mpirun is not installed");
    }

    @Test
    void aBarrierOnOneRankOnlyTimesOutWithTheRecorderAndTheDoctorNamesTheDivergence(@TempDir Path dir)
            throws Exception {
        Path flight = dir.resolve("flight");
        Mpirun.Result r = run(dir, flight, "barrier");
        assertThat(r.output()).containsPattern("weft: rank 0 of 2: barrier on 'world' at FlightPrograms.java:\\d+ "
                + "has been blocked for [0-9.]+ s, past WEFT_COMM_TIMEOUT=3 s; ending the job")
                .containsPattern("#1 .* completed +world +#1 +allreduce f32\\[4\\] SUM +FlightPrograms.java:\\d+")
                .containsPattern("#2 .* started +world +#2 +barrier +FlightPrograms.java:\\d+");
        Mpirun.Result doctor = Mpirun.plain(Duration.ofSeconds(60), Doctor.class, flight.toString());
        assertThat(doctor.exitCode()).as(doctor.output()).isZero();
        assertThat(doctor.output()).contains("2 of 2 ranks dumped their flight recorder",
                "rank 0 (timeout): in barrier on 'world' (collective #2) at FlightPrograms.java:",
                "rank 1 (end): in no communication",
                "on 'world' at collective #2:", "rank 0 calls barrier on 'world' (collective #2)",
                "rank 1 has not called it");
    }

    @Test
    void theRankThatTimesOutWritesItsTimeline(@TempDir Path dir) throws Exception {
        Path timeline = dir.resolve("timeline");
        Map<String, String> env = new HashMap<>(MpiFaultTest.crashReportsIn(dir));
        env.put("WEFT_COMM_TIMEOUT", "3");
        env.put("WEFT_TIMELINE", timeline.toString());
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, env, FlightPrograms.class, "barrier");
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        assertThat(r.output()).contains("past WEFT_COMM_TIMEOUT=3 s");
        assertThat(Files.readString(timeline.resolve("timeline-rank0.json")))
                .contains("\"name\":\"FlightPrograms.sum\"", "\"cat\":\"comm\"");
    }

    @Test
    void aReceiveWithTheWrongTagTimesOutAndIsUnmatched(@TempDir Path dir) throws Exception {
        Path flight = dir.resolve("flight");
        Mpirun.Result r = run(dir, flight, "tags");
        assertThat(r.output()).contains("recv f32[4] from 1 tag 5 on 'world' at FlightPrograms.java:");
        List<FlightDump> dumps = List.of(FlightFile.read(flight.resolve("flight-rank0.jsonl")),
                FlightFile.read(flight.resolve("flight-rank1.jsonl")));
        assertThat(String.join("\n", FlightAnalysis.report(dumps))).containsPattern(
                "rank 0 waits to receive from rank 1 tag 5 on 'world' at FlightPrograms.java:\\d+ \\(recv\\): rank 1 "
                        + "has no send to rank 0 with tag 5 pending; its recorded sends to rank 0: tag 6 at "
                        + "FlightPrograms.java:\\d+ \\(completed\\)");
    }

    /** Runs a flight program on two ranks with a 3 s timeout; it must fail within {@link #BOUND}, uncrashed. */
    private static Mpirun.Result run(Path dir, Path flight, String program) throws Exception {
        Map<String, String> env = new HashMap<>(MpiFaultTest.crashReportsIn(dir));
        env.put("WEFT_COMM_TIMEOUT", "3");
        env.put("WEFT_FLIGHT_DIR", flight.toString());
        Mpirun.Result r = Mpirun.run(2, TIMEOUT, env, FlightPrograms.class, program);
        assertThat(r.elapsed()).as("mpirun output:%n%s", r.output()).isLessThan(BOUND);
        assertThat(r.exitCode()).as(r.output()).isNotIn(0, -1);
        MpiFaultTest.assertNoCrash(dir, r);
        return r;
    }
}
