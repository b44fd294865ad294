package dev.weft.backends.cli;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;

/**
 * The compiled programs {@link ArchiveTraining} runs: each kind of op a first program is likely to use (fused
 * elementwise loops in f32 and f64, reductions, a matmul, a loop carrying its value, a branch, collectives), so
 * that their classes and lambdas are in the archive.
 */
final class TrainingPrograms {
    private TrainingPrograms() {
    }

    @Compile
    static Tensor chain(Tensor x) {
        return x.mul(2).add(1).sin().mul(x).sub(0.5).abs();
    }

    @Compile
    static Tensor pi(Comm comm, int n) {
        long perRank = n / comm.size();
        Tensor i = Tensor.arange(DType.F64, perRank).add((double) comm.rank() * perRank);
        Tensor x = i.add(0.5).div(n);
        return comm.allreduce(x.mul(x).add(1).pow(-1).mul(4).sum().div(n), ReduceOp.SUM);
    }

    @Compile
    static Tensor layer(Comm comm, Tensor x, Tensor w) {
        Tensor h = x.matmul(w).tanh().exp().sqrt().log();
        Tensor all = comm.allgather(h.sum(0));
        return comm.bcast(all.max().add(h.mean()).sub(h.min()), 0);
    }

    @Compile
    static Tensor loop(Comm comm, Tensor x) {
        Tensor y = Weft.fori(0, 3, x, (i, c) -> comm.allreduce(c, ReduceOp.SUM).mul(0.5));
        Tensor z = Weft.cond(y.sum().gt(0), () -> y.neg(), () -> y.rsqrt().maximum(0));
        int right = (comm.rank() + 1) % comm.size(), left = (comm.rank() + comm.size() - 1) % comm.size();
        Tensor r = comm.sendrecv(z, right, left, 7);
        return Tensor.where(r.lt(0), r, z).cast(DType.F64);
    }
}
