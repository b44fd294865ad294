package dev.weft.it.check;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.IntPredicate;

/**
 * Programs whose ranks communicate differently, one per mismatch the schedule check must catch; shared by the
 * fake-rank test and the {@code mpirun} program, each of which runs them inside its own {@code @Compile} method
 * through {@link #outcome}. Rank 0 and rank 1 diverge; ranks above 1 act as rank 1. Each case lists the ranks that
 * fail and what each of their errors must quote.
 */
public final class MismatchPrograms {
    /** A case: its name, its program on one rank, the ranks it fails on, and what the message names. */
    public record Case(String name, BiFunction<Comm, Tensor, Tensor> program, IntPredicate failsOn,
                       List<String> fragments) {
        Case(String name, BiFunction<Comm, Tensor, Tensor> program, List<String> fragments) {
            this(name, program, r -> true, fragments);
        }
    }

    /** The cases; {@code x} is an f32[4]. */
    public static final List<Case> CASES = List.of(
            new Case("count", (c, x) -> c.rank() == 0 ? c.allreduce(x, ReduceOp.SUM)
                    : c.allreduce(Tensor.zeros(DType.F32, 100_000), ReduceOp.SUM),
                    List.of("at collective #", "rank 0 allreduce(SUM) f32[4] at MismatchPrograms.java:",
                            "rank 1 allreduce(SUM) f32[100000] at MismatchPrograms.java:")),
            new Case("send f32, recv i32", MismatchPrograms::sendF32RecvI32, r -> r == 1,
                    List.of("message #0 from rank 0 to rank 1 with tag 5", "rank 0 send(to 1, tag 5) f32[4]",
                            "rank 1 recv(from 0, tag 5) i32[4]")),
            new Case("dtype", (c, x) -> c.rank() == 0 ? c.allreduce(x, ReduceOp.SUM)
                    : c.allreduce(x.cast(DType.F64), ReduceOp.SUM).cast(DType.F32),
                    List.of("rank 0 allreduce(SUM) f32[4]", "rank 1 allreduce(SUM) f64[4]")),
            new Case("reduce op", (c, x) -> c.allreduce(x, c.rank() == 0 ? ReduceOp.SUM : ReduceOp.MAX),
                    List.of("rank 0 allreduce(SUM) f32[4]", "rank 1 allreduce(MAX) f32[4]")),
            new Case("root", (c, x) -> c.bcast(x, c.rank() == 0 ? 0 : 1),
                    List.of("rank 0 bcast(root 0) f32[4]", "rank 1 bcast(root 1) f32[4]")),
            new Case("kind", (c, x) -> c.rank() == 0 ? c.allreduce(x, ReduceOp.SUM) : c.bcast(x, 0),
                    List.of("rank 0 allreduce(SUM) f32[4]", "rank 1 bcast(root 0) f32[4]")),
            new Case("barrier on rank 0 only", MismatchPrograms::barrierOnRankZero,
                    List.of("at collective #", "rank 0 barrier at", "rank 1 allreduce(SUM) f32[4] at")),
            new Case("loop trip count", (c, x) -> c.allreduce(x, ReduceOp.SUM).add(
                            Weft.fori(0, c.rank() == 0 ? 3 : 4, x, (i, y) -> c.allreduce(y, ReduceOp.SUM))),
                    List.of("at collective #", "rank 0 barrier at MismatchPrograms.java:",
                            "rank 1 allreduce(SUM) f32[4] at MismatchPrograms.java:")),
            new Case("dup on rank 0 only", MismatchPrograms::dupOnRankZero,
                    List.of("at collective #", "rank 0 dup at MismatchPrograms.java:",
                            "rank 1 allreduce(SUM) f32[4] at MismatchPrograms.java:")),
            new Case("split against dup",
                    (c, x) -> (c.rank() == 0 ? c.split(0, 0) : c.dup()).allreduce(x, ReduceOp.SUM),
                    List.of("rank 0 split at MismatchPrograms.java:", "rank 1 dup at MismatchPrograms.java:")),
            new Case("send f32, recvAny i32 from any rank", MismatchPrograms::sendF32RecvAnyI32, r -> r == 1,
                    List.of("message #0 from rank 0 to rank 1 with tag 8", "rank 0 send(to 1, tag 8) f32[4]",
                            "rank 1 recv_any(from any, tag any) i32[4]")));

    private MismatchPrograms() {
    }

    /**
     * Runs {@code program} (a case's, compiled by the caller) then barriers until one passes, and returns the first
     * error either raised (a schedule mismatch, or the runtime's own refusal of a message), or null. A rank whose
     * program ran fewer collectives than its peers' (the loop trip count) learns of it at its next collective, the
     * barrier, as under MPI it would only then disagree; the ranks' next barrier lines them up again.
     */
    public static WeftException outcome(Comm c, Runnable program) {
        WeftException first = null;
        try {
            program.run();
        } catch (WeftException e) {
            first = e;
        }
        while (true) {
            try {
                c.barrier();
                return first;
            } catch (WeftException e) {
                first = first == null ? e : first;
            }
        }
    }

    private static Tensor sendF32RecvI32(Comm c, Tensor x) {
        if (c.rank() == 0) {
            c.send(x, 1, 5);
            return x;
        }
        if (c.rank() == 1) {
            return c.recv(DType.I32, new long[] {4}, 0, 5).cast(DType.F32);
        }
        return x;
    }

    /** The envelope a wildcard receive checks is that of the source and tag it matched. */
    private static Tensor sendF32RecvAnyI32(Comm c, Tensor x) {
        if (c.rank() == 0) {
            c.send(x, 1, 8);
            return x;
        }
        if (c.rank() == 1) {
            return c.recvAny(DType.I32, new long[] {4}, Comm.ANY_SOURCE, Comm.ANY_TAG).tensor().cast(DType.F32);
        }
        return x;
    }

    private static Tensor dupOnRankZero(Comm c, Tensor x) {
        if (c.rank() == 0) {
            c.dup();
        }
        return c.allreduce(x, ReduceOp.SUM);
    }

    private static Tensor barrierOnRankZero(Comm c, Tensor x) {
        if (c.rank() == 0) {
            c.barrier();
        }
        return c.allreduce(x, ReduceOp.SUM);
    }
}
