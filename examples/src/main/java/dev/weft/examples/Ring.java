package dev.weft.examples;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.Request;
import java.util.Arrays;

/**
 * A tensor travels once around the ring with isend/irecv/wait: after {@code size} hops every rank holds its own
 * tensor again, and the running sum of what passed by is the sum over all ranks.
 */
public final class Ring {
    private static final int LENGTH = 5;

    private Ring() {
    }

    /** One hop: send {@code x} to the right, receive from the left, add what arrived to {@code acc}. */
    @Compile
    static Tensor[] hop(Comm comm, Tensor x, Tensor acc) {
        int right = (comm.rank() + 1) % comm.size();
        int left = (comm.rank() + comm.size() - 1) % comm.size();
        Request out = comm.isend(x, right, 7);
        Request in = comm.irecv(x.dtype(), x.shape(), left, 7);
        Tensor got = comm.wait(in);
        comm.wait(out);
        return new Tensor[] {got, acc.add(got)};
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        int r = world.rank(), n = world.size();
        float[] mine = new float[LENGTH];
        for (int j = 0; j < LENGTH; j++) {
            mine[j] = r * 10 + j;
        }
        Tensor x = Tensor.of(mine);
        Tensor acc = Tensor.zeros(DType.F32, LENGTH);
        for (int step = 0; step < n; step++) {
            Tensor[] next = hop(world, x, acc);
            x = next[0];
            acc = next[1];
        }
        float[] expectedSum = new float[LENGTH];
        for (int j = 0; j < LENGTH; j++) {
            expectedSum[j] = 10f * n * (n - 1) / 2 + (float) n * j;
        }
        if (!Arrays.equals(x.toFloatArray(), mine) || !Arrays.equals(acc.toFloatArray(), expectedSum)) {
            throw new IllegalStateException("rank " + r + ": ring gave " + x + " and sum " + acc);
        }
        world.barrier();
        if (r == 0) {
            System.out.println("ring ok");
        }
    }
}
