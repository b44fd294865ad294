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
        assertThat(records).hasSize(14);
        assertThat(CommPrims.ALL.stream().<Class<?>>map(Primitive::paramsType).toList())
                .containsExactlyInAnyOrderElementsOf(records);
    }

    @Test
    void kindIsThePrimitivesName() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        assertThat(new CommOp.ReduceScatter(WORLD, ReduceOp.SUM).kind()).isEqualTo("reduce_scatter");
        assertThat(new CommOp.Wait(new CommOp.Irecv(WORLD, 1, 0, f4)).kind()).isEqualTo("wait");
        assertThat(CommPrims.of(new CommOp.Rank(WORLD))).isSameAs(CommPrims.COMM_RANK);
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
    void dataIsWhatMoves() {
        Aval f4 = new Aval(DType.F32, Shape.of(4));
        Aval i8 = new Aval(DType.I64, Shape.of());
        assertThat(new CommOp.Wait(new CommOp.Isend(WORLD, 1, 3)).data(List.of(i8, f4))).isEqualTo(f4);
        assertThat(new CommOp.Wait(new CommOp.Irecv(WORLD, 1, 3, f4)).data(List.of(i8))).isEqualTo(f4);
        assertThat(new CommOp.Barrier(WORLD).data(List.of())).isNull();
        assertThat(new CommOp.Recv(WORLD, 1, 0, f4).data(List.of())).isEqualTo(f4);
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
