package dev.weft.backends.comm.flight;

import dev.weft.prim.CommOp;
import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.comm.fake.RanksFailedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.weft.backends.comm.TestBuffers.at;
import static dev.weft.backends.comm.TestBuffers.filler;
import static dev.weft.backends.comm.TestBuffers.of;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The flight recorder on fake ranks: what it records, and {@code WEFT_COMM_TIMEOUT}. */
class FlightFakeRanksTest {
    @Test
    void recordsEagerBoundAndNonBlockingOperationsWithTheirStates() {
        Map<Integer, List<FlightEntry>> recorded = new ConcurrentHashMap<>();
        FakeWorld.run(2, Duration.ofSeconds(30), world -> {
            FlightRecorder recorder = new FlightRecorder(world.rank(), 2, 16, false);
            Communicator comm = FlightCommunicator.of(world, world.privateDup(at(9)), recorder);
            comm.allreduce(of(DType.F32, 1, 2), filler(DType.F32, 2), DType.F32, 2, RuntimeReduceOp.SUM, at(10));
            PendingRequest r = world.rank() == 0
                    ? comm.isend(of(DType.I32, 7), DType.I32, 1, 1, 3, at(11))
                    : comm.irecv(filler(DType.I32, 1), DType.I32, 1, 0, 3, at(11));
            comm.wait(r, at(12));
            Communicator.BufferPairCall bound = comm.bindAllreduce(DType.F64, 1, RuntimeReduceOp.MAX, at(13));
            bound.accept(of(DType.F64, 1), filler(DType.F64, 1));
            bound.accept(of(DType.F64, 2), filler(DType.F64, 1));
            Communicator half = comm.split(0, 0, at(14));
            half.barrier(at(15));
            assertThrows(CommException.class, () -> comm.send(of(DType.F32, 1), DType.F32, 1, 5, 0, at(16)));
            recorded.put(world.rank(), recorder.snapshot());
        });
        List<FlightEntry> e = recorded.get(1);
        assertThat(e).extracting(x -> x.call().op()).containsExactly(CommOp.Kind.ALLREDUCE, CommOp.Kind.IRECV,
                CommOp.Kind.WAIT_IRECV, CommOp.Kind.ALLREDUCE, CommOp.Kind.ALLREDUCE, CommOp.Kind.SPLIT, CommOp.Kind.BARRIER,
                CommOp.Kind.SEND);
        assertThat(e).extracting(x -> x.call().where().line()).containsExactly(10, 11, 12, 13, 13, 14, 15, 16);
        assertThat(e).extracting(FlightEntry::collective).containsExactly(1L, -1L, -1L, 2L, 3L, 4L, 1L, -1L);
        assertThat(e).extracting(FlightEntry::state).containsExactly(FlightState.COMPLETED, FlightState.COMPLETED,
                FlightState.COMPLETED, FlightState.COMPLETED, FlightState.COMPLETED, FlightState.COMPLETED,
                FlightState.COMPLETED, FlightState.FAILED);
        assertThat(e.get(2).posted()).isEqualTo(e.get(1).seq());
        assertThat(e.get(3).call().args()).isEqualTo("allreduce f64[1] MAX");
        assertThat(e.get(6).call().comm()).isEqualTo("world.split(0)#0");
        assertThat(recorded.get(0).get(1).call().args()).isEqualTo("isend i32[1] to 1 tag 3");
    }

    @Test
    void aRankBlockedPastTheTimeoutPrintsItsRecorderAndFailsWhileTheOtherComputes(@TempDir Path dir)
            throws IOException {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        System.setProperty("weft.comm.timeout", "2");
        System.setProperty("weft.flight.dir", dir.toString());
        AtomicBoolean rank0Failed = new AtomicBoolean();
        long start = System.nanoTime();
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(2,
                    Duration.ofSeconds(60), world -> {
                        world.allreduce(of(DType.F32, 1, 2, 3, 4), filler(DType.F32, 4), DType.F32, 4, RuntimeReduceOp.SUM,
                                at(20));
                        if (world.rank() == 0) {
                            try {
                                world.barrier(at(21));
                            } catch (CommException x) {
                                rank0Failed.set(true);
                                throw x;
                            }
                        } else {
                            // computes (is in no communication) until rank 0 has failed
                            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                            while (!rank0Failed.get() && System.nanoTime() < deadline) {
                                Thread.sleep(50);
                            }
                        }
                    }));
            assertThat(e.failures()).containsOnlyKeys(0);
            assertThat(e.failures().get(0)).isInstanceOf(CommException.class).hasMessageStartingWith(
                    "User.java:21: barrier on 'world' has been blocked for ").hasMessageEndingWith(
                    " s, past WEFT_COMM_TIMEOUT=2 s");
        } finally {
            System.setErr(saved);
            System.clearProperty("weft.comm.timeout");
            System.clearProperty("weft.flight.dir");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(40));
        String printed = err.toString(StandardCharsets.UTF_8);
        assertThat(printed).contains("weft: rank 0 of 2: barrier on 'world' at User.java:21 has been blocked for ",
                "past WEFT_COMM_TIMEOUT=2 s; failing the rank",
                "weft: flight recorder of rank 0 of 2 (its last 2 communication operations, oldest first):")
                .containsPattern("#1 .* completed +world +#1 +allreduce f32\\[4\\] SUM +User.java:20")
                .containsPattern("#2 .* started +world +#2 +barrier +User.java:21");
        List<FlightDump> dumps = List.of(FlightFile.read(dir.resolve("flight-rank0.jsonl")),
                FlightFile.read(dir.resolve("flight-rank1.jsonl")));
        assertThat(String.join("\n", FlightAnalysis.report(dumps))).contains(
                "rank 0 (timeout): in barrier on 'world' (collective #2) at User.java:21",
                "on 'world' at collective #2:", "rank 1 has not called it");
    }
}
