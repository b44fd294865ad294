package dev.weft.spi;

import java.util.List;

/**
 * Whether an MPI launcher started this process: Open MPI sets {@code OMPI_COMM_WORLD_SIZE}, MPICH's Hydra
 * {@code PMI_SIZE}, PMIx launchers {@code PMIX_RANK}. Such a process is one rank, with statics of its own.
 */
public final class MpiLaunch {
    private static final List<String> LAUNCHER_VARIABLES = List.of("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK");

    private MpiLaunch() {
    }

    /** Whether an MPI launcher started this process. */
    public static boolean launched() {
        return LAUNCHER_VARIABLES.stream().anyMatch(v -> System.getenv(v) != null);
    }
}
