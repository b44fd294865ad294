package dev.weft.backends.comm.mpi;

import dev.weft.backends.ffi.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Keeps SIGSEGV and its kin with the JVM under MPI libraries built on UCX (MPICH's ch4:ucx, Open MPI's pml ucx).
 * The JVM takes these signals in normal operation (implicit null checks and safepoint polls in compiled code), but
 * UCX installs its own error handler for them at {@code MPI_Init}, which prints a backtrace and kills the process:
 * a JIT-compiled loop that meets a null crashed every rank of Mlp under MPICH. Setting {@code UCX_ERROR_SIGNALS}
 * to the empty list stops that; UCX reads it when its library is loaded, so this runs before the MPI library is
 * opened. A value the user set is left alone.
 */
final class UcxSignals {
    static final String VARIABLE = "UCX_ERROR_SIGNALS";

    private UcxSignals() {
    }

    /** {@code setenv(UCX_ERROR_SIGNALS, "", 0)} in this process, for the libraries it loads to read. */
    static void leaveToTheJvm() {
        Linker linker = Linker.nativeLinker();
        MethodHandle setenv = linker.downcallHandle(linker.defaultLookup().findOrThrow("setenv"),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                        ValueLayout.JAVA_INT));
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) setenv.invokeExact(arena.allocateFrom(VARIABLE), arena.allocateFrom(""), 0);
            if (rc != 0) {
                throw new IllegalStateException("setenv(" + VARIABLE + ") failed");
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }
}
