package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.PendingRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static dev.weft.backends.comm.TestBuffers.at;
import static dev.weft.backends.comm.TestBuffers.filler;
import static dev.weft.backends.comm.TestBuffers.of;
import static dev.weft.backends.comm.TestBuffers.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FakePointToPointTest {
    @Test
    void sendAndRecvCarryEveryDType() {
        double[] values = {3, -1, 0, 7, 1, -5, 2};
        FakeWorld.run(2, world -> {
            for (DType t : DType.values()) {
                double[] expected = t == DType.BOOL ? new double[] {1, 1, 0, 1, 1, 1, 1} : values;
                if (world.rank() == 0) {
                    world.send(of(t, values), t, 7, 1, 0, at(10));
                } else {
                    MemorySegment buf = filler(t, 7);
                    world.recv(buf, t, 7, 0, 0, at(11));
                    assertThat(read(buf, t, 7)).as("%s", t).containsExactly(expected);
                }
            }
        });
    }

    @Test
    void recvMatchesByTagOutOfOrder() {
        FakeWorld.run(2, world -> {
            if (world.rank() == 0) {
                PendingRequest one = world.isend(of(DType.I32, 1), DType.I32, 1, 1, 1, at(20));
                PendingRequest two = world.isend(of(DType.I32, 2), DType.I32, 1, 1, 2, at(21));
                world.waitAll(List.of(one, two), at(24));
            } else {
                MemorySegment two = filler(DType.I32, 1);
                MemorySegment one = filler(DType.I32, 1);
                world.recv(two, DType.I32, 1, 0, 2, at(22));
                world.recv(one, DType.I32, 1, 0, 1, at(23));
                assertThat(read(two, DType.I32, 1)).containsExactly(2);
                assertThat(read(one, DType.I32, 1)).containsExactly(1);
            }
        });
    }

    @Test
    void messagesBetweenOnePairArriveInOrderWhateverOtherSendersDo() {
        FakeWorld.run(3, world -> {
            if (world.rank() == 0) {
                for (int src : new int[] {2, 1}) {
                    for (int k = 0; k < 4; k++) {
                        MemorySegment buf = filler(DType.I64, 1);
                        world.recv(buf, DType.I64, 1, src, 5, at(30));
                        assertThat(read(buf, DType.I64, 1)).containsExactly(src * 100 + k);
                    }
                }
            } else {
                for (int k = 0; k < 4; k++) {
                    world.send(of(DType.I64, world.rank() * 100 + k), DType.I64, 1, 0, 5, at(31));
                }
            }
        });
    }

    @Test
    void postedReceivesMatchInPostingOrder() {
        FakeWorld.run(2, world -> {
            if (world.rank() == 0) {
                MemorySegment first = filler(DType.F64, 2);
                MemorySegment second = filler(DType.F64, 2);
                MemorySegment other = filler(DType.F64, 2);
                PendingRequest a = world.irecv(first, DType.F64, 2, 1, 3, at(40));
                PendingRequest b = world.irecv(second, DType.F64, 2, 1, 3, at(41));
                PendingRequest c = world.irecv(other, DType.F64, 2, 1, 4, at(42));
                world.barrier(at(43));
                world.waitAll(List.of(c, b, a), at(44));
                assertThat(read(first, DType.F64, 2)).containsExactly(1.5, 2.5);
                assertThat(read(second, DType.F64, 2)).containsExactly(3.5, 4.5);
                assertThat(read(other, DType.F64, 2)).containsExactly(-1, -2);
            } else {
                world.barrier(at(45));
                MemorySegment buf = of(DType.F64, -1, -2);
                PendingRequest r4 = world.isend(buf, DType.F64, 2, 0, 4, at(46));
                PendingRequest r3a = world.isend(of(DType.F64, 1.5, 2.5), DType.F64, 2, 0, 3, at(47));
                PendingRequest r3b = world.isend(of(DType.F64, 3.5, 4.5), DType.F64, 2, 0, 3, at(48));
                world.wait(r3b, at(49));
                world.wait(r4, at(49));
                world.wait(r3a, at(49));
            }
        });
    }

    @Test
    void waitingARequestTwiceIsAnError() {
        assertThatThrownBy(() -> FakeWorld.run(1, world -> {
            PendingRequest r = world.isend(of(DType.I32, 1), DType.I32, 1, 0, 0, at(50));
            world.recv(filler(DType.I32, 1), DType.I32, 1, 0, 0, at(51));
            world.wait(r, at(52));
            world.wait(r, at(53));
        })).cause().isInstanceOf(CommException.class)
                .hasMessage("User.java:53: wait on 'world': isend(1 x i32) on 'world' to rank 0 tag 0 at User.java:50 "
                        + "was already waited at User.java:52");
    }

    @Test
    void waitingAnotherCommunicatorsRequestIsAnError() {
        assertThatThrownBy(() -> FakeWorld.run(1, world -> {
            var other = world.dup(at(60));
            PendingRequest r = other.irecv(filler(DType.I32, 1), DType.I32, 1, 0, 0, at(61));
            world.wait(r, at(62));
        })).cause().isInstanceOf(CommException.class)
                .hasMessage("User.java:62: wait on 'world' (rank 0): irecv(1 x i32) on 'world.dup#0' from rank 0 "
                        + "tag 0 at User.java:61 was not started by this communicator handle");
    }

    @Test
    void sendThenRecvAgainstRecvThenSendCompletes() {
        // the mpi4jax ordering case: rank 1's receive is posted before its send, so rank 0's send completes
        FakeWorld.run(2, world -> {
            MemorySegment got = filler(DType.F32, 3);
            if (world.rank() == 0) {
                world.send(of(DType.F32, 1, 2, 3), DType.F32, 3, 1, 0, at(70));
                world.recv(got, DType.F32, 3, 1, 0, at(71));
                assertThat(read(got, DType.F32, 3)).containsExactly(4, 5, 6);
            } else {
                world.recv(got, DType.F32, 3, 0, 0, at(72));
                world.send(of(DType.F32, 4, 5, 6), DType.F32, 3, 0, 0, at(73));
                assertThat(read(got, DType.F32, 3)).containsExactly(1, 2, 3);
            }
        });
    }

    @Test
    void sendrecvShiftsARing() {
        int n = 3;
        FakeWorld.run(n, world -> {
            int me = world.rank();
            MemorySegment got = filler(DType.I32, 2);
            world.sendrecv(of(DType.I32, me, 10 * me), DType.I32, 2, (me + 1) % n, 9,
                    got, 2, (me + n - 1) % n, 9, at(80));
            int left = (me + n - 1) % n;
            assertThat(read(got, DType.I32, 2)).containsExactly(left, 10 * left);
        });
    }

    @Test
    void aRankCanSendToItself() {
        FakeWorld.run(1, world -> {
            PendingRequest sent = world.isend(of(DType.I64, 42), DType.I64, 1, 0, 0, at(90));
            MemorySegment got = filler(DType.I64, 1);
            world.recv(got, DType.I64, 1, 0, 0, at(91));
            world.wait(sent, at(92));
            assertThat(read(got, DType.I64, 1)).containsExactly(42);
        });
    }

    @Test
    void sizeMismatchNamesBothSides() {
        RanksFailedException e = assertThrows(RanksFailedException.class,
                () -> FakeWorld.run(2, world -> {
                    if (world.rank() == 0) {
                        world.send(of(DType.F32, 1, 2, 3), DType.F32, 3, 1, 6, at(100));
                    } else {
                        world.recv(filler(DType.F32, 4), DType.F32, 4, 0, 6, at(101));
                    }
                }));
        assertThat(e.failures()).containsOnlyKeys(1);
        assertThat(e.failures().get(1)).hasMessage("User.java:101: message size mismatch on 'world': rank 1 "
                + "receives 4 x f32 from rank 0 tag 6 at User.java:101, but rank 0 sent 3 x f32 to it at User.java:100");
    }

    @Test
    void dtypeMismatchIsASizeMismatch() {
        assertThatThrownBy(() -> FakeWorld.run(2, world -> {
            if (world.rank() == 0) {
                world.send(of(DType.I32, 1), DType.I32, 1, 1, 0, at(110));
            } else {
                world.recv(filler(DType.F32, 1), DType.F32, 1, 0, 0, at(111));
            }
        })).hasMessageContaining("rank 1 receives 1 x f32").hasMessageContaining("rank 0 sent 1 x i32");
    }

    @Test
    void invalidPeersAndTagsNameTheCall() {
        FakeWorld.run(2, world -> {
            MemorySegment buf = of(DType.I32, 1);
            assertThatThrownBy(() -> world.send(buf, DType.I32, 1, 2, 0, at(120)))
                    .isInstanceOf(CommException.class)
                    .hasMessage("User.java:120: send on 'world': destination rank 2 is outside [0, 2)");
            assertThatThrownBy(() -> world.irecv(buf, DType.I32, 1, -1, 0, at(121)))
                    .hasMessage("User.java:121: irecv on 'world': source rank -1 is outside [0, 2)");
            assertThatThrownBy(() -> world.isend(buf, DType.I32, 1, 0, -3, at(122)))
                    .hasMessage("User.java:122: isend on 'world': tag -3 is negative");
            assertThatThrownBy(() -> world.bcast(buf, DType.I32, 1, 5, at(123)))
                    .hasMessage("User.java:123: bcast on 'world': root rank 5 is outside [0, 2)");
            assertThatThrownBy(() -> world.recv(buf, DType.I32, 2, 0, 0, at(124)))
                    .hasMessage("User.java:124: recv on 'world': receive buffer of 4 bytes cannot hold 2 x i32 (8 bytes)");
        });
    }
}
