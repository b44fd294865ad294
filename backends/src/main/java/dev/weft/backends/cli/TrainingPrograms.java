package dev.weft.backends.cli;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.ValueAndGrad;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.nn.Nn;
import dev.weft.optim.Adam;
import dev.weft.optim.Sgd;
import dev.weft.optim.Update;

/**
 * The compiled programs {@link ArchiveTraining} runs: each kind of op a first program is likely to use (fused
 * elementwise loops in f32 and f64, reductions, a matmul, a loop carrying its value, a branch, collectives, a
 * data-parallel training step with each optimizer), so that their classes and lambdas are in the archive.
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

    /** A two-layer relu network's parameters, a record as a user writes them. */
    record Mlp(Tensor w1, Tensor b1, Tensor w2, Tensor b2) {
    }

    /** What a training step gives: the next parameters and optimizer state, and the loss before the update. */
    record Step<S>(Mlp params, S opt, Tensor loss) {
    }

    /** The mean cross-entropy of {@code p} over every rank's samples {@code x} with labels {@code y}. */
    static Tensor loss(Comm comm, Mlp p, Tensor x, Tensor y) {
        Tensor logits = Nn.relu(x.matmul(p.w1()).add(p.b1())).matmul(p.w2()).add(p.b2());
        return comm.allreduce(Nn.crossEntropy(logits, y).div(comm.size()), ReduceOp.SUM);
    }

    @Compile
    static Step<Sgd.State<Mlp>> sgdStep(Comm comm, Mlp params, Sgd.State<Mlp> opt, Tensor x, Tensor y) {
        ValueAndGrad.Of<Mlp> vg = Weft.valueAndGrad(comm.replicated(params), p -> loss(comm, p, x, y));
        Update<Mlp, Sgd.State<Mlp>> u = Sgd.of(0.1).update(vg.grad(), opt, params);
        return new Step<>(u.params(), u.state(), vg.value());
    }

    @Compile
    static Step<Adam.State<Mlp>> adamStep(Comm comm, Mlp params, Adam.State<Mlp> opt, Tensor x, Tensor y) {
        ValueAndGrad.Of<Mlp> vg = Weft.valueAndGrad(comm.replicated(params), p -> loss(comm, p, x, y));
        Update<Mlp, Adam.State<Mlp>> u = Adam.of(0.01).update(vg.grad(), opt, params);
        return new Step<>(u.params(), u.state(), vg.value());
    }
}
