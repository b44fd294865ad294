package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.lowering.ir.Block;
import dev.weft.lowering.ir.Func;
import dev.weft.lowering.ir.Op;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static dev.weft.backends.gpu.nccl.NcclFixture.TOKEN;
import static dev.weft.backends.gpu.nccl.NcclFixture.config;
import static dev.weft.backends.gpu.nccl.NcclFixture.op;
import static dev.weft.backends.gpu.nccl.NcclFixture.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The {@code weft.nccl.*} handlers against the NCCL stub: the exact NCCL calls each op makes. */
class NcclCustomCallsTest {
    private static final long STREAM = 4242;

    @ParameterizedTest(name = "{0} is ncclDataType_t {1}")
    @CsvSource({"f32, 7", "f64, 8", "i32, 2", "i64, 4", "bool, 1"})
    void dtypeTable(String dtype, int ncclType) {
        DType t = DType.fromSpecName(dtype);
        Op op = op("allreduce", 10, config("reduce_op", "max", "dtype", dtype, "count", 6),
                List.of(t(t, 2, 3)), List.of(t(t, 2, 3)));
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(op));
            assertThat(f.call(op, new long[] {1000}, new long[] {2000}, STREAM)).containsExactly(2000L);
            assertThat(f.nccl()).containsExactly(
                    "ncclAllReduce send=1000 recv=2000 count=6 datatype=" + ncclType + " op=2 comm=0 stream=4242",
                    "ncclCommGetAsyncError comm=0");
        });
    }

    @ParameterizedTest(name = "{0} is ncclRedOp_t {1}")
    @CsvSource({"sum, 0", "prod, 1", "max, 2", "min, 3"})
    void reduceOpTable(String reduceOp, int ncclOp) {
        Op op = op("allreduce", 10, config("reduce_op", reduceOp, "dtype", "f64", "count", 5),
                List.of(t(DType.F64, 5)), List.of(t(DType.F64, 5)));
        FakeWorld.run(1, world -> {
            NcclFixture f = new NcclFixture(world, List.of(op));
            f.call(op, new long[] {1000}, new long[] {2000}, STREAM);
            assertThat(f.nccl().getFirst())
                    .isEqualTo("ncclAllReduce send=1000 recv=2000 count=5 datatype=8 op=" + ncclOp + " comm=0 stream=4242");
        });
    }

    @Test
    void collectivesPassCountsRootsAndTheStream() {
        Op allgather = op("allgather", 11, config("dtype", "i32", "count", 3), List.of(t(DType.I32, 3)),
                List.of(t(DType.I32, 6)));
        Op reduceScatter = op("reduce_scatter", 12, config("reduce_op", "sum", "dtype", "f32", "count", 8),
                List.of(t(DType.F32, 8)), List.of(t(DType.F32, 4)));
        Op bcast = op("bcast", 13, config("root", 1, "dtype", "i64", "count", 7), List.of(t(DType.I64, 7)),
                List.of(t(DType.I64, 7)));
        Op reduce = op("reduce", 14, config("reduce_op", "min", "root", 1, "dtype", "f32", "count", 5),
                List.of(t(DType.F32, 5)), List.of(t(DType.F32, 5)));
        FakeWorld.run(2, world -> {
            int r = world.rank();
            NcclFixture f = new NcclFixture(world, List.of(allgather, reduceScatter, bcast, reduce));
            assertThat(f.call(allgather, new long[] {100}, new long[] {200}, 7)).containsExactly(200L);
            assertThat(f.call(reduceScatter, new long[] {300}, new long[] {400}, 8)).containsExactly(400L);
            assertThat(f.call(bcast, new long[] {500}, new long[] {600}, 9)).containsExactly(600L);
            assertThat(f.call(reduce, new long[] {700}, new long[] {800}, 10)).containsExactly(800L);
            assertThat(f.nccl()).containsExactly(
                    "ncclAllGather send=100 recv=200 count=3 datatype=2 comm=" + r + " stream=7",
                    "ncclCommGetAsyncError comm=" + r,
                    "ncclReduceScatter send=300 recv=400 count=4 datatype=7 op=0 comm=" + r + " stream=8",
                    "ncclCommGetAsyncError comm=" + r,
                    "ncclBroadcast send=600 recv=600 count=7 datatype=4 root=1 comm=" + r + " stream=9",
                    "ncclCommGetAsyncError comm=" + r,
                    "ncclReduce send=700 recv=800 count=5 datatype=7 op=3 root=1 comm=" + r + " stream=10",
                    "ncclCommGetAsyncError comm=" + r);
            // The broadcast runs in place, from the root's copy of its operand. NCCL leaves a non-root's receive
            // buffer alone; Weft's reduce gives a non-root its own operand.
            assertThat(f.device.lines).containsExactlyElementsOf(
                    r == 1 ? List.of("copy stream=9 dst=600 src=500 bytes=56")
                            : List.of("copy stream=10 dst=800 src=700 bytes=20"));
        });
    }

    @Test
    void alltoallIsOneGroupOfSendsAndReceivesByBlock() {
        Op alltoall = op("alltoall", 15, config("dtype", "f64", "count", 6), List.of(t(DType.F64, 6)),
                List.of(t(DType.F64, 6)));
        FakeWorld.run(2, world -> {
            int r = world.rank();
            NcclFixture f = new NcclFixture(world, List.of(alltoall));
            f.call(alltoall, new long[] {1000}, new long[] {5000}, STREAM);
            assertThat(f.nccl()).containsExactly(
                    "ncclGroupStart",
                    "ncclSend buf=1000 count=3 datatype=8 peer=0 comm=" + r + " stream=4242",
                    "ncclRecv buf=5000 count=3 datatype=8 peer=0 comm=" + r + " stream=4242",
                    "ncclSend buf=1024 count=3 datatype=8 peer=1 comm=" + r + " stream=4242",
                    "ncclRecv buf=5024 count=3 datatype=8 peer=1 comm=" + r + " stream=4242",
                    "ncclGroupEnd",
                    "ncclCommGetAsyncError comm=" + r);
        });
    }

    /**
     * The variable-count collectives are one group each of sends and receives of exactly their blocks, at their
     * offsets, with none for an empty block: on 2 ranks, allgatherv of [2, 1] f32, gatherv of [0, 3] i32 to rank 1,
     * scatterv of [2, 1] f64 from rank 0, alltoallv of i32 with rank 0 sending [1, 2] and rank 1 [0, 3].
     */
    @Test
    void variableCountsAreOneGroupOfSendsAndReceivesOfTheirBlocks() {
        FakeWorld.run(2, world -> {
            int r = world.rank();
            long[] gathered = {2, 1}, toRoot = {0, 3}, scattered = {2, 1};
            long[][] send = {{1, 2}, {0, 3}}, recv = {{1, 0}, {2, 3}};
            Op allgatherv = op("allgatherv", 16, config("counts", gathered, "dtype", "f32", "count", gathered[r]),
                    List.of(t(DType.F32, gathered[r])), List.of(t(DType.F32, 3)));
            Op gatherv = op("gatherv", 17, config("root", 1, "counts", toRoot, "dtype", "i32", "count", toRoot[r]),
                    List.of(t(DType.I32, toRoot[r])), List.of(t(DType.I32, r == 1 ? 3 : 0)));
            Op scatterv = op("scatterv", 18, config("root", 0, "counts", scattered, "dtype", "f64", "count", 3),
                    List.of(t(DType.F64, 3)), List.of(t(DType.F64, scattered[r])));
            Op alltoallv = op("alltoallv", 19, config("send_counts", send[r], "recv_counts", recv[r], "dtype", "i32",
                    "count", 3), List.of(t(DType.I32, 3)), List.of(t(DType.I32, r == 0 ? 1 : 5)));
            NcclFixture f = new NcclFixture(world, List.of(allgatherv, gatherv, scatterv, alltoallv));
            f.call(allgatherv, new long[] {100}, new long[] {200}, STREAM);
            f.call(gatherv, new long[] {300}, new long[] {400}, STREAM);
            f.call(scatterv, new long[] {500}, new long[] {600}, STREAM);
            f.call(alltoallv, new long[] {700}, new long[] {800}, STREAM);
            String on = " comm=" + r + " stream=4242";
            List<String> expected = new ArrayList<>(List.of("ncclGroupStart",
                    "ncclSend buf=100 count=" + gathered[r] + " datatype=7 peer=0" + on,
                    "ncclRecv buf=200 count=2 datatype=7 peer=0" + on,
                    "ncclSend buf=100 count=" + gathered[r] + " datatype=7 peer=1" + on,
                    "ncclRecv buf=208 count=1 datatype=7 peer=1" + on,
                    "ncclGroupEnd", "ncclCommGetAsyncError comm=" + r, "ncclGroupStart"));
            expected.addAll(r == 1 ? List.of("ncclSend buf=300 count=3 datatype=2 peer=1" + on,
                    "ncclRecv buf=400 count=3 datatype=2 peer=1" + on) : List.of());
            expected.addAll(List.of("ncclGroupEnd", "ncclCommGetAsyncError comm=" + r, "ncclGroupStart"));
            expected.addAll(r == 0 ? List.of("ncclSend buf=500 count=2 datatype=8 peer=0" + on,
                    "ncclSend buf=516 count=1 datatype=8 peer=1" + on) : List.of());
            expected.addAll(List.of("ncclRecv buf=600 count=" + scattered[r] + " datatype=8 peer=0" + on,
                    "ncclGroupEnd", "ncclCommGetAsyncError comm=" + r, "ncclGroupStart"));
            expected.addAll(r == 0 ? List.of("ncclSend buf=700 count=1 datatype=2 peer=0" + on,
                    "ncclRecv buf=800 count=1 datatype=2 peer=0" + on,
                    "ncclSend buf=704 count=2 datatype=2 peer=1" + on)
                    : List.of("ncclRecv buf=800 count=2 datatype=2 peer=0" + on,
                    "ncclSend buf=700 count=3 datatype=2 peer=1" + on,
                    "ncclRecv buf=808 count=3 datatype=2 peer=1" + on));
            expected.addAll(List.of("ncclGroupEnd", "ncclCommGetAsyncError comm=" + r));
            assertThat(f.nccl()).containsExactlyElementsOf(expected);
        });
    }

    @Test
    void consecutiveBlockingSendsAndReceivesAreOneGroupThatAFlushEndsAndSkipTokens() {
        Op send = op("send", 20, config("peer", 1, "tag", 5, "dtype", "f32", "count", 4),
                List.of(t(DType.F32, 4), TOKEN), List.of(TOKEN));
        Op recv = op("recv", 21, config("peer", 1, "tag", 5, "dtype", "f32", "count", 4),
                List.of(TOKEN), List.of(t(DType.F32, 4), TOKEN));
        Op sendrecv = op("sendrecv", 22, config("peer", 1, "tag", 1, "source", 1, "recv_tag", 2, "dtype", "i32",
                "count", 3), List.of(t(DType.I32, 3)), List.of(t(DType.I32, 2)));
        FakeWorld.run(2, world -> {
            NcclFixture f = new NcclFixture(world, List.of(send, recv, sendrecv));
            if (world.rank() == 1) {
                return;
            }
            assertThat(f.call(send, new long[] {111, TOKEN_PTR}, new long[] {TOKEN_PTR}, STREAM))
                    .containsExactly(TOKEN_PTR);
            assertThat(f.call(recv, new long[] {TOKEN_PTR}, new long[] {222, TOKEN_PTR}, STREAM))
                    .containsExactly(222L, TOKEN_PTR);
            assertThat(f.call(sendrecv, new long[] {333}, new long[] {444}, STREAM)).containsExactly(444L);
            assertThat(f.nccl()).containsExactly(
                    "ncclGroupStart",
                    "ncclSend buf=111 count=4 datatype=7 peer=1 comm=0 stream=4242",
                    "ncclRecv buf=222 count=4 datatype=7 peer=1 comm=0 stream=4242",
                    "ncclSend buf=333 count=3 datatype=2 peer=1 comm=0 stream=4242",
                    "ncclRecv buf=444 count=2 datatype=2 peer=1 comm=0 stream=4242");
            f.clear();
            NcclCommunicator.flush();
            assertThat(f.nccl()).containsExactly("ncclGroupEnd", "ncclCommGetAsyncError comm=0");
            f.clear();
            NcclCommunicator.flush();
            assertThat(f.nccl()).isEmpty();
        });
    }

    private static final long TOKEN_PTR = 0;

    @Test
    void isendAndIrecvShareOneGroupThatTheFirstWaitCloses() {
        Op isend = op("isend", 30, config("peer", 1, "tag", 0, "dtype", "f32", "count", 8),
                List.of(t(DType.F32, 8)), List.of(t(DType.I64)));
        Op irecv = op("irecv", 31, config("peer", 1, "tag", 0, "dtype", "f32", "count", 8),
                List.of(), List.of(t(DType.I64)));
        Op waitRecv = op("wait", 32, config("dtype", "f32", "count", 8), List.of(t(DType.I64)),
                List.of(t(DType.F32, 8)));
        Op waitSend = op("wait", 33, config("dtype", "f32", "count", 8), List.of(t(DType.I64), t(DType.F32, 8)),
                List.of());
        FakeWorld.run(2, world -> {
            int r = world.rank();
            NcclFixture f = new NcclFixture(world, List.of(isend, irecv, waitRecv, waitSend));
            assertThat(f.call(isend, new long[] {1000}, new long[] {71}, 5)).containsExactly(71L);
            assertThat(f.call(irecv, new long[] {}, new long[] {72}, 6)).containsExactly(72L);
            assertThat(f.nccl()).containsExactly(
                    "ncclGroupStart",
                    "ncclSend buf=1000 count=8 datatype=7 peer=1 comm=" + r + " stream=5",
                    "ncclRecv buf=900000 count=8 datatype=7 peer=1 comm=" + r + " stream=6");
            f.clear();

            assertThat(f.call(waitRecv, new long[] {72}, new long[] {3000}, 9)).containsExactly(900000L);
            assertThat(f.nccl()).containsExactly("ncclGroupEnd", "ncclCommGetAsyncError comm=" + r);
            assertThat(f.device.lines).containsExactly(
                    "record stream=5 -> event 1",
                    "record stream=6 -> event 2",
                    "wait stream=9 event=2",
                    "destroy event=2");
            f.clear();

            assertThat(f.call(waitSend, new long[] {71, 1000}, new long[] {}, 9)).isEmpty();
            assertThat(f.nccl()).isEmpty();
            assertThat(f.device.lines).containsExactly("wait stream=9 event=1", "destroy event=1");

            assertThatThrownBy(() -> f.call(waitSend, new long[] {71, 1000}, new long[] {}, 9))
                    .isInstanceOf(CommException.class)
                    .hasMessageStartingWith("Prog.java:33: wait: no request is in flight");
        });
    }

    @Test
    void aCollectiveClosesTheOpenGroupFirst() {
        Op allreduce = op("allreduce", 31, config("reduce_op", "sum", "dtype", "f32", "count", 2),
                List.of(t(DType.F32, 2)), List.of(t(DType.F32, 2)));
        FakeWorld.run(2, world -> {
            int r = world.rank();
            Op isend = op("isend", 30, config("peer", 1 - r, "tag", 0, "dtype", "f32", "count", 2),
                    List.of(t(DType.F32, 2)), List.of(t(DType.I64)));
            NcclFixture f = new NcclFixture(world, List.of(isend, allreduce));
            f.call(isend, new long[] {10}, new long[] {20}, STREAM);
            f.call(allreduce, new long[] {30}, new long[] {40}, STREAM);
            assertThat(f.nccl()).containsExactly(
                    "ncclGroupStart",
                    "ncclSend buf=10 count=2 datatype=7 peer=" + (1 - r) + " comm=" + r + " stream=4242",
                    "ncclGroupEnd",
                    "ncclCommGetAsyncError comm=" + r,
                    "ncclAllReduce send=30 recv=40 count=2 datatype=7 op=0 comm=" + r + " stream=4242",
                    "ncclCommGetAsyncError comm=" + r);
            assertThat(f.device.lines).containsExactly("record stream=4242 -> event 1");
        });
    }

    @Test
    void barrierIsAOneElementSumAndCommRankIsUploaded() {
        Op barrier = op("barrier", 40, config(), List.of(TOKEN), List.of(TOKEN));
        Op rank = op("comm_rank", 41, config(), List.of(), List.of(t(DType.I32)));
        FakeWorld.run(2, world -> {
            int r = world.rank();
            NcclFixture f = new NcclFixture(world, List.of(barrier, rank));
            assertThat(f.call(barrier, new long[] {TOKEN_PTR}, new long[] {TOKEN_PTR}, STREAM))
                    .containsExactly(TOKEN_PTR);
            assertThat(f.call(rank, new long[] {}, new long[] {555}, STREAM)).containsExactly(555L);
            assertThat(f.nccl()).containsExactly(
                    "ncclAllReduce send=900000 recv=900000 count=1 datatype=2 op=0 comm=" + r + " stream=4242",
                    "ncclCommGetAsyncError comm=" + r);
            assertThat(f.device.lines).containsExactly(
                    "allocate stream=4242 bytes=4 -> 900000",
                    "free stream=4242 ptr=900000",
                    "upload stream=4242 int=" + r + " bytes=4 dst=555");
        });
    }

    @Test
    void customReduceOpsGatherThenReduceLocally() {
        String fn = "weft_reduce_absmax_f32_4";
        Func reduction = new Func(fn, new Block(List.of(), List.of()));
        Op allreduce = op("allreduce", 50, config("reduce_op", "absmax", "dtype", "f32", "count", 4),
                List.of(t(DType.F32, 4)), List.of(t(DType.F32, 4)), fn);
        Op reduceScatter = op("reduce_scatter", 51, config("reduce_op", "absmax", "dtype", "f32", "count", 4),
                List.of(t(DType.F32, 4)), List.of(t(DType.F32, 2)), fn);
        Op reduce = op("reduce", 52, config("reduce_op", "absmax", "root", 0, "dtype", "f32", "count", 4),
                List.of(t(DType.F32, 4)), List.of(t(DType.F32, 4)), fn);
        FakeWorld.run(2, world -> {
            int r = world.rank();
            NcclFixture f = new NcclFixture(world, List.of(allreduce, reduceScatter, reduce), reduction);
            f.call(allreduce, new long[] {100}, new long[] {200}, STREAM);
            assertThat(f.nccl()).containsExactly(
                    "ncclAllGather send=100 recv=900000 count=4 datatype=7 comm=" + r + " stream=4242",
                    "ncclCommGetAsyncError comm=" + r);
            assertThat(f.device.lines).containsExactly(
                    "allocate stream=4242 bytes=32 -> 900000",
                    "reduce stream=4242 fn=" + fn + " dtype=f32 count=4 ranks=2 gathered=900000 out=200",
                    "free stream=4242 ptr=900000");
            f.clear();

            // Each rank needs only its block of every contribution: an alltoall brings exactly those.
            f.call(reduceScatter, new long[] {300}, new long[] {400}, STREAM);
            assertThat(f.nccl()).containsExactly(
                    "ncclGroupStart",
                    "ncclSend buf=300 count=2 datatype=7 peer=0 comm=" + r + " stream=4242",
                    "ncclRecv buf=901000 count=2 datatype=7 peer=0 comm=" + r + " stream=4242",
                    "ncclSend buf=308 count=2 datatype=7 peer=1 comm=" + r + " stream=4242",
                    "ncclRecv buf=901008 count=2 datatype=7 peer=1 comm=" + r + " stream=4242",
                    "ncclGroupEnd",
                    "ncclCommGetAsyncError comm=" + r);
            assertThat(f.device.lines).containsExactly(
                    "allocate stream=4242 bytes=16 -> 901000",
                    "reduce stream=4242 fn=" + fn + " dtype=f32 count=2 ranks=2 gathered=901000 out=400",
                    "free stream=4242 ptr=901000");
            f.clear();

            f.call(reduce, new long[] {500}, new long[] {600}, STREAM);
            assertThat(f.nccl().getFirst())
                    .isEqualTo("ncclAllGather send=500 recv=902000 count=4 datatype=7 comm=" + r + " stream=4242");
            assertThat(f.device.lines).containsExactlyElementsOf(r == 0
                    ? List.of("allocate stream=4242 bytes=32 -> 902000",
                        "reduce stream=4242 fn=" + fn + " dtype=f32 count=4 ranks=2 gathered=902000 out=600",
                        "free stream=4242 ptr=902000")
                    : List.of("allocate stream=4242 bytes=32 -> 902000",
                        "free stream=4242 ptr=902000",
                        "copy stream=4242 dst=600 src=500 bytes=16"));
        });
    }
}
