package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.backends.timeline.Timeline;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.CommBinding;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A small program for the timeline tests: a compiled step (a fused kernel, then an allreduce of 4 f32) run twice
 * and one eager allreduce. Usage: {@code DIR [FAKE_RANKS [timeout]]}, DIR becoming {@code weft.timeline} before
 * anything reads it; with FAKE_RANKS it runs on that many fake ranks, else on {@code Comm.world()} (MPI under
 * mpirun). Each rank prints {@code rank R ok} when its results are right. With {@code timeout}, rank 0 then enters
 * a barrier alone (to fail at {@code WEFT_COMM_TIMEOUT}) while the other ranks wait for it to fail.
 */
public final class TimelineProgram {
    private static final CountDownLatch RANK0_ENDED = new CountDownLatch(1);
    private static boolean timeout;

    private TimelineProgram() {
    }

    @Compile
    static Tensor step(Comm comm, Tensor x) {
        return comm.allreduce(x.mul(2).add(1), ReduceOp.SUM);
    }

    public static void main(String[] args) {
        System.setProperty(Timeline.PROPERTY, args[0]);
        Weft.install();
        timeout = args.length > 2 && args[2].equals("timeout");
        if (args.length > 1) {
            FakeWorld.run(Integer.parseInt(args[1]), world -> CommBinding.with(world, TimelineProgram::rank));
        } else {
            rank();
        }
    }

    private static Void rank() {
        Comm world = Comm.world();
        int n = world.size();
        Tensor x = Tensor.full(DType.F32, 1, 4);
        Tensor y = step(world, step(world, x));
        Tensor z = world.allreduce(x, ReduceOp.SUM);
        // step(1) = 3n on every rank; step(3n) = (6n + 1) n
        float[] expected = new float[4];
        Arrays.fill(expected, (6f * n + 1) * n);
        if (!Arrays.equals(y.toFloatArray(), expected) || z.toFloatArray()[0] != n) {
            throw new AssertionError("rank " + world.rank() + ": " + Arrays.toString(y.toFloatArray()) + ", "
                    + Arrays.toString(z.toFloatArray()));
        }
        System.out.println("rank " + world.rank() + " ok");
        if (timeout) {
            if (world.rank() == 0) {
                try {
                    world.barrier();
                } finally {
                    RANK0_ENDED.countDown();
                }
            } else {
                try {
                    RANK0_ENDED.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return null;
    }
}
