package dev.weft.it.comm;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.comm.Request;

/** A small compiled program for {@link DebugLogTest} to run in a child JVM: an allreduce and a ring hop. */
public final class DebugLogProgram {
    private DebugLogProgram() {
    }

    @Compile
    static Tensor step(Comm c, Tensor x) {
        Tensor total = c.allreduce(x, ReduceOp.SUM);
        Request out = c.isend(total, (c.rank() + 1) % c.size(), 1);
        Request in = c.irecv(x.dtype(), x.shape(), (c.rank() + c.size() - 1) % c.size(), 1);
        c.wait(out);
        return c.wait(in);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        step(world, Tensor.ones(DType.F32, 7));
    }
}
