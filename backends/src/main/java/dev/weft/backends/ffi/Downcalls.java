package dev.weft.backends.ffi;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/** The FFM plumbing that the native library bindings (MPI, NCCL, cuBLAS) share; each keeps its own ABI. */
public final class Downcalls {
    private Downcalls() {
    }

    /** A downcall to {@code name} returning a C {@code int} status, taking {@code args}. */
    public static MethodHandle intFunction(SymbolLookup symbols, String name, MemoryLayout... args) {
        return Linker.nativeLinker().downcallHandle(symbols.findOrThrow(name),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, args));
    }

    /**
     * For {@code catch (Throwable t) { throw rethrow(t); }} around {@code invokeExact}: unchecked exceptions and
     * errors as they are, anything else wrapped.
     */
    public static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }
}
