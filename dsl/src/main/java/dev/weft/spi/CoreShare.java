package dev.weft.spi;

/**
 * This process's share of the node's cores: the available processors divided by the MPI ranks on this node, as
 * Open MPI's or MPICH's launcher says (one rank outside a launcher), and at least one. Ranks that each use their
 * share do not oversubscribe the cores they share, or spin in MPI while a peer waits for a core.
 */
public final class CoreShare {
    /** The cores of this process's share. */
    public static final int CORES = Math.max(1, Runtime.getRuntime().availableProcessors() / localRanks());

    private CoreShare() {
    }

    /** MPI ranks on this node according to Open MPI's or MPICH's launcher; 1 outside a launcher. */
    private static int localRanks() {
        for (String var : new String[] {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"}) {
            String v = System.getenv(var);
            if (v != null && v.matches("\\d+") && Integer.parseInt(v) > 0) {
                return Integer.parseInt(v);
            }
        }
        return 1;
    }
}
