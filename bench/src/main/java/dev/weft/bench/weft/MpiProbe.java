package dev.weft.bench.weft;

import dev.weft.Weft;
import dev.weft.comm.Comm;

/**
 * Exits 0 only when this process is a rank of a real MPI job of the size given as the argument: the driver's test
 * of whether {@code bin/weft run --comm mpi} works yet (a launcher that falls back to fake ranks fails it).
 */
public final class MpiProbe {
    private MpiProbe() {
    }

    public static void main(String[] args) {
        Weft.install();
        boolean launched = System.getenv("OMPI_COMM_WORLD_SIZE") != null || System.getenv("PMI_SIZE") != null
                || System.getenv("PMIX_RANK") != null;
        int size = Comm.world().size();
        if (!launched || size != Integer.parseInt(args[0])) {
            System.err.println("not an MPI job of " + args[0] + " ranks (launched by mpirun: " + launched
                    + ", world size " + size + ")");
            System.exit(1);
        }
    }
}
