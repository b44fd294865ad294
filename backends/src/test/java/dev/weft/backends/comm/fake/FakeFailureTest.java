package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static dev.weft.backends.comm.TestBuffers.at;
import static dev.weft.backends.comm.TestBuffers.filler;
import static dev.weft.backends.comm.TestBuffers.of;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FakeFailureTest {
    @Test
    void bothRanksReceivingFirstDeadlockAndBothReportIt() {
        long start = System.nanoTime();
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(2, world -> {
            int peer = 1 - world.rank();
            world.recv(filler(DType.F32, 4), DType.F32, 4, peer, 0, at(10 + world.rank()));
            world.send(of(DType.F32, 1, 2, 3, 4), DType.F32, 4, peer, 0, at(20));
        }));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
        assertThat(e.failures()).containsOnlyKeys(0, 1);
        String report = """
                deadlock: every live rank is blocked and none can proceed
                  rank 0: blocked in recv(4 x f32) on 'world' from rank 1 tag 0 at User.java:10
                  rank 1: blocked in recv(4 x f32) on 'world' from rank 0 tag 0 at User.java:11""";
        for (int r = 0; r < 2; r++) {
            assertThat(e.failures().get(r)).isInstanceOf(DeadlockException.class)
                    .hasMessage("User.java:" + (10 + r) + ": " + report);
            assertThat(((DeadlockException) e.failures().get(r)).report()).isEqualTo(report);
        }
    }

    @Test
    void deadlockReportShowsCollectivesAndEndedRanks() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(4, world -> {
            Communicator pair = world.split(world.rank() / 2, 0, at(29));
            switch (world.rank()) {
                case 0 -> pair.barrier(at(30));
                case 1 -> world.recv(filler(DType.I32, 1), DType.I32, 1, 0, 7, at(31));
                case 2 -> throw new IllegalStateException("unrelated");
                default -> { }
            }
        }));
        assertThat(e.failures()).containsOnlyKeys(0, 1, 2);
        assertThat(e.failures().get(0)).isInstanceOf(DeadlockException.class);
        assertThat(((DeadlockException) e.failures().get(1)).report()).isEqualTo("""
                deadlock: every live rank is blocked and none can proceed
                  rank 0: blocked in barrier on 'world.split(0)#0' (collective #1) waiting for rank 1 at User.java:30
                  rank 1: blocked in recv(1 x i32) on 'world' from rank 0 tag 7 at User.java:31
                  rank 2: failed: IllegalStateException: unrelated
                  rank 3: finished""");
    }

    @Test
    void failuresCascadeAlongTheChainOfWaits() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(3, world -> {
            switch (world.rank()) {
                case 0 -> world.recv(filler(DType.I32, 1), DType.I32, 1, 1, 0, at(35));
                case 1 -> world.recv(filler(DType.I32, 1), DType.I32, 1, 2, 0, at(36));
                default -> throw new IllegalStateException("root cause");
            }
        }));
        assertThat(e.getCause()).hasMessage("root cause");
        assertThat(e.failures().get(1)).hasMessage("User.java:36: recv(1 x i32) on 'world' from rank 2 tag 0 "
                + "cannot complete: world rank 2 failed: IllegalStateException: root cause");
        assertThat(e.failures().get(0)).hasMessageStartingWith("User.java:35: recv(1 x i32) on 'world' from rank 1 "
                + "tag 0 cannot complete: world rank 1 failed: CommException: User.java:36");
    }

    @Test
    void aFailedRankFailsThePeersWaitingForIt() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(3, world -> {
            if (world.rank() == 2) {
                throw new IllegalStateException("boom");
            }
            world.allreduce(of(DType.F64, 1), filler(DType.F64, 1), DType.F64, 1, RuntimeReduceOp.SUM, at(40));
        }));
        assertThat(e).hasMessageStartingWith("3 of 3 ranks failed")
                .hasMessageContaining("rank 2: IllegalStateException: boom");
        assertThat(e.getCause()).isInstanceOf(IllegalStateException.class).hasMessage("boom");
        for (int r = 0; r < 2; r++) {
            assertThat(e.failures().get(r)).isInstanceOf(CommException.class)
                    .hasMessageStartingWith("User.java:40: allreduce(SUM, 1 x f64) on 'world' (collective #1)")
                    .hasMessageEndingWith("cannot complete: world rank 2 failed: IllegalStateException: boom")
                    .hasCause(e.getCause());
        }
    }

    @Test
    void receivingFromAFinishedRankFailsInsteadOfHanging() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(3, world -> {
            if (world.rank() == 0) {
                world.recv(filler(DType.I32, 1), DType.I32, 1, 1, 0, at(50));
            } else if (world.rank() == 2) {
                Thread.sleep(200);
            }
        }));
        assertThat(e.failures()).containsOnlyKeys(0);
        assertThat(e.failures().get(0)).hasMessage("User.java:50: recv(1 x i32) on 'world' from rank 1 tag 0 "
                + "cannot complete: world rank 1 has finished");
    }

    @Test
    void aMessageSentBeforeFinishingIsStillReceived() {
        FakeWorld.run(2, world -> {
            if (world.rank() == 1) {
                world.send(of(DType.I32, 5), DType.I32, 1, 0, 0, at(55));
            } else {
                Thread.sleep(100);
                world.recv(filler(DType.I32, 1), DType.I32, 1, 1, 0, at(56));
            }
        });
    }

    @Test
    void differentCollectivesAreAMismatchOnEveryRank() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(2, world -> {
            if (world.rank() == 0) {
                world.allreduce(of(DType.F32, 1), filler(DType.F32, 1), DType.F32, 1, RuntimeReduceOp.SUM, at(60));
            } else {
                world.bcast(of(DType.F32, 1), DType.F32, 1, 0, at(61));
            }
        }));
        // whichever rank arrived first is the reference the other is compared with
        String mismatch = e.failures().get(0).getMessage().substring("User.java:60: ".length());
        assertThat(mismatch).isIn(
                "collective mismatch on 'world' (collective #1): rank 1 called bcast(root 0, 1 x f32) at User.java:61, "
                        + "but rank 0 called allreduce(SUM, 1 x f32) at User.java:60",
                "collective mismatch on 'world' (collective #1): rank 0 called allreduce(SUM, 1 x f32) at User.java:60, "
                        + "but rank 1 called bcast(root 0, 1 x f32) at User.java:61");
        assertThat(e.failures().get(0)).isInstanceOf(CommException.class).hasMessage("User.java:60: " + mismatch);
        assertThat(e.failures().get(1)).isInstanceOf(CommException.class).hasMessage("User.java:61: " + mismatch);
    }

    @Test
    void differentRootsOrCountsAreAMismatch() {
        for (int[] countAndRoot : new int[][] {{3, 1}, {2, 0}}) {
            RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(3, world -> {
                boolean odd = world.rank() == 2;
                world.bcast(filler(DType.I64, 3), DType.I64, odd ? countAndRoot[0] : 3, odd ? countAndRoot[1] : 0,
                        at(70));
            }));
            assertThat(e.failures()).containsOnlyKeys(0, 1, 2);
            assertThat(e.failures().values()).allSatisfy(t -> assertThat(t)
                    .hasMessageContaining("collective mismatch on 'world' (collective #1)")
                    .hasMessageContaining("bcast(root 0, 3 x i64)")
                    .hasMessageContaining("bcast(root %d, %d x i64)", countAndRoot[1], countAndRoot[0]));
        }
    }

    @Test
    void watchdogFailsEveryRankWithTheStateReport() {
        long start = System.nanoTime();
        RanksFailedException e = assertThrows(RanksFailedException.class, () ->
                FakeWorld.run(2, Duration.ofMillis(300), world -> {
                    if (world.rank() == 0) {
                        world.recv(filler(DType.I32, 1), DType.I32, 1, 1, 0, at(80));
                    } else {
                        Thread.sleep(60_000);
                    }
                }));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        assertThat(e.failures().get(0)).isInstanceOf(CommException.class).hasMessage("""
                User.java:80: fake world timed out after 0.3 s (set -Dweft.fake.timeout=<seconds> to change)
                  rank 0: blocked in recv(1 x i32) on 'world' from rank 1 tag 0 at User.java:80
                  rank 1: running""");
        assertThat(e.failures().get(1)).isInstanceOf(InterruptedException.class);
    }
}
