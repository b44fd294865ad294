package dev.weft.it.ad;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import java.util.List;

/** Differentiated programs, each callable eagerly ({@code ...Eager}) and as a {@code @Compile} method. */
public final class AdPrograms {
    private AdPrograms() {
    }

    /** A loss with a matmul, a reduction and elementwise ops. */
    static Tensor loss(Tensor w, Tensor x) {
        Tensor h = x.matmul(w).tanh();
        return h.mul(h).sum().add(w.mul(w).sum().mul(0.1));
    }

    static Tensor gradEager(Tensor w, Tensor x) {
        return Weft.grad(v -> loss(v, x)).apply(w);
    }

    @Compile
    static Tensor gradCompiled(Tensor w, Tensor x) {
        return Weft.grad(v -> loss(v, x)).apply(w);
    }

    /** {@code d/dx sum(d/dx sum(sin(x) * x))}, elementwise the second derivative of {@code sin(x) x}. */
    static Tensor secondEager(Tensor x) {
        return Weft.grad(v -> Weft.grad(u -> u.sin().mul(u).sum()).apply(v).sum()).apply(x);
    }

    @Compile
    static Tensor secondCompiled(Tensor x) {
        return secondEager(x);
    }

    /** {@code x} repeatedly scaled by {@code cos(i * x)}-dependent factors in a loop. */
    static Tensor loop(Tensor x, int steps) {
        return Weft.fori(0, steps, x, (i, c) -> c.mul(c.mul(0.3).cos()).add(i.cast(DType.F64).mul(0.01)));
    }

    static Tensor loopGradEager(Tensor x, int steps) {
        return Weft.grad(v -> loop(v, steps).sum()).apply(x);
    }

    @Compile
    static Tensor loopGradCompiled(Tensor x, int steps) {
        return Weft.grad(v -> loop(v, steps).sum()).apply(x);
    }

    static List<Tensor> loopJvpEager(Tensor x, Tensor t, int steps) {
        return Weft.jvp(v -> List.of(loop(v.getFirst(), steps)), List.of(x), List.of(t)).tangents();
    }

    @Compile
    static List<Tensor> loopJvpCompiled(Tensor x, Tensor t, int steps) {
        return loopJvpEager(x, t, steps);
    }

    /** A branch on a reduction of {@code x}: exp on one side, a square on the other. */
    static Tensor branch(Tensor x) {
        return Weft.cond(x.sum().gt(0), () -> x.exp(), () -> x.mul(x));
    }

    static Tensor branchGradEager(Tensor x) {
        return Weft.grad(v -> branch(v).sum()).apply(x);
    }

    @Compile
    static Tensor branchGradCompiled(Tensor x) {
        return branchGradEager(x);
    }

    static List<Tensor> branchJvpEager(Tensor x, Tensor t) {
        return Weft.jvp(v -> List.of(branch(v.getFirst())), List.of(x), List.of(t)).tangents();
    }

    @Compile
    static List<Tensor> branchJvpCompiled(Tensor x, Tensor t) {
        return branchJvpEager(x, t);
    }

    /**
     * Data-parallel least squares, one gradient step: the gradient of this rank's share of the mean squared
     * error, summed over the ranks.
     */
    public static Tensor dataParallelStepEager(Comm comm, Tensor x, Tensor y, Tensor w, double total) {
        Tensor g = comm.allreduce(Weft.grad(v -> {
            Tensor r = x.matmul(v).sub(y);
            return r.mul(r).sum().div(total);
        }).apply(w), ReduceOp.SUM);
        return w.sub(g.mul(0.5));
    }

    @Compile
    public static Tensor dataParallelStepCompiled(Comm comm, Tensor x, Tensor y, Tensor w, double total) {
        return dataParallelStepEager(comm, x, y, w, total);
    }

    /** The same step with the gradient written by hand, as DataParallel had it. */
    static Tensor dataParallelStepByHand(Comm comm, Tensor x, Tensor y, Tensor w, double total) {
        Tensor r = x.matmul(w).sub(y);
        Tensor g = comm.allreduce(x.transpose().matmul(r), ReduceOp.SUM).mul(2 / total);
        return w.sub(g.mul(0.5));
    }

    /** The gradient of a halo exchange with nonblocking messages, as in Heat. */
    static Tensor haloGradEager(Comm c, Tensor x) {
        return Weft.grad(v -> {
            int next = (c.rank() + 1) % c.size(), prev = (c.rank() + c.size() - 1) % c.size();
            dev.weft.comm.Request up = c.irecv(v.dtype(), v.shape(), prev, 3);
            dev.weft.comm.Request down = c.isend(v.tanh(), next, 3);
            List<Tensor> got = c.waitAll(up, down);
            return got.getFirst().mul(v).sum();
        }).apply(x);
    }

    @Compile
    static Tensor haloGradCompiled(Comm c, Tensor x) {
        return haloGradEager(c, x);
    }
}
