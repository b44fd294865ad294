package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.PendingRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static dev.weft.backends.comm.TestBuffers.at;
import static dev.weft.backends.comm.TestBuffers.filler;
import static dev.weft.backends.comm.TestBuffers.of;
import static dev.weft.backends.comm.TestBuffers.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Sends complete only once matched, as {@code MPI_Ssend}, unless they fit the eager limit. */
class FakeSynchronousSendTest {
    private static final int FOUR_MIB_OF_F32 = 1 << 20;

    /** Both ranks send {@code count} f32 to each other, then receive: correct only if sends are buffered. */
    private static void exchangeRelyingOnBuffering(int count) {
        FakeWorld.run(2, world -> {
            int peer = 1 - world.rank();
            world.send(filler(DType.F32, count), DType.F32, count, peer, 0, at(10 + world.rank()));
            world.recv(filler(DType.F32, count), DType.F32, count, peer, 0, at(20));
        });
    }

    @Test
    void anExchangeThatReliesOnBufferingDeadlocksWithAnExplanation() {
        RanksFailedException e = assertThrows(RanksFailedException.class,
                () -> exchangeRelyingOnBuffering(FOUR_MIB_OF_F32));
        assertThat(e.failures()).containsOnlyKeys(0, 1);
        String report = """
                deadlock: every live rank is blocked and none can proceed
                  rank 0: blocked in send(1048576 x f32) on 'world' to rank 1 tag 0 at User.java:10
                  rank 1: blocked in send(1048576 x f32) on 'world' to rank 0 tag 0 at User.java:11
                note: a blocked send waits for a matching receive: MPI does not promise to buffer sends, and fake \
                ranks buffer only those of at most -Dweft.fake.eagerLimit=<bytes> (now 0); exchange with sendrecv, \
                or start isend and irecv and then wait for both""";
        for (int r = 0; r < 2; r++) {
            assertThat(e.failures().get(r)).isInstanceOf(DeadlockException.class)
                    .hasMessage("User.java:" + (10 + r) + ": " + report);
        }
    }

    @Test
    void sendsUpToTheEagerLimitAreBuffered() {
        String before = System.getProperty("weft.fake.eagerLimit");
        System.setProperty("weft.fake.eagerLimit", "64");
        try {
            exchangeRelyingOnBuffering(16);
            RanksFailedException e = assertThrows(RanksFailedException.class, () -> exchangeRelyingOnBuffering(17));
            assertThat(e.failures().get(0)).isInstanceOf(DeadlockException.class)
                    .hasMessageContaining("rank 0: blocked in send(17 x f32)")
                    .hasMessageContaining("-Dweft.fake.eagerLimit=<bytes> (now 64)");
        } finally {
            if (before == null) {
                System.clearProperty("weft.fake.eagerLimit");
            } else {
                System.setProperty("weft.fake.eagerLimit", before);
            }
        }
    }

    @Test
    void aNegativeEagerLimitIsRejected() {
        System.setProperty("weft.fake.eagerLimit", "-1");
        try {
            assertThatThrownBy(() -> FakeWorld.run(1, world -> { })).isInstanceOf(WeftException.class)
                    .hasMessage("weft.fake.eagerLimit must be a whole number of at least 0, got '-1'");
        } finally {
            System.clearProperty("weft.fake.eagerLimit");
        }
    }

    @Test
    void sendrecvBothWaysCompletes() {
        FakeWorld.run(2, world -> {
            int me = world.rank(), peer = 1 - me;
            MemorySegment got = filler(DType.F32, FOUR_MIB_OF_F32);
            double[] mine = new double[FOUR_MIB_OF_F32];
            Arrays.fill(mine, me + 1);
            world.sendrecv(of(DType.F32, mine), DType.F32, FOUR_MIB_OF_F32, peer,
                    3, got, FOUR_MIB_OF_F32, peer, 3, at(30));
            double[] received = read(got, DType.F32, FOUR_MIB_OF_F32);
            assertThat(received[0]).isEqualTo(peer + 1);
            assertThat(received[FOUR_MIB_OF_F32 - 1]).isEqualTo(peer + 1);
        });
    }

    @Test
    void waitingAnIsendCompletesOnlyOnceTheReceiveIsPosted() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(2, world -> {
            if (world.rank() == 0) {
                PendingRequest r = world.isend(filler(DType.I32, 1), DType.I32, 1, 1, 5, at(40));
                world.wait(r, at(41));
                world.barrier(at(42));
            } else {
                world.barrier(at(43));
                world.recv(filler(DType.I32, 1), DType.I32, 1, 0, 5, at(44));
            }
        }));
        assertThat(((DeadlockException) e.failures().get(0)).report()).contains(
                "rank 0: blocked in wait for isend(1 x i32) on 'world' to rank 1 tag 5 at User.java:40 at User.java:41",
                "rank 1: blocked in barrier on 'world' (collective #1) waiting for rank 0 at User.java:43",
                "note: a blocked send waits for a matching receive");
    }

    @Test
    void sendingToARankThatFinishedFailsInsteadOfHanging() {
        RanksFailedException e = assertThrows(RanksFailedException.class, () -> FakeWorld.run(2, world -> {
            if (world.rank() == 0) {
                world.send(filler(DType.I64, 2), DType.I64, 2, 1, 0, at(50));
            }
        }));
        assertThat(e.failures()).containsOnlyKeys(0);
        assertThat(e.failures().get(0)).isInstanceOf(CommException.class).hasMessage("User.java:50: "
                + "send(2 x i64) on 'world' to rank 1 tag 0 cannot complete: world rank 1 has finished");
    }
}
