package dev.weft.backends.comm.flight;

import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FlightRecorderTest {
    private static FlightCall call(CommOp.Kind op, int line) {
        return new FlightCall(op, "world", 0, 2, -1, -1, -1, -1, "f32", 4, null,
                new SourceLocation("A", "main", "A.java", line));
    }

    @Test
    void keepsTheLastOperationsOldestFirstInAPowerOfTwoRing() {
        FlightRecorder r = new FlightRecorder(0, 2, 5, false);
        assertThat(r.capacity()).isEqualTo(8);
        for (int i = 1; i <= 20; i++) {
            r.completed(r.begin(call(CommOp.Kind.ALLREDUCE, i), i, -1, FlightState.STARTED));
        }
        List<FlightEntry> kept = r.snapshot();
        assertThat(kept).extracting(FlightEntry::seq).containsExactly(13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L);
        assertThat(kept).extracting(e -> e.call().where().line()).containsExactly(13, 14, 15, 16, 17, 18, 19, 20);
        assertThat(kept).extracting(FlightEntry::collective).containsExactly(13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L);
        assertThat(kept).allMatch(e -> e.state() == FlightState.COMPLETED && e.endMillis() >= e.startMillis());
    }

    @Test
    void aCallBoundAgainKeepsItsNumberAndTheRegistryStaysBounded() {
        FlightRecorder r = new FlightRecorder(0, 2, 4, false);
        int first = r.register(call(CommOp.Kind.ALLREDUCE, 7));
        assertThat(r.register(call(CommOp.Kind.ALLREDUCE, 7))).isEqualTo(first);
        assertThat(r.register(call(CommOp.Kind.ALLREDUCE, 8))).isNotEqualTo(first);
        int line = 9;
        while (r.register(call(CommOp.Kind.ALLREDUCE, line)) >= 0) {
            line++;
        }
        assertThat(line - 7).isEqualTo(FlightRecorder.REGISTERED);
        assertThat(r.register(call(CommOp.Kind.ALLREDUCE, 7))).isEqualTo(first);
        r.completed(r.begin(first, 1));
        assertThat(r.snapshot()).extracting(e -> e.call().where().line()).containsExactly(7);
    }

    @Test
    void anEmptyRecorderHasNothing() {
        FlightRecorder r = new FlightRecorder(1, 2, 4, false);
        assertThat(r.snapshot()).isEmpty();
        assertThat(r.oldestStarted()).isEqualTo(-1);
    }

    @Test
    void statesFollowTheOperation() {
        FlightRecorder r = new FlightRecorder(0, 2, 16, false);
        long posted = r.begin(call(CommOp.Kind.IRECV, 1), -1, -1, FlightState.POSTED);
        long failed = r.begin(call(CommOp.Kind.SEND, 2), -1, -1, FlightState.STARTED);
        r.end(failed, FlightState.FAILED);
        long waiting = r.begin(call(CommOp.Kind.WAIT_IRECV, 3), -1, posted, FlightState.STARTED);
        assertThat(r.snapshot()).extracting(FlightEntry::state)
                .containsExactly(FlightState.POSTED, FlightState.FAILED, FlightState.STARTED);
        assertThat(r.snapshot().get(2).posted()).isEqualTo(posted);
        assertThat(r.oldestStarted()).isEqualTo(r.snapshot().get(2).startMillis());
        r.completed(waiting);
        r.completed(posted);
        assertThat(r.snapshot()).extracting(FlightEntry::state)
                .containsExactly(FlightState.COMPLETED, FlightState.FAILED, FlightState.COMPLETED);
        assertThat(r.oldestStarted()).isEqualTo(-1);
    }

    @Test
    void endingAnOverwrittenOperationChangesNothing() {
        FlightRecorder r = new FlightRecorder(0, 2, 2, false);
        long first = r.begin(call(CommOp.Kind.ISEND, 1), -1, -1, FlightState.POSTED);
        r.begin(call(CommOp.Kind.BARRIER, 2), 1, -1, FlightState.STARTED);
        r.begin(call(CommOp.Kind.BARRIER, 3), 2, -1, FlightState.STARTED);
        r.completed(first);
        assertThat(r.snapshot()).extracting(FlightEntry::state).containsOnly(FlightState.STARTED);
        assertThat(r.snapshot()).extracting(FlightEntry::seq).containsExactly(2L, 3L);
    }

    @Test
    void concurrentWritersEachGetTheirOwnSequenceNumbers() throws Exception {
        FlightRecorder r = new FlightRecorder(0, 1, 64, true);
        int threads = 4;
        int each = 20_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> ts = IntStream.range(0, threads).mapToObj(t -> Thread.ofPlatform().start(() -> {
            try {
                go.await();
            } catch (InterruptedException e) {
                return;
            }
            for (int i = 0; i < each; i++) {
                r.completed(r.begin(call(CommOp.Kind.SEND, t), -1, -1, FlightState.STARTED));
            }
        })).toList();
        go.countDown();
        for (Thread t : ts) {
            t.join();
        }
        List<FlightEntry> kept = r.snapshot();
        assertThat(kept).hasSize(64);
        assertThat(kept.getLast().seq()).isEqualTo((long) threads * each);
        assertThat(kept).extracting(FlightEntry::seq).doesNotHaveDuplicates().isSorted();
    }

    @Test
    void capacityIsBounded() {
        assertThatThrownBy(() -> new FlightRecorder(0, 1, 0, false)).isInstanceOf(IllegalArgumentException.class);
    }
}
