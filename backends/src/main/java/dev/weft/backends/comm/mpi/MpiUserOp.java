package dev.weft.backends.comm.mpi;

import dev.weft.DType;
import dev.weft.backends.comm.ReduceFunction;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.function.LongToIntFunction;

/**
 * Custom reduce operators on MPI: one {@code MPI_Op}, created with {@code commute = false} so that MPI keeps the
 * ranks' order ({@code RuntimeReduceOp}'s contract: a non-commutative function sees the lower ranks' contribution as its
 * left operand), whose {@code MPI_User_function} is an FFM upcall running the {@link ReduceFunction} of the
 * collective in progress on the calling thread. One operator serves every function, so nothing is created per
 * call (eager custom reductions build a new function each time); it is freed before {@code MPI_Finalize}.
 *
 * <p>Blocking collectives apply user functions on the thread that called them, which is what makes the
 * thread-local dispatch sound. The upcall never lets an exception escape into MPI: the first failure is kept and
 * rethrown by {@link #run} after the collective returns, and later chunks of that collective are left unreduced.
 */
final class MpiUserOp {
    private static final ThreadLocal<Active> ACTIVE = new ThreadLocal<>();

    private static final class Active {
        final ReduceFunction function;
        Throwable failure;

        Active(ReduceFunction function) {
            this.function = function;
        }
    }

    private final MpiLibrary mpi;
    private final long world;
    private final MemorySegment cell;

    MpiUserOp(MpiLibrary mpi, long world) {
        this.mpi = mpi;
        this.world = world;
        this.cell = Arena.global().allocate(mpi.handleBytes());
        MethodHandle target;
        try {
            target = MethodHandles.lookup().findVirtual(MpiUserOp.class, "combine", MethodType.methodType(void.class,
                    MemorySegment.class, MemorySegment.class, MemorySegment.class, MemorySegment.class)).bindTo(this);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        MemorySegment stub = Linker.nativeLinker().upcallStub(target, MpiLibrary.userFunction(), Arena.global());
        int rc = mpi.opCreate(stub, false, cell);
        if (rc != MpiLibrary.SUCCESS) {
            throw new IllegalStateException("MPI_Op_create failed: " + mpi.errorString(rc));
        }
    }

    /**
     * Runs {@code call} with this operator's handle while {@code function} is the one it applies on this thread;
     * returns MPI's error code, or throws what {@code function} threw.
     */
    int run(ReduceFunction function, LongToIntFunction call) {
        Active active = new Active(function);
        Active outer = ACTIVE.get();
        ACTIVE.set(active);
        int rc;
        try {
            rc = call.applyAsInt(mpi.readHandle(cell));
        } finally {
            ACTIVE.set(outer);
        }
        if (active.failure instanceof RuntimeException e) {
            throw e;
        }
        if (active.failure instanceof Error e) {
            throw e;
        }
        if (active.failure != null) {
            throw new IllegalStateException(active.failure);
        }
        return rc;
    }

    /** Frees the operator; call once, before {@code MPI_Finalize}. */
    void free() {
        mpi.opFree(cell);
    }

    /** The {@code MPI_User_function}: {@code inout[i] = in[i] ⊕ inout[i]} for {@code *len} elements. */
    private void combine(MemorySegment in, MemorySegment inout, MemorySegment len, MemorySegment type) {
        Active active = ACTIVE.get();
        if (active == null) {
            System.err.println("weft: MPI applied a custom reduce op outside a collective of its thread");
            mpi.abort(world, 1);
            return;
        }
        if (active.failure != null) {
            return;
        }
        try {
            int count = len.reinterpret(4).get(ValueLayout.JAVA_INT, 0);
            long handle = mpi.readHandle(type);
            DType dtype = mpi.dtypeOf(handle);
            if (dtype == null) {
                throw new IllegalStateException("custom reduce op applied to unknown MPI datatype 0x"
                        + Long.toHexString(handle));
            }
            long bytes = count * dtype.byteSize();
            active.function.combine(inout.reinterpret(bytes), in.reinterpret(bytes), count, dtype);
        } catch (Throwable t) {
            active.failure = t;
        }
    }
}
