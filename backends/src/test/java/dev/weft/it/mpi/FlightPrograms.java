package dev.weft.it.mpi;

import dev.weft.Compile;
import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;

/**
 * Programs whose ranks disagree, run under {@code mpirun} by {@link MpiFlightTest} with a small
 * {@code WEFT_COMM_TIMEOUT}.
 * <ul>
 *   <li>{@code barrier}: every rank sums a tensor in a compiled allreduce, then rank 0 alone enters a barrier.</li>
 *   <li>{@code tags}: rank 0 waits to receive from rank 1 with tag 5; rank 1 sends to rank 0 with tag 6, which
 *       MPI buffers (it is small), then waits in a barrier.</li>
 * </ul>
 */
public final class FlightPrograms {
    private FlightPrograms() {
    }

    @Compile
    static Tensor sum(Comm comm, Tensor x) {
        return comm.allreduce(x, ReduceOp.SUM);
    }

    public static void main(String[] args) {
        Weft.install();
        Comm world = Comm.world();
        switch (args[0]) {
            case "barrier" -> {
                sum(world, Tensor.full(DType.F32, 1, 4));
                if (world.rank() == 0) {
                    world.barrier();
                }
            }
            case "tags" -> {
                if (world.rank() == 0) {
                    world.recv(DType.F32, new long[] {4}, 1, 5);
                } else {
                    world.send(Tensor.full(DType.F32, 1, 4), 0, 6);
                    world.barrier();
                }
            }
            default -> throw new IllegalArgumentException("unknown program " + args[0]);
        }
    }
}
