package dev.weft.prim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.DType;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.CommHandle;
import dev.weft.spi.CommRef;
import dev.weft.spi.Effect;
import dev.weft.spi.Params;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The descriptors: one primitive per record, and each application's effect computed from its fields. */
class CommOpTest {
    private record Stub(String name) implements CommHandle {
        @Override
        public int rank() {
            return 0;
        }

        @Override
        public int size() {
            return 2;
        }

        @Override
        public CommHandle split(int color, int key, SourceLocation where) {
            throw new UnsupportedOperationException();
        }

        @Override
        public CommHandle dup(SourceLocation where) {
            throw new UnsupportedOperationException();
        }
    }

    private static final CommHandle WORLD = new Stub("world");

    @Test
    void everyRecordIsTheParamsOfExactlyOnePrimitive() {
        List<Class<?>> records = new ArrayList<>();
        collectRecords(CommOp.class, records);
        assertThat(records).hasSize(26);
        assertThat(CommPrims.ALL.stream().<Class<?>>map(Primitive::paramsType).toList())
                .containsExactlyInAnyOrderElementsOf(records);
    }

    /** One op of every record. */
    private static List<CommOp> everyRecord() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        return List.of(new CommOp.Rank(WORLD), new CommOp.Barrier(WORLD), new CommOp.Send(WORLD, 1, 0),
                new CommOp.Recv(WORLD, 1, 0, f4), new CommOp.Isend(WORLD, 1, 0), new CommOp.Irecv(WORLD, 1, 0, f4),
                new CommOp.Wait(new CommOp.Irecv(WORLD, 1, 0, f4)), new CommOp.AllReduce(WORLD, ReduceOp.SUM),
                new CommOp.AllGather(WORLD), new CommOp.ReduceScatter(WORLD, ReduceOp.SUM), new CommOp.Bcast(WORLD, 1),
                new CommOp.Reduce(WORLD, ReduceOp.MAX, 0), new CommOp.AllToAll(WORLD),
                new CommOp.SendRecv(WORLD, 1, 0, 1, 0, f4), new CommOp.AllGatherV(WORLD, List.of(3L, 0L)),
                new CommOp.GatherV(WORLD, List.of(1L, 2L), 1), new CommOp.ScatterV(WORLD, List.of(0L, 2L), 0),
                new CommOp.AllToAllV(WORLD, List.of(1L, 2L), List.of(2L, 0L)), new CommOp.RecvAny(WORLD, -1, -1, f4), new CommOp.IAllReduce(WORLD, ReduceOp.SUM),
                new CommOp.IAllGather(WORLD), new CommOp.IReduceScatter(WORLD, ReduceOp.MAX),
                new CommOp.IBcast(WORLD, 1), new CommOp.IAllToAll(WORLD), new CommOp.IBarrier(WORLD),
                new CommOp.CollectiveWait(new CommOp.IBcast(WORLD, 0)));
    }

    @Test
    void kindIsThePrimitivesName() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        assertThat(new CommOp.ReduceScatter(WORLD, ReduceOp.SUM).kind()).isEqualTo(CommOp.Kind.REDUCE_SCATTER);
        assertThat(CommOp.Kind.REDUCE_SCATTER.label()).isEqualTo("reduce_scatter");
        assertThat(new CommOp.Wait(new CommOp.Irecv(WORLD, 1, 0, f4)).kind().label()).isEqualTo("wait");
        assertThat(CommPrims.of(new CommOp.Rank(WORLD))).isSameAs(CommPrims.COMM_RANK);
        for (CommOp op : everyRecord()) {
            assertThat(CommPrims.of(op).name()).as(op.toString()).isEqualTo(op.kind().label());
            assertThat(CommPrims.of(op).paramsType()).isSameAs(op.getClass());
        }
    }

    @Test
    void eachRecordHasItsOwnKindAndTheRestAreRuntimeOnly() {
        List<CommOp.Kind> traced = everyRecord().stream().map(CommOp::kind).toList();
        assertThat(traced).doesNotHaveDuplicates().hasSize(26);
        assertThat(CommOp.Kind.values()).filteredOn(k -> !traced.contains(k)).containsExactly(
                CommOp.Kind.WAIT_ISEND, CommOp.Kind.WAIT_IRECV, CommOp.Kind.SPLIT, CommOp.Kind.DUP,
                CommOp.Kind.PRIVATE_DUP, CommOp.Kind.FREE);
    }

    @Test
    void aKindsTraitsAreItsRecordsInterfaces() {
        for (CommOp op : everyRecord()) {
            CommOp.Kind k = op.kind();
            assertThat(k.collective()).as(k.label()).isEqualTo(op instanceof CommOp.Collective);
            assertThat(k.reducing()).as(k.label()).isEqualTo(op instanceof CommOp.Reducing);
            assertThat(k.rooted()).as(k.label()).isEqualTo(op instanceof CommOp.Rooted);
        }
        assertThat(CommOp.Kind.values()).filteredOn(CommOp.Kind::sends).containsExactly(CommOp.Kind.SEND,
                CommOp.Kind.ISEND, CommOp.Kind.SENDRECV, CommOp.Kind.WAIT_ISEND);
        assertThat(CommOp.Kind.values()).filteredOn(CommOp.Kind::receives).containsExactly(CommOp.Kind.RECV,
                CommOp.Kind.IRECV, CommOp.Kind.SENDRECV, CommOp.Kind.RECV_ANY, CommOp.Kind.WAIT_IRECV);
        assertThat(CommOp.Kind.SPLIT.collective()).isTrue();
        assertThat(CommOp.Kind.FREE.collective()).isFalse();
    }

    @Test
    void labelsAreLowerCaseNamesAndParseBack() {
        for (CommOp.Kind k : CommOp.Kind.values()) {
            assertThat(CommOp.Kind.of(k.label())).isSameAs(k);
            assertThat(k.toString()).isEqualTo(k.label());
        }
        assertThat(CommOp.Kind.WAIT_IRECV.label()).isEqualTo("wait_irecv");
        assertThat(CommOp.Kind.PRIVATE_DUP.label()).isEqualTo("private_dup");
        assertThatThrownBy(() -> CommOp.Kind.of("ALLREDUCE")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CommOp.Kind.of("reduceScatter")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void effectsAreOrderedOnTheirOwnCommunicatorExceptRank() {
        CommHandle other = new Stub("world");
        assertThat(CommPrims.COMM_RANK.effect(new CommOp.Rank(WORLD))).isEqualTo(Effect.PURE);
        Effect onWorld = CommPrims.ALLREDUCE.effect(new CommOp.AllReduce(WORLD, ReduceOp.SUM));
        assertThat(onWorld).isInstanceOf(Effect.Ordered.class).isEqualTo(new Effect.Ordered(WORLD));
        assertThat(CommPrims.BARRIER.effect(new CommOp.Barrier(other))).as("identity, not name")
                .isNotEqualTo(onWorld);
        assertThat(CommPrims.WAIT.effect(new CommOp.Wait(new CommOp.Isend(WORLD, 1, 3)))).isEqualTo(onWorld);
        assertThat(Prims.ADD.effect(Params.NONE)).isEqualTo(Effect.PURE);
    }

    @Test
    void aSymbolicOpNamesItsCommunicatorByReferenceAndComparesByName() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        CommRef world = new CommRef("world");
        CommOp wait = new CommOp.Wait(new CommOp.Irecv(WORLD, 1, 3, f4)).symbolic();
        assertThat(wait).isEqualTo(new CommOp.Wait(new CommOp.Irecv(world, 1, 3, f4)));
        assertThat(new CommOp.Reduce(WORLD, ReduceOp.MAX, 1).symbolic())
                .isEqualTo(new CommOp.Reduce(world, ReduceOp.MAX, 1));
        assertThat(CommPrims.BARRIER.effect(new CommOp.Barrier(WORLD)).symbolic())
                .isEqualTo(new Effect.Ordered(new CommRef("world")))
                .isEqualTo(CommPrims.BARRIER.effect(new CommOp.Barrier(new Stub("world"))).symbolic());
        assertThatThrownBy(wait::handle).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("names 'world' by reference");
    }

    @Test
    void variableCountsCompareByValueAndCannotChangeAfterward() {
        List<Long> counts = new ArrayList<>(List.of(3L, 0L));
        CommOp.AllGatherV op = new CommOp.AllGatherV(new CommRef("world"), counts);
        counts.set(0, 7L);
        assertThat(op).isEqualTo(new CommOp.AllGatherV(new CommRef("world"), List.of(3L, 0L)))
                .hasSameHashCodeAs(new CommOp.AllGatherV(new CommRef("world"), List.of(3L, 0L)))
                .isNotEqualTo(new CommOp.AllGatherV(new CommRef("world"), List.of(2L, 1L)));
        assertThat(op.total()).isEqualTo(3);
        assertThat(op.offset(1)).isEqualTo(3);
        assertThat(new CommOp.AllGatherV(WORLD, List.of(3L, 0L)).symbolic()).isEqualTo(op);
        assertThat(new CommOp.AllToAllV(new CommRef("world"), List.of(1L, 2L), List.of(2L, 0L)))
                .isNotEqualTo(new CommOp.AllToAllV(new CommRef("world"), List.of(2L, 0L), List.of(1L, 2L)));
    }

    @Test
    void dataIsWhatMoves() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        Aval i8 = new Aval(DType.I64, Shape.of());
        assertThat(new CommOp.Wait(new CommOp.Isend(WORLD, 1, 3)).data(List.of(i8, f4))).isEqualTo(f4);
        assertThat(new CommOp.Wait(new CommOp.Irecv(WORLD, 1, 3, f4)).data(List.of(i8))).isEqualTo(f4);
        assertThat(new CommOp.Barrier(WORLD).data(List.of())).isNull();
        assertThat(new CommOp.Recv(WORLD, 1, 0, f4).data(List.of())).isEqualTo(f4);
        assertThat(new CommOp.RecvAny(WORLD, -1, -1, f4).data(List.of())).isEqualTo(f4);
    }

    @Test
    void recvAnyTakesWildcardsAndGivesItsStatus() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        SourceLocation at = SourceLocation.UNKNOWN;
        assertThat(CommPrims.RECV_ANY.infer(List.of(), new CommOp.RecvAny(WORLD, -1, -1, f4), at))
                .containsExactly(f4, new Aval(DType.I32, Shape.of(2)));
        assertThat(CommPrims.RECV_ANY.infer(List.of(), new CommOp.RecvAny(WORLD, 1, 7, f4), at)).hasSize(2);
        assertThatThrownBy(() -> CommPrims.RECV.infer(List.of(), new CommOp.Recv(WORLD, -1, 0, f4), at))
                .hasMessageContaining("peer rank -1");
        assertThatThrownBy(() -> CommPrims.RECV_ANY.infer(List.of(), new CommOp.RecvAny(WORLD, -2, 0, f4), at))
                .hasMessageContaining("peer rank -2");
        assertThat(new CommOp.RecvAny(WORLD, -1, 3, f4).symbolic())
                .isEqualTo(new CommOp.RecvAny(new CommRef("world"), -1, 3, f4));
    }

    @Test
    void aNonblockingCollectiveStartsItsBlockingOneAndItsWaitGivesThatResult() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        CommOp.IAllGather start = new CommOp.IAllGather(WORLD);
        assertThat(start.blocking()).isEqualTo(new CommOp.AllGather(WORLD));
        assertThat(new CommOp.IReduceScatter(WORLD, ReduceOp.MAX).blocking())
                .isEqualTo(new CommOp.ReduceScatter(WORLD, ReduceOp.MAX));
        assertThat(CommPrims.IALLGATHER.infer(List.of(f4), start, SourceLocation.UNKNOWN))
                .containsExactly(CommPrims.REQUEST);
        CommOp.CollectiveWait done = new CommOp.CollectiveWait(start);
        assertThat(CommPrims.WAIT_COLLECTIVE.infer(List.of(CommPrims.REQUEST, f4), done, SourceLocation.UNKNOWN))
                .containsExactly(new Aval(DType.F32, Shape.of(8)));
        assertThat(CommPrims.WAIT_COLLECTIVE.infer(List.of(CommPrims.REQUEST),
                new CommOp.CollectiveWait(new CommOp.IBarrier(WORLD)), SourceLocation.UNKNOWN)).isEmpty();
        assertThat(done.data(List.of(CommPrims.REQUEST, f4))).isEqualTo(f4);
        assertThat(done.symbolic()).isEqualTo(new CommOp.CollectiveWait(new CommOp.IAllGather(new CommRef("world"))));
        assertThatThrownBy(() -> CommPrims.IREDUCE_SCATTER.infer(List.of(new Aval(DType.F32, Shape.of(3))),
                new CommOp.IReduceScatter(WORLD, ReduceOp.SUM), SourceLocation.UNKNOWN))
                .hasMessageContaining("reduce_scatter").hasMessageContaining("2 equal blocks");
    }

    private static void collectRecords(Class<?> type, List<Class<?>> out) {
        if (type.isRecord()) {
            if (!out.contains(type)) {
                out.add(type);
            }
            return;
        }
        for (Class<?> sub : type.getPermittedSubclasses()) {
            collectRecords(sub, out);
        }
    }
}
