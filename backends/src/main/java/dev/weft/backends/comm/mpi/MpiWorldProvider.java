package dev.weft.backends.comm.mpi;

import dev.weft.backends.comm.fake.FakeWorld;
import dev.weft.spi.CommHandle;
import dev.weft.spi.WorldProvider;

import java.util.List;

/**
 * The process's world for threads with none bound: MPI's {@code MPI_COMM_WORLD} when the process was launched by
 * {@code mpirun} (Open MPI sets {@code OMPI_COMM_WORLD_SIZE}, MPICH's Hydra {@code PMI_SIZE}, PMIx launchers
 * {@code PMIX_RANK}); otherwise a one-rank fake world, as MPI's singleton mode would give, without loading MPI.
 */
public final class MpiWorldProvider implements WorldProvider {
    private static final List<String> LAUNCHER_VARIABLES = List.of("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK");

    @Override
    public CommHandle world() {
        return launchedByMpirun() ? MpiWorld.world() : FakeWorld.single();
    }

    /** Whether an MPI launcher started this process. */
    public static boolean launchedByMpirun() {
        return LAUNCHER_VARIABLES.stream().anyMatch(v -> System.getenv(v) != null);
    }
}
