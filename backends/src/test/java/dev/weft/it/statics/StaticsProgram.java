package dev.weft.it.statics;

import dev.weft.Compile;
import dev.weft.Tensor;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.spi.Interpreters;
import java.util.Arrays;

/**
 * A program written as for {@code mpirun}: its communicator, rank and per-rank data in static fields, and a
 * {@code @Compile} method that reads the rank from its static. Each rank leaves what it computed in the system
 * property {@code weft.statics.<rank>} (the JDK's, so shared by every copy of this class), for the tests to read.
 */
public final class StaticsProgram {
    static Comm comm;
    static int rank;
    static float[] mine;
    /** How many times {@link #shifted}'s body ran: only while it was traced. */
    static int traces;

    private StaticsProgram() {
    }

    @Compile
    static Tensor shifted(Tensor x) {
        if (Interpreters.isTracing()) {
            traces++;
        }
        return x.add(rank);
    }

    public static void main(String[] args) {
        comm = Comm.world();
        rank = comm.rank();
        mine = new float[] {rank + 1, 10f * (rank + 1)};
        double sum = comm.allreduce(Tensor.of(new float[] {rank + 1}, 1), ReduceOp.SUM).sum().item();
        float[] all = comm.allreduce(Tensor.of(mine, 2), ReduceOp.SUM).toFloatArray();
        shifted(Tensor.of(mine, 2));
        float[] shifted = shifted(Tensor.of(mine, 2)).toFloatArray();
        System.setProperty("weft.statics." + rank, "sum=" + sum + " all=" + Arrays.toString(all) + " shifted="
                + Arrays.toString(shifted) + " traces=" + traces);
    }
}
