package dev.weft.backends.comm.fake;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.PendingRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static dev.weft.backends.comm.TestBuffers.at;
import static dev.weft.backends.comm.TestBuffers.filler;
import static dev.weft.backends.comm.TestBuffers.of;
import static dev.weft.backends.comm.TestBuffers.read;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class FakeSplitDupTest {
    @Test
    void splitOrdersByKeyThenRankAndCollectivesStayInTheGroup() {
        FakeWorld.run(4, world -> {
            int me = world.rank();
            // parity groups {0, 2} and {1, 3}, ranked by descending world rank
            Communicator half = world.split(me % 2, -me, at(10));
            assertThat(half.size()).isEqualTo(2);
            assertThat(half.rank()).isEqualTo(me < 2 ? 1 : 0);
            assertThat(half.name()).isEqualTo("world.split(" + me % 2 + ")#0");

            MemorySegment sum = filler(DType.I32, 1);
            half.allreduce(of(DType.I32, 10 + me), sum, DType.I32, 1, RuntimeReduceOp.SUM, at(11));
            assertThat(read(sum, DType.I32, 1)).containsExactly(me % 2 == 0 ? 10 + 12 : 11 + 13);

            MemorySegment gathered = filler(DType.I32, 2);
            half.allgather(of(DType.I32, me), gathered, DType.I32, 1, at(12));
            assertThat(read(gathered, DType.I32, 2)).containsExactly(me % 2 == 0 ? new double[] {2, 0} : new double[] {3, 1});
        });
    }

    @Test
    void splitWithEqualKeysKeepsRankOrderAndANegativeColorIsAnError() {
        FakeWorld.run(3, world -> {
            int me = world.rank();
            assertThatThrownBy(() -> world.split(-1, 0, at(19))).isInstanceOf(CommException.class)
                    .hasMessageStartingWith("User.java:19: split on 'world': color -1 is negative");
            Communicator sub = world.split(me == 1 ? world.size() : 0, 0, at(20));
            if (me == 1) {
                assertThat(sub.size()).isEqualTo(1);
            } else {
                assertThat(sub.size()).isEqualTo(2);
                assertThat(sub.rank()).isEqualTo(me / 2);
                MemorySegment buf = of(DType.F64, me == 0 ? 2.5 : 0);
                sub.bcast(buf, DType.F64, 1, 0, at(21));
                assertThat(read(buf, DType.F64, 1)).containsExactly(2.5);
            }
            world.barrier(at(22));
        });
    }

    @Test
    void pointToPointOnASubCommunicatorUsesItsRanks() {
        FakeWorld.run(4, world -> {
            Communicator upper = world.split(world.rank() / 2, world.rank(), at(30));
            MemorySegment got = filler(DType.I64, 1);
            if (upper.rank() == 0) {
                upper.send(of(DType.I64, world.rank()), DType.I64, 1, 1, 0, at(31));
            } else {
                upper.recv(got, DType.I64, 1, 0, 0, at(32));
                assertThat(read(got, DType.I64, 1)).containsExactly(world.rank() - 1);
            }
        });
    }

    @Test
    void dupHasItsOwnMessageSpace() {
        FakeWorld.run(2, world -> {
            Communicator copy = world.dup(at(40));
            assertThat(copy.name()).isEqualTo("world.dup#0");
            assertThat(world.dup(at(41)).name()).isEqualTo("world.dup#1");
            if (world.rank() == 0) {
                PendingRequest first = copy.isend(of(DType.I32, 1), DType.I32, 1, 1, 0, at(42));
                PendingRequest second = world.isend(of(DType.I32, 2), DType.I32, 1, 1, 0, at(43));
                world.wait(second, at(46));
                copy.wait(first, at(47));
            } else {
                MemorySegment got = filler(DType.I32, 1);
                world.recv(got, DType.I32, 1, 0, 0, at(44));
                assertThat(read(got, DType.I32, 1)).containsExactly(2);
                copy.recv(got, DType.I32, 1, 0, 0, at(45));
                assertThat(read(got, DType.I32, 1)).containsExactly(1);
            }
        });
    }

    @Test
    void aFreedCommunicatorCannotBeUsedAndTheWorldCannotBeFreed() {
        FakeWorld.run(1, world -> {
            Communicator copy = world.dup(at(50));
            copy.free(at(51));
            assertThatThrownBy(() -> copy.barrier(at(52))).isInstanceOf(CommException.class)
                    .hasMessage("User.java:52: barrier on 'world.dup#0': the communicator was freed at User.java:51");
            assertThatThrownBy(() -> world.free(at(53)))
                    .hasMessage("User.java:53: free: the world communicator cannot be freed");
        });
    }
}
