package dev.weft.backends.comm.mpi;

import dev.weft.backends.ffi.Downcalls;
import dev.weft.spi.CoreShare;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The environment variables this process sets for the MPI library before loading it (with {@code setenv}, never
 * overwriting one the user set), since MPI and the libraries under it read them when loaded or at {@code MPI_Init}:
 * <ul>
 *   <li>{@code UCX_ERROR_SIGNALS} empty: keeps SIGSEGV and its kin with the JVM under MPI libraries built on UCX
 *       (MPICH's ch4:ucx, Open MPI's pml ucx). The JVM takes these signals in normal operation (implicit null
 *       checks and safepoint polls in compiled code), but UCX installs its own handler for them at
 *       {@code MPI_Init}, which prints a backtrace and kills the process: a JIT-compiled loop that met a null
 *       crashed every rank of Mlp under MPICH.</li>
 *   <li>When {@link CoreShare#spinInMpi} says the ranks leave no spare core: Open MPI's
 *       {@code OMPI_MCA_mpi_yield_when_idle=1} and MPICH's {@code MPIR_CVAR_POLLS_BEFORE_YIELD=1}, so that a rank
 *       waiting in MPI yields its core (each library reads only its own).</li>
 * </ul>
 */
final class MpiEnvironment {
    static final String UCX_SIGNALS = "UCX_ERROR_SIGNALS";
    static final String OPEN_MPI_YIELD = "OMPI_MCA_mpi_yield_when_idle";
    static final String MPICH_YIELD = "MPIR_CVAR_POLLS_BEFORE_YIELD";

    private MpiEnvironment() {
    }

    /** Sets the variables above that the user left unset, in this process, for the libraries it loads to read. */
    static void prepare() {
        setDefault(UCX_SIGNALS, "");
        if (!CoreShare.spinInMpi()) {
            setDefault(OPEN_MPI_YIELD, "1");
            setDefault(MPICH_YIELD, "1");
        }
    }

    /**
     * How the library of {@code flavor} waits, as {@code WEFT_DEBUG} says: as the user's own setting of its variable
     * says when there is one (the process's environment as it started: {@link #prepare} never overwrites it), else
     * as {@link CoreShare#spinInMpi} decided.
     */
    static String waiting(MpiLibrary.Flavor flavor) {
        String variable = flavor == MpiLibrary.Flavor.OPEN_MPI ? OPEN_MPI_YIELD : MPICH_YIELD;
        String users = System.getenv(variable);
        if (users != null) {
            return "MPI waits as " + variable + "=" + users + " (the user's) says";
        }
        return CoreShare.spinInMpi() ? "MPI polls while it waits" : "MPI yields while it waits (no spare core)";
    }

    /** {@code setenv(name, value, 0)}: a value already set stays. */
    private static void setDefault(String name, String value) {
        Linker linker = Linker.nativeLinker();
        MethodHandle setenv = linker.downcallHandle(linker.defaultLookup().findOrThrow("setenv"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_INT));
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) setenv.invokeExact(arena.allocateFrom(name), arena.allocateFrom(value), 0);
            if (rc != 0) {
                throw new IllegalStateException("setenv(" + name + ") failed");
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
