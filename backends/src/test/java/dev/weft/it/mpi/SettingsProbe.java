package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.gpu.ptx.PtxTarget;
import dev.weft.backends.timeline.Timeline;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.CommBinding;

/**
 * Uses every setting Weft reads, for {@link BadSettingsTest}: installs the agent, picks a GPU architecture, makes
 * the process's world, then on two fake ranks allocates past the memory budget's small-buffer size, multiplies
 * matrices, compiles a fused f64 loop with an allreduce, runs an eager allreduce and exchanges a message with
 * {@code isend}/{@code irecv}, recording a timeline in DIR.
 * Usage: {@code DIR}. Prints {@code probe ok}, or the failure's whole stack trace and exits 1.
 */
public final class SettingsProbe {
    private SettingsProbe() {
    }

    @Compile
    static Tensor step(Comm comm, Tensor x) {
        return comm.allreduce(x.mul(2).add(1), ReduceOp.SUM);
    }

    public static void main(String[] args) {
        System.setProperty(Timeline.PROPERTY, args[0]);
        try {
            Weft.install();
            PtxTarget.fromSystemProperties();
            Comm.world();
            FakeWorld.run(2, world -> CommBinding.with(world, SettingsProbe::rank));
            System.out.println("probe ok");
        } catch (Throwable t) {
            t.printStackTrace(System.out);
            System.exit(1);
        }
    }

    private static Void rank() {
        Comm world = Comm.world();
        Tensor x = Tensor.ones(DType.F64, 512);
        Tensor.ones(DType.F64, 2, 2).matmul(Tensor.ones(DType.F64, 2, 2)).toDoubleArray();
        step(world, x).toDoubleArray();
        world.allreduce(x, ReduceOp.SUM).toDoubleArray();
        int peer = 1 - world.rank();
        world.waitAll(world.isend(x, peer, 0), world.irecv(DType.F64, new long[] {512}, peer, 0));
        return null;
    }
}
