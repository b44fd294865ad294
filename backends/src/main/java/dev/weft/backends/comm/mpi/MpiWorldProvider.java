package dev.weft.backends.comm.mpi;

import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.spi.CommHandle;
import dev.weft.spi.MpiLaunch;
import dev.weft.spi.WorldProvider;


/**
 * The process's world for threads with none bound: MPI's {@code MPI_COMM_WORLD} when the process was launched by
 * {@code mpirun} ({@link MpiLaunch}); otherwise a one-rank fake world, as MPI's singleton mode would give, without loading MPI.
 */
public final class MpiWorldProvider implements WorldProvider {
    @Override
    public CommHandle world() {
        return launchedByMpirun() ? MpiWorld.world() : FakeWorld.single();
    }

    /** Whether an MPI launcher started this process. */
    public static boolean launchedByMpirun() {
        return MpiLaunch.launched();
    }
}
