package dev.weft.it.gpu;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;

/**
 * Programs with communication for the GPU target's NCCL extension, outside Weft's packages so that their ops carry
 * these source lines. Each {@code *Line} is the line of the op it names, set while the program is traced.
 */
public final class NcclPrograms {
    /** Rank-ordered and non-linear: {@code a·b + a + b}. */
    public static final ReduceOp XPLUS = ReduceOp.custom("xplus", (a, b) -> a.mul(b).add(a).add(b));
    /** Maximum through a comparison and a select. */
    public static final ReduceOp WHERE_MAX = ReduceOp.custom("where_max", (a, b) -> Tensor.where(a.gt(b), a, b));
    /** Not elementwise: adds the sum of all of {@code b}. */
    public static final ReduceOp PLUS_TOTAL = ReduceOp.custom("plus_total", (a, b) -> a.add(b.sum()));

    public static int allreduceLine;
    public static int badReduceLine;

    private NcclPrograms() {
    }

    private static int here() {
        return new Throwable().getStackTrace()[1].getLineNumber();
    }

    public static Tensor allreduce(Tensor x, Comm comm, ReduceOp op) {
        allreduceLine = here(); return comm.allreduce(x, op);
    }

    public static Tensor badReduce(Tensor x, Comm comm) {
        badReduceLine = here(); return comm.allreduce(x, PLUS_TOTAL);
    }

    public static Tensor twice(Tensor x) {
        return x.mul(2);
    }

    /** Every communication op once, on a one-rank world (messages go to rank 0). */
    public static Tensor everyOp(Tensor x, Comm comm) {
        comm.barrier();
        comm.send(x, 0, 1);
        Tensor received = comm.recv(DType.F32, new long[] {4}, 0, 1);
        Request r = comm.irecv(DType.F32, new long[] {4}, 0, 2);
        Request s = comm.isend(x, 0, 2);
        comm.wait(s);
        Tensor t = comm.wait(r).add(received).add(comm.rankTensor().cast(DType.F32));
        t = comm.allreduce(t, XPLUS).add(comm.allreduce(t, ReduceOp.SUM));
        t = comm.reduceScatter(t, ReduceOp.MAX).add(comm.reduce(t, WHERE_MAX, 0)).add(comm.bcast(t, 0));
        return comm.alltoall(t).add(comm.sendrecv(t, 0, 0, 3)).add(comm.allgather(t));
    }

    /**
     * Collectives whose results a CPU run reproduces exactly for small integer-valued inputs, concatenated: SUM
     * and custom allreduce, custom reduce-scatter, allgather, bcast, the rank, allgatherv, scatterv and alltoallv
     * (blocks of 1 or 2 elements, none empty), and on more than one rank a ring of {@code isend}/{@code irecv}.
     * {@code x} has {@code 4 · size} elements.
     */
    public static Tensor collectives(Tensor x, Comm comm) {
        int n = comm.size();
        comm.barrier();
        Tensor ring = x;
        if (n > 1) {
            Request in = comm.irecv(DType.F32, x.shape(), (comm.rank() + n - 1) % n, 7);
            Request out = comm.isend(x, (comm.rank() + 1) % n, 7);
            ring = comm.wait(in);
            comm.wait(out);
        }
        int me = comm.rank();
        long[] counts = new long[n], send = new long[n], recv = new long[n];
        long total = 0, sent = 0;
        for (int r = 0; r < n; r++) {
            counts[r] = r % 2 + 1;
            total += counts[r];
            send[r] = (me + r) % 2 + 1;
            recv[r] = (r + me) % 2 + 1;
            sent += send[r];
        }
        return Tensor.concat(0, comm.allreduce(x, ReduceOp.SUM), comm.allreduce(x, XPLUS),
                comm.reduceScatter(x, WHERE_MAX), comm.allgather(x), comm.bcast(x, n - 1), ring,
                comm.rankTensor().cast(DType.F32).reshape(1), comm.allgatherv(x.slice(0, 0, counts[me]), counts),
                comm.scatterv(x.slice(0, 0, total), counts, n - 1), comm.alltoallv(x.slice(0, 0, sent), send, recv));
    }
}
