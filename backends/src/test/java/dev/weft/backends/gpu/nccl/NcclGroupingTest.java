package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.lowering.ir.Op;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static dev.weft.backends.gpu.nccl.NcclFixture.config;
import static dev.weft.backends.gpu.nccl.NcclFixture.op;
import static dev.weft.backends.gpu.nccl.NcclFixture.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Blocking point-to-point calls against a stub that enforces NCCL's grouping rules (see {@code nccl_stub.c}): a
 * send to self needs its receive in the same group, and a send blocks its rank's GPU until the peer's matching
 * receive runs. Each rule is shown to catch the grouping Weft had before (every blocking call a group of its own).
 */
class NcclGroupingTest {
    private static final long STREAM = 4242;

    @BeforeEach
    void forgetEarlierTransfers() {
        NcclFixture.stub().control("stub_p2p_reset");
    }

    private static Op send(int peer, int line) {
        return op("send", line, config("peer", peer, "tag", 0, "dtype", "f32", "count", 4), List.of(t(DType.F32, 4)),
                List.of());
    }

    private static Op recv(int peer, int line) {
        return op("recv", line, config("peer", peer, "tag", 0, "dtype", "f32", "count", 4), List.of(),
                List.of(t(DType.F32, 4)));
    }

    /** The transfers that would never finish on real GPUs. */
    private static List<String> stuck() {
        return NcclFixture.stub().lines("stub_stuck_ops");
    }

    @Test
    void aSendToSelfAndTheReceiveAfterItAreOneGroup() {
        Op send = send(0, 10), recv = recv(0, 11);
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(send, recv));
            f.call(send, new long[] {100}, new long[] {}, STREAM);
            f.call(recv, new long[] {}, new long[] {200}, STREAM);
            NcclCommunicator.flush();
            assertThat(f.nccl()).containsExactly(
                    "ncclGroupStart",
                    "ncclSend buf=100 count=4 datatype=7 peer=0 comm=0 stream=4242",
                    "ncclRecv buf=200 count=4 datatype=7 peer=0 comm=0 stream=4242",
                    "ncclGroupEnd",
                    "ncclCommGetAsyncError comm=0");
        });
        assertThat(stuck()).isEmpty();
    }

    @Test
    void aSendToSelfInAGroupOfItsOwnIsInvalidUsage() {
        Op send = send(0, 10);
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(send));
            f.call(send, new long[] {100}, new long[] {}, STREAM);
            assertThatThrownBy(NcclCommunicator::flush)
                    .isInstanceOf(CommException.class)
                    .hasMessage("Prog.java:10: flush: ncclGroupEnd failed for the group of send at Prog.java:10: "
                            + "stub error 5 (ncclInvalidUsage = 5)");
        });
    }

    @Test
    void twoRanksThatBothSendBeforeTheyReceiveDoNotHang() {
        FakeWorld.run(2, world -> {
            int peer = 1 - world.rank();
            Op send = send(peer, 20), recv = recv(peer, 21);
            NcclFixture f = new NcclFixture(world, List.of(send, recv));
            f.call(send, new long[] {100}, new long[] {}, STREAM);
            f.call(recv, new long[] {}, new long[] {200}, STREAM);
            NcclCommunicator.flush();
        });
        assertThat(stuck()).isEmpty();
    }

    @Test
    void sendsInGroupsOfTheirOwnBeforeTheReceivesHang() {
        FakeWorld.run(2, world -> {
            int peer = 1 - world.rank();
            Op send = send(peer, 20), recv = recv(peer, 21);
            NcclFixture f = new NcclFixture(world, List.of(send, recv));
            f.call(send, new long[] {100}, new long[] {}, STREAM);
            NcclCommunicator.flush();
            f.call(recv, new long[] {}, new long[] {200}, STREAM);
            NcclCommunicator.flush();
        });
        assertThat(stuck()).containsExactlyInAnyOrder("rank 0 send to 1 count 4", "rank 0 recv from 1 count 4",
                "rank 1 send to 0 count 4", "rank 1 recv from 0 count 4");
    }
}
