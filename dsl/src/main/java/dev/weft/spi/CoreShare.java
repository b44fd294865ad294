package dev.weft.spi;

/**
 * The one place that decides how many cores each rank uses, for everything that runs threads or waits: this
 * process's share of the node's cores is the available processors divided by the MPI ranks on this node, as Open
 * MPI's or MPICH's launcher says (one rank outside a launcher), and at least one. Weft's own loop pool, the BLAS
 * library's threads and the Java matrix-product fallback use that share, so ranks that each use theirs do not
 * oversubscribe the cores they share. And when the ranks leave no core spare ({@link #spinInMpi} false), MPI is
 * asked to yield while it waits instead of busy-polling, so that a waiting rank does not take the core its peer,
 * the JIT compiler or the garbage collector needs. An explicit setting of the user's (a BLAS thread count, an MPI
 * parameter) always wins. {@code WEFT_DEBUG=1} prints the share ({@link #describe}) and, under MPI, how the library
 * waits.
 */
public final class CoreShare {
    /** The processors this JVM may use. */
    public static final int PROCESSORS = Runtime.getRuntime().availableProcessors();
    /** MPI ranks on this node according to Open MPI's or MPICH's launcher; 1 outside a launcher. */
    public static final int LOCAL_RANKS = localRanks();
    /** The cores of this process's share. */
    public static final int CORES = cores(PROCESSORS, LOCAL_RANKS);

    private CoreShare() {
    }

    /**
     * Whether MPI may busy-poll while it waits: only when the node has a core beyond one per rank, for the JIT
     * compiler and the collector. A data-parallel step on 2 ranks of a 2-core machine ran 16.6 steps/s with Open MPI
     * polling and 32.4 with it yielding (issue 39's measurement); polling pays only where cores are spare.
     */
    public static boolean spinInMpi() {
        return spinInMpi(PROCESSORS, LOCAL_RANKS);
    }

    static boolean spinInMpi(int processors, int localRanks) {
        return processors > localRanks;
    }

    /** The cores each of {@code localRanks} ranks uses on a node of {@code processors}: at least one. */
    static int cores(int processors, int localRanks) {
        return Math.max(1, processors / localRanks);
    }

    /**
     * The share in one line, as {@code WEFT_DEBUG} prints it; the MPI backend adds how its library waits, which a
     * user's own MPI parameter may decide instead.
     */
    public static String describe() {
        return LOCAL_RANKS + " rank(s) on this node, " + PROCESSORS + " processor(s): " + CORES + " core(s) per rank";
    }

    private static int localRanks() {
        for (String var : new String[] {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"}) {
            String v = System.getenv(var);
            if (v != null && v.matches("\\d{1,9}") && Integer.parseInt(v) > 0) {
                return Integer.parseInt(v);
            }
        }
        return 1;
    }
}
