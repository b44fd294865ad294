package dev.weft.backends.gpu.nccl;

import dev.weft.DType;
import dev.weft.backends.comm.CommException;
import dev.weft.backends.comm.Communicator;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One rank's NCCL communicator ({@code ncclComm_t}), created over a bootstrap {@link Communicator} (MPI or fake)
 * with the same ranks: rank 0 makes the unique id, the bootstrap broadcasts its 128 bytes, and every rank calls
 * {@code ncclCommInitRank(size, id, rank)} (as IREE's MPI channel provider does). Shared by the
 * {@link NcclCommunicator}s that queue its operations on the streams of the process's executables; creating one is
 * collective and slow, so {@link NcclCommunicators} makes one per bootstrap communicator.
 */
final class NcclHandle {
    final NcclLibrary nccl;
    final StreamEvents events;
    final String name;
    final int rank;
    final int size;
    /** The NCCL handle; 0 once destroyed or aborted. */
    private long comm;

    private NcclHandle(NcclLibrary nccl, StreamEvents events, String name, int rank, int size, long comm) {
        this.nccl = nccl;
        this.events = events;
        this.name = name;
        this.rank = rank;
        this.size = size;
        this.comm = comm;
    }

    /**
     * Collective over {@code bootstrap}: the NCCL communicator with its ranks. The CUDA device this rank uses must
     * be current on the calling thread.
     */
    static NcclHandle create(NcclLibrary nccl, StreamEvents events, Communicator bootstrap, SourceLocation where) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment id = arena.allocate(NcclLibrary.UNIQUE_ID_BYTES);
            if (bootstrap.rank() == 0) {
                nccl.check(nccl.getUniqueId(id), "ncclGetUniqueId", "nccl init", where);
            }
            bootstrap.bcast(id, DType.BOOL, NcclLibrary.UNIQUE_ID_BYTES, 0, where);
            MemorySegment handle = arena.allocate(JAVA_LONG);
            nccl.check(nccl.commInitRank(handle, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank",
                    "nccl init", where);
            return new NcclHandle(nccl, events, bootstrap.name(), bootstrap.rank(), bootstrap.size(),
                    handle.get(JAVA_LONG, 0));
        }
    }

    /** The NCCL handle; fails when the communicator was destroyed or aborted. */
    long live(SourceLocation where) {
        if (comm == 0) {
            throw new CommException(where, "NCCL communicator '" + name + "' was destroyed or aborted");
        }
        return comm;
    }

    /** Raises {@code result}, if an error, as an exception naming {@code op} and {@code where}. */
    void check(int result, String function, String op, SourceLocation where) {
        nccl.check(result, function, op, where);
    }

    /** Raises an asynchronous NCCL error as an exception naming {@code op} and {@code where}, aborting first. */
    void checkAsync(String op, SourceLocation where) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment error = arena.allocate(JAVA_INT);
            check(nccl.commGetAsyncError(live(where), error), "ncclCommGetAsyncError", op, where);
            int async = error.get(JAVA_INT, 0);
            if (async != NcclLibrary.SUCCESS && async != NcclLibrary.IN_PROGRESS) {
                long c = comm;
                comm = 0;
                nccl.commAbort(c);
                throw new CommException(where, op + ": NCCL communicator '" + name + "' failed asynchronously: "
                        + nccl.describe(async) + "; the communicator was aborted");
            }
        }
    }

    /** {@code ncclCommDestroy}, once; the communicator cannot be used afterwards. */
    void destroy(String op, SourceLocation where) {
        if (comm != 0) {
            long c = comm;
            comm = 0;
            check(nccl.commDestroy(c), "ncclCommDestroy", op, where);
        }
    }
}
