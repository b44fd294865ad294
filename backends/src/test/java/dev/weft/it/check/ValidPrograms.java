package dev.weft.it.check;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;

/**
 * Compiled programs that ranks combine differently in programs MPI accepts (one rank compiles what another runs in
 * two calls, or eagerly, or not at all); shared by the fake-rank test and the {@code mpirun} program.
 */
public final class ValidPrograms {
    private ValidPrograms() {
    }

    @Compile
    public static Tensor sum(Comm c, Tensor x) {
        return c.allreduce(x, ReduceOp.SUM);
    }

    @Compile
    public static Tensor twoSums(Comm c, Tensor x) {
        return c.allreduce(c.allreduce(x, ReduceOp.SUM), ReduceOp.SUM);
    }

    /** The sum over ranks of the sum of {@code x}: a scalar whatever {@code x}'s shape. */
    @Compile
    public static Tensor total(Comm c, Tensor x) {
        return c.allreduce(x.sum(), ReduceOp.SUM);
    }

    @Compile
    public static Tensor sendTo(Comm c, Tensor x, int dest, int tag) {
        c.send(x, dest, tag);
        return x;
    }

    @Compile
    public static Tensor recvFrom(Comm c, int src, int tag) {
        return c.recv(DType.F32, new long[] {4}, src, tag);
    }
}
