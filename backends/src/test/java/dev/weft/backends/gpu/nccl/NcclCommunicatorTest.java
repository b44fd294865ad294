package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.RuntimeReduceOp;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.gpu.NativeStub;
import dev.weft.lowering.ir.Op;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static dev.weft.backends.gpu.nccl.NcclFixture.at;
import static dev.weft.backends.gpu.nccl.NcclFixture.config;
import static dev.weft.backends.gpu.nccl.NcclFixture.op;
import static dev.weft.backends.gpu.nccl.NcclFixture.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Creating NCCL communicators over a bootstrap communicator, and NCCL's errors as exceptions. */
class NcclCommunicatorTest {
    @Test
    void rankZerosUniqueIdReachesEveryRankOverTheBootstrap() {
        NativeStub stub = NcclFixture.stub();
        String[] initLines = new String[2];
        List<List<String>> logs = List.of(new java.util.ArrayList<>(), new java.util.ArrayList<>());
        FakeWorld.run(2, world -> {
            stub.reset();
            DeviceLog device = new DeviceLog();
            try (NcclCommunicator c = NcclCommunicator.create(NcclLibrary.load(), device, device, world, 0, at(1))) {
                assertThat(c.rank()).isEqualTo(world.rank());
                assertThat(c.size()).isEqualTo(2);
            }
            logs.get(world.rank()).addAll(stub.calls());
        });
        assertThat(logs.get(0)).hasSize(3);
        assertThat(logs.get(0).getFirst()).isEqualTo("ncclGetUniqueId");
        assertThat(logs.get(1)).hasSize(2);
        for (int r = 0; r < 2; r++) {
            List<String> log = logs.get(r);
            initLines[r] = log.get(log.size() - 2);
            assertThat(initLines[r]).startsWith("ncclCommInitRank nranks=2 rank=" + r + " id=");
            assertThat(log.getLast()).isEqualTo("ncclCommDestroy comm=" + r);
        }
        String id0 = initLines[0].substring(initLines[0].indexOf("id=") + 3);
        String id1 = initLines[1].substring(initLines[1].indexOf("id=") + 3);
        assertThat(id0).hasSize(256).isEqualTo(id1);
        // The stub's id bytes are (seed * 37 + i) mod 256: consecutive bytes differ by one.
        int first = Integer.parseInt(id0.substring(0, 2), 16);
        assertThat(id0.substring(2, 4)).isEqualTo(String.format("%02x", (first + 1) & 0xff));
    }

    @Test
    void versionIsNcclsVersionCode() {
        NcclFixture.stub();
        assertThat(NcclLibrary.load().version()).isEqualTo(22703);
    }

    @Test
    void aMissingLibrarySaysHowToPointAtOne() {
        NcclFixture.stub();
        String saved = System.getProperty(NcclLibrary.LIBRARY_PROPERTY);
        System.setProperty(NcclLibrary.LIBRARY_PROPERTY, "/nonexistent/libnccl.so.2");
        try {
            assertThatThrownBy(NcclLibrary::load)
                    .hasMessageContaining("/nonexistent/libnccl.so.2")
                    .hasMessageContaining("weft.nccl.lib")
                    .hasMessageContaining("WEFT_NCCL_LIB");
        } finally {
            System.setProperty(NcclLibrary.LIBRARY_PROPERTY, saved);
        }
    }

    @Test
    void aFailedCallNamesTheOpTheLineAndNcclsError() {
        Op allreduce = op("allreduce", 42, config("reduce_op", "sum", "dtype", "f32", "count", 3),
                List.of(t(DType.F32, 3)), List.of(t(DType.F32, 3)));
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(allreduce));
            f.stub.fail("ncclAllReduce", 4);
            assertThatThrownBy(() -> f.call(allreduce, new long[] {1}, new long[] {2}, 3))
                    .isInstanceOf(CommException.class)
                    .hasMessage("Prog.java:42: allreduce: ncclAllReduce failed: stub error 4 "
                            + "(ncclInvalidArgument = 4)");
        });
    }

    @Test
    void anAsyncErrorAbortsTheCommunicatorAndNamesTheOpAndLine() {
        Op bcast = op("bcast", 43, config("root", 0, "dtype", "i32", "count", 3), List.of(t(DType.I32, 3)),
                List.of(t(DType.I32, 3)));
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(bcast));
            f.stub.control("stub_async_error", 6);
            assertThatThrownBy(() -> f.call(bcast, new long[] {1}, new long[] {2}, 3))
                    .isInstanceOf(CommException.class)
                    .hasMessage("Prog.java:43: bcast: NCCL communicator 'world' failed asynchronously: stub error 6 "
                            + "(ncclRemoteError = 6); the communicator was aborted");
            assertThat(f.nccl()).containsExactly(
                    "ncclBroadcast send=2 recv=2 count=3 datatype=2 root=0 comm=0 stream=3",
                    "ncclCommGetAsyncError comm=0",
                    "ncclCommAbort comm=0");
            f.stub.control("stub_async_error", 0);
            assertThatThrownBy(() -> f.call(bcast, new long[] {1}, new long[] {2}, 3))
                    .hasMessage("Prog.java:43: NCCL communicator 'world' was destroyed or aborted");
        });
    }

    @Test
    void itIsACommunicatorThatRefusesWhatNcclCannotDoNamingTheOp() {
        NcclFixture.stub();
        FakeWorld.run(1, world -> {
            DeviceLog device = new DeviceLog();
            try (NcclCommunicator c = NcclCommunicator.create(NcclLibrary.load(), device, device, world, 5, at(1))) {
                Communicator comm = c;
                assertThat(comm.name()).isEqualTo("world");
                assertThatThrownBy(() -> comm.split(0, 0, at(2))).isInstanceOf(CommException.class)
                        .hasMessageStartingWith("Prog.java:2: split on NCCL communicator 'world' is not supported");
                assertThatThrownBy(() -> comm.dup(at(3))).isInstanceOf(CommException.class)
                        .hasMessageStartingWith("Prog.java:3: dup on NCCL communicator 'world' is not supported");
                MemorySegment dev = NcclCommunicator.device(64);
                assertThatThrownBy(() -> comm.allreduce(dev, dev, DType.F32, 1,
                        RuntimeReduceOp.custom("first", (inout, in, n, t) -> { }), at(4)))
                        .isInstanceOf(CommException.class)
                        .hasMessage("Prog.java:4: allreduce: NCCL reduces with SUM, PROD, MIN and MAX only, not the "
                                + "custom operator 'first'");
                assertThatThrownBy(() -> comm.bcast(MemorySegment.ofArray(new int[1]), DType.I32, 1, 0, at(5)))
                        .isInstanceOf(CommException.class)
                        .hasMessage("Prog.java:5: bcast: an NCCL buffer is a device address "
                                + "(NcclCommunicator.device), not a heap segment");
                NcclFixture.stub().reset();
                comm.allreduce(dev, NcclCommunicator.device(128), DType.F32, 4, RuntimeReduceOp.MAX, at(6));
                comm.barrier(at(7));
                assertThat(NcclFixture.stub().calls()).containsExactly(
                        "ncclAllReduce send=64 recv=128 count=4 datatype=7 op=2 comm=0 stream=5",
                        "ncclCommGetAsyncError comm=0",
                        "ncclAllReduce send=900000 recv=900000 count=1 datatype=2 op=0 comm=0 stream=5",
                        "ncclCommGetAsyncError comm=0");
                assertThat(device.lines).containsExactly("allocate stream=5 bytes=4 -> 900000",
                        "free stream=5 ptr=900000");
            }
        });
    }

    @Test
    void aFailedGroupNamesEveryOpInIt() {
        Op isend = op("isend", 60, config("peer", 0, "tag", 0, "dtype", "f32", "count", 2),
                List.of(t(DType.F32, 2)), List.of(t(DType.I64)));
        Op irecv = op("irecv", 61, config("peer", 0, "tag", 0, "dtype", "f32", "count", 2),
                List.of(), List.of(t(DType.I64)));
        Op wait = op("wait", 62, config("dtype", "f32", "count", 2), List.of(t(DType.I64)),
                List.of(t(DType.F32, 2)));
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(isend, irecv, wait));
            f.call(isend, new long[] {1}, new long[] {2}, 3);
            f.call(irecv, new long[] {}, new long[] {4}, 3);
            f.stub.fail("ncclGroupEnd", 5);
            assertThatThrownBy(() -> f.call(wait, new long[] {4}, new long[] {5}, 3))
                    .isInstanceOf(CommException.class)
                    .hasMessage("Prog.java:62: wait: ncclGroupEnd failed for the group of isend at Prog.java:60, "
                            + "irecv at Prog.java:61: stub error 5 (ncclInvalidUsage = 5)");
        });
    }

    @Test
    void aFailedSendInAGroupEndsTheGroup() {
        Op send = op("send", 70, config("peer", 0, "tag", 0, "dtype", "f32", "count", 2),
                List.of(t(DType.F32, 2)), List.of());
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(send));
            f.stub.fail("ncclSend", 2);
            assertThatThrownBy(() -> f.call(send, new long[] {1}, new long[] {}, 3))
                    .hasMessage("Prog.java:70: send: ncclSend failed: stub error 2 (ncclSystemError = 2)");
            assertThat(f.nccl()).containsExactly("ncclGroupStart",
                    "ncclSend buf=1 count=2 datatype=7 peer=0 comm=0 stream=3", "ncclGroupEnd");
            f.clear();
            f.call(send, new long[] {1}, new long[] {}, 3);
            assertThat(f.nccl().getFirst()).isEqualTo("ncclGroupStart");
        });
    }
}
