package dev.weft.it.comm;

import static dev.weft.testing.TensorAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.TensorSpec;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;
import dev.weft.testing.Ranks;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/**
 * The nonblocking collectives on 1 to 4 fake ranks: each one's result, eager and compiled (with computation between
 * the start and the wait), equals its blocking collective's; requests complete out of order and among blocking
 * collectives; misuse fails as an {@code isend}'s request does.
 */
class NonblockingCollectivesTest {
    private static final List<DType> NUMERIC = List.of(DType.F32, DType.F64, DType.I32, DType.I64);
    private static final int BLOCK = 3;
    /** Per rank thread: the line of the call expected in an error. */
    private static final ThreadLocal<String> LINE = new ThreadLocal<>();

    @BeforeAll
    static void install() {
        Weft.install();
    }

    /** Rank {@code r}'s input of {@code n} small positive integers, exact in every dtype. */
    private static Tensor input(DType t, int r, int n) {
        long[] v = new long[n];
        for (int i = 0; i < n; i++) {
            v[i] = (r * 7L + i * 3L) % 5 + 1;
        }
        return Tensor.of(v, n).cast(t);
    }

    /** The blocking collectives, by name. */
    private static Tensor blocking(Comm c, String op, Tensor x) {
        return switch (op) {
            case "allreduce" -> c.allreduce(x, ReduceOp.SUM);
            case "allreduce_max" -> c.allreduce(x, ReduceOp.MAX);
            case "allgather" -> c.allgather(x);
            case "reduce_scatter" -> c.reduceScatter(x, ReduceOp.SUM);
            case "bcast" -> c.bcast(x, c.size() - 1);
            case "alltoall" -> c.alltoall(x);
            default -> throw new IllegalArgumentException(op);
        };
    }

    /** The nonblocking collective of the same name, started. */
    private static Request start(Comm c, String op, Tensor x) {
        return switch (op) {
            case "allreduce" -> c.iallreduce(x, ReduceOp.SUM);
            case "allreduce_max" -> c.iallreduce(x, ReduceOp.MAX);
            case "allgather" -> c.iallgather(x);
            case "reduce_scatter" -> c.ireduceScatter(x, ReduceOp.SUM);
            case "bcast" -> c.ibcast(x, c.size() - 1);
            case "alltoall" -> c.ialltoall(x);
            default -> throw new IllegalArgumentException(op);
        };
    }

    /** Starts {@code op}, computes on other data meanwhile, then waits: the result and the computation's sum. */
    @Compile
    static Tensor overlapped(Comm c, String op, Tensor x, Tensor other) {
        Request r = start(c, op, x);
        Tensor busy = other.mul(other).add(1).sum();
        Tensor y = c.wait(r);
        return y.cast(DType.F64).sum().add(busy.cast(DType.F64));
    }

    /** {@code op} as the compiled program returns it, without other work. */
    @Compile
    static Tensor startWait(Comm c, String op, Tensor x) {
        return c.wait(start(c, op, x));
    }

    /** Two collectives in flight, waited in the other order, with a blocking one between the starts. */
    @Compile
    static Tensor outOfOrder(Comm c, Tensor x) {
        Request sum = c.iallreduce(x, ReduceOp.SUM);
        Tensor max = c.allreduce(x, ReduceOp.MAX);
        Request gathered = c.iallgather(x);
        Request barrier = c.ibarrier();
        Tensor g = c.wait(gathered);
        c.wait(barrier);
        return c.wait(sum).add(max).sum().add(g.sum());
    }

    @Compile
    static Tensor neverWaited(Comm c, Tensor x) {
        LINE.set(CallSite.here()); c.iallreduce(x, ReduceOp.SUM);
        return x.add(1);
    }

    @Compile
    static Tensor waitedTwice(Comm c, Tensor x) {
        Request r = c.iallgather(x);
        Tensor y = c.wait(r);
        LINE.set(CallSite.here()); c.wait(r);
        return y;
    }

    /** Waited at once, as written; the product is independent of the transfer. */
    @Compile
    static Tensor waitedAtOnce(Comm c, Tensor grad, Tensor a, Tensor b) {
        Tensor sum = c.wait(c.iallreduce(grad, ReduceOp.SUM));
        Tensor product = a.matmul(b).tanh();
        return sum.sum().add(product.sum());
    }

    private static Tensor operand(DType t, Comm c, String op) {
        boolean split = op.equals("reduce_scatter") || op.equals("alltoall");
        return input(t, c.rank(), split ? c.size() * BLOCK : 5);
    }

    @Ranks({1, 2, 3, 4})
    void eachEqualsItsBlockingCollectiveEagerAndCompiled(Comm c) {
        for (String op : List.of("allreduce", "allreduce_max", "allgather", "reduce_scatter", "bcast", "alltoall")) {
            for (DType t : NUMERIC) {
                Tensor x = operand(t, c, op);
                Tensor expected = blocking(c, op, x);
                assertThat(c.wait(start(c, op, x))).as("eager %s %s", op, t).isEqualTo(expected);
                assertThat(startWait(c, op, x)).as("compiled %s %s", op, t).isEqualTo(expected);
                Tensor other = Tensor.arange(DType.F32, 7);
                assertThat(overlapped(c, op, x, other)).as("overlapped %s %s", op, t)
                        .isEqualTo(expected.cast(DType.F64).sum().add(other.mul(other).add(1).sum().cast(DType.F64)));
            }
        }
    }

    @Ranks({2})
    void theScheduleRunsIndependentComputationBetweenTheStartAndTheWait(Comm c) {
        String mlir = Weft.lower(NonblockingCollectivesTest.class, "waitedAtOnce", c, TensorSpec.of(DType.F32, 64),
                TensorSpec.of(DType.F32, 8, 8), TensorSpec.of(DType.F32, 8, 8)).toMlir();
        int start = mlir.indexOf("weft.mpi.iallreduce");
        int product = mlir.indexOf("stablehlo.dot_general");
        int done = mlir.indexOf("weft.mpi.wait_collective");
        assertThat(start).as(mlir).isPositive().isLessThan(product);
        assertThat(product).as(mlir).isLessThan(done);
        assertThat(mlir.indexOf("stablehlo.tanh")).as("the product's reduction, after the result's first use as written")
                .isLessThan(done);
        assertThat(mlir).contains("backend_config = {comm = \"world\", start = \"iallreduce\", dtype = \"f32\"");
        Tensor grad = Tensor.arange(DType.F32, 64).add(c.rank());
        Tensor a = Tensor.arange(DType.F32, 64).reshape(8, 8).div(64);
        assertThat(waitedAtOnce(c, grad, a, a)).isEqualTo(c.allreduce(grad, ReduceOp.SUM).sum()
                .add(a.matmul(a).tanh().sum()));
    }

    @Ranks({1, 2, 3, 4})
    void ibarrierCompletesAndWaitGivesNull(Comm c) {
        Request r = c.ibarrier();
        assertThat(r.isCompleted()).isFalse();
        assertThat(c.wait(r)).isNull();
        assertThat(r.isCompleted()).isTrue();
    }

    @Ranks({1, 2, 3, 4})
    void requestsCompleteOutOfOrderAmongBlockingCollectives(Comm c) {
        Tensor x = input(DType.F32, c.rank(), 4);
        Tensor expected = c.allreduce(x, ReduceOp.SUM).add(c.allreduce(x, ReduceOp.MAX)).sum()
                .add(c.allgather(x).sum());
        assertThat(outOfOrder(c, x)).isEqualTo(expected);
        Request sum = c.iallreduce(x, ReduceOp.SUM);
        Request gathered = c.iallgather(x);
        assertThat(c.wait(gathered)).isEqualTo(c.allgather(x));
        assertThat(c.waitAll(sum).getFirst()).isEqualTo(c.allreduce(x, ReduceOp.SUM));
    }

    @Ranks({1, 2})
    void aRequestNeverWaitedFailsWhileTracing(Comm c) {
        LINE.remove();
        assertThatThrownBy(() -> neverWaited(c, input(DType.F32, 0, 3))).isInstanceOf(WeftException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains(LINE.get()).contains("never waited")
                        .contains("iallreduce"));
    }

    @Ranks({1, 2})
    void aRequestWaitedTwiceFailsNamingBothLines(Comm c) {
        LINE.remove();
        assertThatThrownBy(() -> waitedTwice(c, input(DType.F32, 0, 3))).isInstanceOf(WeftException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains(LINE.get()).contains("waited twice"));
        Request r = c.iallreduce(input(DType.F32, 0, 3), ReduceOp.SUM);
        c.wait(r);
        assertThatThrownBy(() -> c.wait(r)).isInstanceOf(WeftException.class).hasMessageContaining("waited twice");
    }

    @Ranks({1, 2})
    void aCustomReduceOpIsRefusedNamingTheLine(Comm c) {
        ReduceOp custom = ReduceOp.custom("plus", Tensor::add);
        assertThatThrownBy(() -> c.iallreduce(input(DType.F32, 0, 3), custom)).isInstanceOf(WeftException.class)
                .hasMessageContaining("NonblockingCollectivesTest.java").hasMessageContaining("custom reduce op");
    }

    @Ranks({2, 3})
    void aStartMeetingABlockingCollectiveIsAMismatchNamingBothLines(Comm c) {
        Tensor x = input(DType.F32, c.rank(), 3);
        assertThatThrownBy(() -> {
            if (c.rank() == 0) {
                c.wait(c.iallreduce(x, ReduceOp.SUM));
            } else {
                c.allreduce(x, ReduceOp.SUM);
            }
        }).isInstanceOf(WeftException.class).hasMessageContaining("iallreduce").hasMessageContaining("NonblockingCollectivesTest.java");
    }
}
