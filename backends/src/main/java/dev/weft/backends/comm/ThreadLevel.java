package dev.weft.backends.comm;

import dev.weft.spi.Setting;
import java.util.Locale;

/**
 * MPI's thread levels, which say which threads of a rank may communicate; the environment variable {@value #ENV}
 * chooses one for MPI and fake ranks alike:
 * <ul>
 *   <li>{@code single} (default): only the thread that initialised MPI (on fake ranks: the rank's own main
 *       thread) communicates. Under MPI, Weft asks for {@code MPI_THREAD_SINGLE}, the level a C program's
 *       {@code MPI_Init} gets and the only one on which Open MPI skips its locks (Open MPI 4.1.4, 2 ranks, 8 B
 *       {@code MPI_Allreduce} in C: 0.23 µs per call, against 0.38 µs at any other level). The JVM's own threads
 *       (compiler, collector) never call MPI, which is what the level requires in practice. Communication from
 *       any other thread fails with a {@code CommException} instead of corrupting MPI's state.</li>
 *   <li>{@code funneled}: the same rule, asking for {@code MPI_THREAD_FUNNELED}.</li>
 *   <li>{@code serialized}: any thread may communicate, never two at once. Under MPI the program promises it and
 *       Weft does not check it; fake ranks fail a call made while another thread of the rank is blocked in
 *       one.</li>
 *   <li>{@code multiple}: any thread, at any time.</li>
 * </ul>
 * Under MPI the rule that applies is the one of the level MPI provided, which may be lower than the one asked
 * for.
 */
public enum ThreadLevel {
    SINGLE, FUNNELED, SERIALIZED, MULTIPLE;

    /** The environment variable choosing the level. */
    public static final String ENV = "WEFT_MPI_THREAD_LEVEL";

    /** The level {@value #ENV} asks for; {@link #SINGLE} when it is unset. */
    public static ThreadLevel requested() {
        return valueOf(Setting.MPI_THREAD_LEVEL.choice().toUpperCase(Locale.ROOT));
    }

    /** The level with MPI's code {@code code} ({@code MPI_THREAD_SINGLE} is 0 in Open MPI and MPICH alike). */
    public static ThreadLevel of(int code) {
        if (code < 0 || code >= values().length) {
            throw new IllegalStateException("MPI_Init_thread provided an unknown thread level " + code);
        }
        return values()[code];
    }

    /** MPI's code for this level. */
    public int code() {
        return ordinal();
    }

    /** Whether only the initialising thread may communicate. */
    public boolean initialThreadOnly() {
        return this == SINGLE || this == FUNNELED;
    }

    /** The value of {@value #ENV} that asks for this level. */
    public String option() {
        return name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "MPI_THREAD_" + name();
    }
}
