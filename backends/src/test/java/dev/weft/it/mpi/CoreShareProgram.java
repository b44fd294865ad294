package dev.weft.it.mpi;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.Weft;
import dev.weft.comm.Comm;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Run by {@link CoreShareUnderMpiTest} under mpirun: prints what this rank's MPI and BLAS were given, read back from the
 * process environment with {@code getenv} (Java's {@code System.getenv} is a copy made at start) and from OpenBLAS.
 */
public final class CoreShareProgram {
    private CoreShareProgram() {
    }

    public static void main(String[] args) throws Throwable {
        Weft.install();
        Comm world = Comm.world();
        Tensor.ones(DType.F32, 4, 4).matmul(Tensor.ones(DType.F32, 4, 4)); // loads the BLAS binding
        Linker linker = Linker.nativeLinker();
        MethodHandle getenv = linker.downcallHandle(linker.defaultLookup().findOrThrow("getenv"),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
        String threads = "none";
        try {
            SymbolLookup blas = SymbolLookup.libraryLookup("libopenblas.so.0", Arena.global());
            MethodHandle get = linker.downcallHandle(blas.findOrThrow("openblas_get_num_threads"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT));
            threads = Integer.toString((int) get.invokeExact());
        } catch (IllegalArgumentException absent) {
            // no OpenBLAS: Weft uses its own kernels
        }
        StringBuilder line = new StringBuilder("rank " + world.rank() + ":");
        try (Arena arena = Arena.ofConfined()) {
            for (String name : new String[] {"OMPI_MCA_mpi_yield_when_idle", "MPIR_CVAR_POLLS_BEFORE_YIELD"}) {
                MemorySegment v = (MemorySegment) getenv.invokeExact(arena.allocateFrom(name));
                line.append(' ').append(name).append('=')
                        .append(v.equals(MemorySegment.NULL) ? "unset" : v.reinterpret(64).getString(0));
            }
        }
        System.out.println(line.append(" blas=").append(threads));
    }
}
