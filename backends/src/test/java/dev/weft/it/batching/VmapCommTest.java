package dev.weft.it.batching;

import static dev.weft.it.ad.CommGradTest.exchangedRows;
import static dev.weft.it.ad.CommGradTest.variableRows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.prim.CommPrims;
import dev.weft.spi.Primitive;
import dev.weft.testing.RankRunner;
import dev.weft.testing.TensorAssert;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Communication under {@code vmap} on 2 and 3 fake ranks equals a loop over the batch elements, each element
 * communicating on its own (as mpi4jax's tests vmap allreduce and sendrecv), eagerly and inside {@code @Compile}:
 * one message carries the whole batch.
 */
class VmapCommTest {
    private static final long BATCH = 4;
    private static final double TOLERANCE = 1e-12;

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /**
     * A function of one element of this rank's input on {@code comm}; the element's shape given the number of
     * ranks; the input's batch axis.
     */
    record Case(String name, Primitive<?> prim, BiFunction<Comm, Tensor, Tensor> f, IntFunction<long[]> shape,
                int axis) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Case> cases() {
        return List.of(
                new Case("allreduce sum", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(x.mul(x), ReduceOp.SUM).add(x),
                        n -> new long[] {3}, 0),
                new Case("allreduce max, batch last", CommPrims.ALLREDUCE, (c, x) -> c.allreduce(x, ReduceOp.MAX),
                        n -> new long[] {2, 3}, 2),
                new Case("allgather", CommPrims.ALLGATHER, (c, x) -> c.allgather(x.exp()), n -> new long[] {2, 3}, 0),
                new Case("allgather, batch last", CommPrims.ALLGATHER, (c, x) -> c.allgather(x), n -> new long[] {2},
                        1),
                new Case("allgather of scalars", CommPrims.ALLGATHER, (c, x) -> c.allgather(x.mul(2)),
                        n -> new long[0], 0),
                new Case("reduceScatter", CommPrims.REDUCE_SCATTER, (c, x) -> c.reduceScatter(x, ReduceOp.SUM),
                        n -> new long[] {2L * n, 2}, 0),
                new Case("alltoall", CommPrims.ALLTOALL, (c, x) -> c.alltoall(x.sin()), n -> new long[] {2L * n}, 0),
                new Case("allgatherv", CommPrims.ALLGATHERV, (c, x) -> c.allgatherv(x.slice(0, 0,
                        variableRows(c)[c.rank()]).exp(), variableRows(c)), n -> new long[] {2L * n, 2}, 0),
                new Case("gatherv to the last rank, batch last", CommPrims.GATHERV, (c, x) -> c.gatherv(x.slice(0, 0,
                        variableRows(c)[c.rank()]), variableRows(c), c.size() - 1), n -> new long[] {2L * n, 2}, 2),
                new Case("scatterv from rank 0", CommPrims.SCATTERV, (c, x) -> c.scatterv(x.slice(0, 0,
                        Arrays.stream(variableRows(c)).sum()).sin(), variableRows(c), 0), n -> new long[] {2L * n, 2},
                        1),
                new Case("alltoallv", CommPrims.ALLTOALLV, (c, x) -> {
                    long[][] counts = exchangedRows(c);
                    return c.alltoallv(x.slice(0, 0, Arrays.stream(counts[0]).sum()).mul(x.slice(0, 0, 1)),
                            counts[0], counts[1]);
                }, n -> new long[] {2L * n}, 0),
                new Case("bcast from the last rank", CommPrims.BCAST, (c, x) -> c.bcast(x, c.size() - 1).mul(x),
                        n -> new long[] {3}, 1),
                new Case("reduce to rank 0", CommPrims.REDUCE, (c, x) -> c.reduce(x.exp(), ReduceOp.SUM, 0),
                        n -> new long[] {3}, 0),
                new Case("sendrecv shift", CommPrims.SENDRECV, (c, x) -> c.sendrecv(x.exp(), next(c), prev(c), 7)
                        .mul(x), n -> new long[] {3}, 0),
                new Case("sendrecv of an unbatched tensor", CommPrims.SENDRECV, (c, x) -> c.sendrecv(
                        Tensor.full(DType.F64, c.rank() + 1, 3), next(c), prev(c), 7).mul(x), n -> new long[] {3}, 1),
                new Case("send and recv around the ring", CommPrims.SEND, VmapCommTest::ring, n -> new long[] {2}, 0),
                new Case("recv", CommPrims.RECV, VmapCommTest::ring, n -> new long[] {2, 2}, 1),
                new Case("recvAny from any rank, the only sender being the previous", CommPrims.RECV_ANY,
                        VmapCommTest::ringAny, n -> new long[] {3}, 0),
                new Case("isend and irecv with both neighbours", CommPrims.ISEND, VmapCommTest::halo,
                        n -> new long[] {3}, 0),
                new Case("irecv", CommPrims.IRECV, VmapCommTest::halo, n -> new long[] {2}, 1),
                new Case("wait", CommPrims.WAIT, VmapCommTest::halo, n -> new long[] {1}, 0),
                new Case("iallreduce sum", CommPrims.IALLREDUCE, (c, x) -> c.wait(c.iallreduce(x.mul(x),
                        ReduceOp.SUM)).add(x), n -> new long[] {3}, 0),
                new Case("iallreduce max, batch last", CommPrims.IALLREDUCE, (c, x) -> c.wait(c.iallreduce(x,
                        ReduceOp.MAX)), n -> new long[] {2, 3}, 2),
                new Case("iallgather", CommPrims.IALLGATHER, (c, x) -> c.wait(c.iallgather(x.exp())),
                        n -> new long[] {2, 3}, 0),
                new Case("iallgather of scalars", CommPrims.IALLGATHER, (c, x) -> c.wait(c.iallgather(x.mul(2))),
                        n -> new long[0], 0),
                new Case("ireduceScatter", CommPrims.IREDUCE_SCATTER, (c, x) -> c.wait(c.ireduceScatter(x,
                        ReduceOp.SUM)), n -> new long[] {2L * n, 2}, 0),
                new Case("ialltoall", CommPrims.IALLTOALL, (c, x) -> c.wait(c.ialltoall(x.sin())),
                        n -> new long[] {2L * n}, 0),
                new Case("ibcast from the last rank", CommPrims.IBCAST, (c, x) -> c.wait(c.ibcast(x, c.size() - 1))
                        .mul(x), n -> new long[] {3}, 1),
                new Case("nonblocking collectives in flight together", CommPrims.WAIT_COLLECTIVE, (c, x) -> {
                    Request sum = c.iallreduce(x, ReduceOp.SUM);
                    Request barrier = c.ibarrier();
                    Request gathered = c.iallgather(x.mul(x));
                    Tensor all = c.wait(gathered);
                    c.wait(barrier);
                    return c.wait(sum).add(all.slice(0, 0, 2));
                }, n -> new long[] {2}, 1),
                new Case("ibarrier", CommPrims.IBARRIER, (c, x) -> {
                    Request r = c.ibarrier();
                    Tensor y = x.mul(3);
                    c.wait(r);
                    return y;
                }, n -> new long[] {2}, 0),
                new Case("rank tensor", CommPrims.COMM_RANK, (c, x) -> x.add(c.rankTensor().cast(DType.F64)),
                        n -> new long[] {2}, 0),
                new Case("barrier", CommPrims.BARRIER, (c, x) -> {
                    c.barrier();
                    return x.mul(3);
                }, n -> new long[] {2}, 0));
    }

    private static int next(Comm c) {
        return (c.rank() + 1) % c.size();
    }

    private static int prev(Comm c) {
        return (c.rank() + c.size() - 1) % c.size();
    }

    /** Even ranks send then receive, odd ranks the reverse, so that blocking messages never wait on each other. */
    private static Tensor ring(Comm c, Tensor x) {
        Tensor got;
        if (c.rank() % 2 == 0) {
            c.send(x.sin(), next(c), 5);
            got = c.recv(x.dtype(), x.shape(), prev(c), 5);
        } else {
            got = c.recv(x.dtype(), x.shape(), prev(c), 5);
            c.send(x.sin(), next(c), 5);
        }
        return got.mul(x);
    }

    /** {@link #ring} with {@code recvAny(ANY_SOURCE, ANY_TAG)}: only the previous rank sends to this one. */
    private static Tensor ringAny(Comm c, Tensor x) {
        Tensor got;
        if (c.rank() % 2 == 0) {
            c.send(x.sin(), next(c), 5);
            got = c.recvAny(x.dtype(), x.shape(), Comm.ANY_SOURCE, Comm.ANY_TAG).tensor();
        } else {
            got = c.recvAny(x.dtype(), x.shape(), Comm.ANY_SOURCE, Comm.ANY_TAG).tensor();
            c.send(x.sin(), next(c), 5);
        }
        return got.mul(x);
    }

    /** A halo exchange: receives from both neighbours started, then sends (one of an unbatched tensor), waits. */
    private static Tensor halo(Comm c, Tensor x) {
        Request fromPrev = c.irecv(x.dtype(), x.shape(), prev(c), 1);
        Request fromNext = c.irecv(x.dtype(), x.shape(), next(c), 2);
        Request toNext = c.isend(x.sin(), next(c), 1);
        Request toPrev = c.isend(Tensor.full(x.dtype(), c.rank(), x.shape()), prev(c), 2);
        List<Tensor> got = c.waitAll(fromPrev, fromNext, toNext, toPrev);
        return got.get(0).mul(x).add(got.get(1));
    }

    static List<Arguments> runs() {
        List<Arguments> runs = new ArrayList<>();
        for (Case c : cases()) {
            for (int n = 2; n <= 3; n++) {
                runs.add(Arguments.of(c, n));
            }
        }
        return runs;
    }

    private static Tensor input(Case c, Comm comm) {
        Random rnd = new Random(31L * comm.rank() + c.name().hashCode());
        return Batches.input(rnd, -1, 1, c.shape().apply(comm.size()), c.axis(), BATCH);
    }

    private static Tensor batched(Case c, Comm comm, Tensor x) {
        return Weft.vmap(xs -> List.of(c.f().apply(comm, xs.getFirst())), new int[] {c.axis()}, new int[] {0})
                .apply(List.of(x)).getFirst();
    }

    @ParameterizedTest(name = "{0} on {1} ranks")
    @MethodSource("runs")
    void batchedEqualsALoopOverTheElements(Case c, int n) {
        RankRunner.run(n, comm -> {
            Tensor x = input(c, comm);
            Tensor expected = Batches.loop(xs -> List.of(c.f().apply(comm, xs.getFirst())), new int[] {c.axis()},
                    new int[] {0}, List.of(x), BATCH).getFirst();
            TensorAssert.assertThat(batched(c, comm, x)).isCloseTo(expected, TOLERANCE);
        });
    }

    @ParameterizedTest(name = "{0} on {1} ranks")
    @MethodSource("runs")
    void compiledEqualsEager(Case c, int n) {
        RankRunner.run(n, comm -> {
            Tensor x = input(c, comm);
            TensorAssert.assertThat(compiled(comm, c.name(), x)).isCloseTo(batched(c, comm, x), TOLERANCE);
        });
    }

    @Compile
    static Tensor compiled(Comm comm, String name, Tensor x) {
        Case c = cases().stream().filter(k -> k.name().equals(name)).findFirst().orElseThrow();
        return batched(c, comm, x);
    }

    /** A sum of squares across the ranks, then gathered, for {@code vmap} of {@code grad} and back. */
    static Tensor exchanged(Comm c, Tensor x) {
        Tensor shifted = c.sendrecv(x.sin(), next(c), prev(c), 3);
        return c.allgather(c.allreduce(x.mul(shifted), ReduceOp.SUM)).mul(x.sum()).sum();
    }

    static Tensor vmapOfGrad(Comm c, Tensor x) {
        return Weft.vmap(Weft.grad((Tensor v) -> exchanged(c, v))).apply(x);
    }

    @Compile
    static Tensor vmapOfGradCompiled(Comm c, Tensor x) {
        return vmapOfGrad(c, x);
    }

    static Tensor gradOfVmap(Comm c, Tensor x) {
        return Weft.grad((Tensor v) -> Weft.vmap((Tensor u) -> exchanged(c, u)).apply(v).sum()).apply(x);
    }

    @Compile
    static Tensor gradOfVmapCompiled(Comm c, Tensor x) {
        return gradOfVmap(c, x);
    }

    @Test
    void gradientsThroughCommunicationBatchAsALoopDoes() {
        for (int n = 2; n <= 3; n++) {
            RankRunner.run(n, comm -> {
                Tensor x = Batches.random(new Random(comm.rank()), -1, 1, BATCH, 3);
                Tensor expected = Batches.loop(xs -> List.of(Weft.grad((Tensor v) -> exchanged(comm, v))
                        .apply(xs.getFirst())), new int[] {0}, new int[] {0}, List.of(x), BATCH).getFirst();
                TensorAssert.assertThat(vmapOfGrad(comm, x)).isCloseTo(expected, TOLERANCE);
                TensorAssert.assertThat(vmapOfGradCompiled(comm, x)).isCloseTo(expected, TOLERANCE);
                TensorAssert.assertThat(gradOfVmap(comm, x)).isCloseTo(expected, TOLERANCE);
                TensorAssert.assertThat(gradOfVmapCompiled(comm, x)).isCloseTo(expected, TOLERANCE);
            });
        }
    }

    @Test
    void vmapOfVmapCarriesBothBatchesInOneMessage() {
        RankRunner.run(3, comm -> {
            Tensor x = Batches.random(new Random(comm.rank()), -1, 1, 2, 3, 4);
            Function<List<Tensor>, List<Tensor>> f = xs -> List.of(exchanged(comm, xs.getFirst()).add(
                    ring(comm, xs.getFirst())));
            Function<List<Tensor>, List<Tensor>> inner = Weft.vmap(f, new int[] {1}, new int[] {0});
            Tensor actual = Weft.vmap(inner, new int[] {0}, new int[] {1}).apply(List.of(x)).getFirst();
            Tensor expected = Batches.loop(xs -> Batches.loop(f, new int[] {1}, new int[] {0}, xs, 4),
                    new int[] {0}, new int[] {1}, List.of(x), 2).getFirst();
            TensorAssert.assertThat(actual).isCloseTo(expected, TOLERANCE);
        });
    }

    @Test
    void oneMessageCarriesTheWholeBatch() {
        RankRunner.run(2, comm -> {
            String mlir = Weft.lower(VmapCommTest.class, "compiled", comm, "sendrecv shift",
                    TensorSpec.of(DType.F64, BATCH, 3)).toMlir();
            assertThat(mlir.split("weft.mpi.sendrecv", -1)).hasSize(2);
            assertThat(mlir).contains("count = " + BATCH * 3 + " : i64");
        });
    }

    @Test
    void everyCommunicationPrimitiveHasACaseHere() {
        Set<Primitive<?>> covered = cases().stream().map(Case::prim).collect(Collectors.toSet());
        assertThat(CommPrims.ALL.stream().filter(p -> !covered.contains(p)).map(Primitive::name).toList())
                .as("communication primitives without a vmap case").isEmpty();
    }
}
