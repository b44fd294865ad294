package dev.weft.backends.comm;

import dev.weft.DType;
import dev.weft.backends.cpu.exec.OperandResultCall;
import dev.weft.prim.CommOp;
import dev.weft.spi.CommBindings;
import dev.weft.spi.CommHandle;
import dev.weft.spi.CommRef;
import dev.weft.spi.SourceLocation;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * One rank's handle on one communicator: the runtime interface behind the eager {@code dev.weft.comm.Comm} calls
 * and the executor's {@code weft.mpi.*} custom calls, implemented by the in-process fake and by the MPI binding.
 *
 * <p>The semantics are MPI's. Buffers are {@link MemorySegment}s holding {@code count} elements of a
 * {@link DType}, read and written in place (an MPI binding passes their addresses without copying, so they
 * should be native segments; a heap segment works with the fake only). A buffer may be larger than needed;
 * only its first {@code count * dtype.byteSize()} bytes are used. Point-to-point messages match by
 * (communicator, source, tag) in posting order, never overtaking each other between one pair of ranks; the
 * receiver's count and dtype must equal the sender's. Collectives are called by every rank of the communicator
 * in the same order with the same operation, counts, dtype, root and reduce operator. The reducing collectives
 * accept the same segment as {@code in} and {@code out} (in place).
 *
 * <p>Every operation takes the user's source location {@code where} (or {@link SourceLocation#UNKNOWN}); it
 * heads the message of any {@link CommException} the call raises and names the call in deadlock reports.
 * Invalid arguments (a peer outside {@code [0, size())}, a negative tag, count or split color, a buffer too small)
 * raise a {@link CommException} before anything is communicated. Which threads may use a handle is the rule of
 * the runtime's {@link ThreadLevel}; as in MPI, no two threads call collectives on one communicator at once.
 */
public interface Communicator extends CommHandle {
    /** {@code h} as a runtime communicator: every handle Weft's runtimes make is one. */
    static Communicator of(CommHandle h, SourceLocation where) {
        if (h instanceof Communicator c) {
            return c;
        }
        throw new CommException(where, "communicator '" + h.name() + "' is not one of a Weft runtime's ("
                + h.getClass().getName() + ")");
    }

    /** The runtime communicator {@code comms} binds {@code ref} to. */
    static Communicator bound(CommBindings comms, CommRef ref, SourceLocation where) {
        return of(comms.get(ref, where), where);
    }

    /** This rank's index in the communicator, in {@code [0, size())}. */
    int rank();

    /** The number of ranks in the communicator. */
    int size();

    /** A name for messages: {@code world}, {@code world.split(1)#0}, {@code world.dup#2}. */
    String name();

    /** Blocks until every rank of the communicator has called it. */
    void barrier(SourceLocation where);

    /**
     * Sends {@code count} elements of {@code buf} to {@code dest}. Returns once {@code buf} may be reused, which
     * may be only once the destination has posted the matching receive: MPI does not promise to buffer a send.
     * The fake always waits so, except for sends within its eager limit (see {@code FakeWorld}).
     */
    void send(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where);

    /** Receives exactly {@code count} elements of {@code dtype} from {@code src} with {@code tag} into {@code buf}. */
    void recv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where);

    /**
     * Receives exactly {@code count} elements of {@code dtype} into {@code buf} from {@code src}, a rank or
     * {@link dev.weft.comm.Comm#ANY_SOURCE}, with {@code tag}, a tag or {@link dev.weft.comm.Comm#ANY_TAG}: the
     * earliest matching message, never one of a sender before that sender's earlier matching ones. Writes the
     * matched message's source and tag into {@code status} (two i32) once matched, also when the message does not
     * fit and the call raises, so that a caller can still name its sender.
     */
    void recvAny(MemorySegment buf, DType dtype, long count, int src, int tag, MemorySegment status,
                 SourceLocation where);

    /** Starts a send; {@code buf} must stay unchanged until {@link #wait} completes the request. */
    PendingRequest isend(MemorySegment buf, DType dtype, long count, int dest, int tag, SourceLocation where);

    /** Starts a receive into {@code buf}, whose contents are defined once {@link #wait} returns. */
    PendingRequest irecv(MemorySegment buf, DType dtype, long count, int src, int tag, SourceLocation where);

    /**
     * Blocks until {@code request} completes. A request is waited exactly once, on the communicator that created
     * it: waiting it again, or waiting another communicator's request, raises a {@link CommException}.
     */
    void wait(PendingRequest request, SourceLocation where);

    /** Waits every request, in order. */
    default void waitAll(List<? extends PendingRequest> requests, SourceLocation where) {
        for (PendingRequest r : requests) {
            wait(r, where);
        }
    }

    /**
     * Sends {@code count} elements of {@code sendbuf} to {@code dest} and receives {@code recvcount} elements from
     * {@code src} into {@code recvbuf}, as one operation that cannot deadlock against the peers' matching calls
     * (a ring shift is one {@code sendrecv} per rank). Both buffers hold {@code dtype}.
     */
    void sendrecv(MemorySegment sendbuf, DType dtype, long count, int dest, int sendtag,
                  MemorySegment recvbuf, long recvcount, int src, int recvtag, SourceLocation where);

    /**
     * {@code out = in_0 ⊕ in_1 ⊕ ... ⊕ in_{size-1}} on every rank, combined in rank order (see {@link RuntimeReduceOp});
     * {@code in} and {@code out} may be one buffer ({@link dev.weft.prim.CommOp#inPlace}).
     */
    void allreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op, SourceLocation where);

    /**
     * {@link #allreduce} with every argument but the buffers fixed, for a compiled program that runs it many times.
     * An implementation may check those arguments here, once, instead of at every call (an invalid reduce
     * operator then fails when the program is built, with the same message); the buffers and the communicator's
     * state are checked at each call. The default defers everything to {@link #allreduce}.
     */
    default BufferPairCall bindAllreduce(DType dtype, long count, RuntimeReduceOp op, SourceLocation where) {
        return (in, out) -> allreduce(in, out, dtype, count, op, where);
    }

    /**
     * A bound operation on an input and an output buffer, {@code accept(in, out)} (see {@link #bindAllreduce}). An
     * {@link OperandResultCall}, so that the executor runs it as a custom call without wrapping it.
     */
    @FunctionalInterface
    interface BufferPairCall extends OperandResultCall {
    }

    /** {@code out} ({@code size() * countPerRank} elements) receives every rank's {@code in}, in rank order. */
    void allgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where);

    /**
     * {@code MPI_Allgatherv}: rank {@code r} passes {@code counts[r]} elements in {@code in}, and every rank's
     * {@code out} ({@code sum(counts)} elements) receives them all in rank order. Every rank passes the same
     * {@code counts}, one entry per rank, none negative.
     */
    void allgatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, SourceLocation where);

    /**
     * {@code MPI_Gatherv}: rank {@code r} passes {@code counts[r]} elements in {@code in}, and {@code root}'s
     * {@code out} ({@code sum(counts)} elements) receives them all in rank order; on the other ranks {@code out} is
     * not touched and may be {@code null}. Every rank passes the same {@code counts} and root.
     */
    void gatherv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root, SourceLocation where);

    /**
     * {@code MPI_Scatterv}: {@code root}'s {@code in} ({@code sum(counts)} elements) is cut into blocks of
     * {@code counts[r]} elements in rank order, and rank {@code r}'s {@code out} receives block {@code r}; on the
     * other ranks {@code in} is not read and may be {@code null}. Every rank passes the same {@code counts} and root.
     */
    void scatterv(MemorySegment in, MemorySegment out, DType dtype, long[] counts, int root, SourceLocation where);

    /**
     * {@code MPI_Alltoallv}: the blocks of {@code in}, {@code sendCounts[j]} elements for rank {@code j} in rank
     * order, go to each rank; {@code out} receives {@code recvCounts[i]} elements from each rank {@code i}, in rank
     * order. Rank {@code i}'s {@code sendCounts[j]} must equal rank {@code j}'s {@code recvCounts[i]}.
     */
    void alltoallv(MemorySegment in, MemorySegment out, DType dtype, long[] sendCounts, long[] recvCounts,
                   SourceLocation where);

    /**
     * Reduces {@code in} ({@code size() * countPerRank} elements) over all ranks, in rank order, and leaves block
     * {@code rank()} of the result ({@code countPerRank} elements) in {@code out} ({@code MPI_Reduce_scatter_block}).
     */
    void reduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                       SourceLocation where);

    /** Copies {@code root}'s {@code buf} into every other rank's {@code buf}. */
    void bcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where);

    /**
     * Like {@link #allreduce}, but only {@code root}'s {@code out} receives the result; on the other ranks
     * {@code out} is not touched and may be {@code null}.
     */
    void reduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op, int root,
                SourceLocation where);

    /**
     * Block {@code j} of this rank's {@code in} goes to rank {@code j}, arriving as block {@code rank()} of its
     * {@code out}; both buffers hold {@code size() * countPerRank} elements.
     */
    void alltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where);

    /**
     * Starts {@link #allreduce} ({@code MPI_Iallreduce}) and returns at once; {@link #wait} completes it. Until then
     * {@code in} must stay unchanged and {@code out} is undefined ({@code in} and {@code out} are distinct buffers).
     * The nonblocking collectives are collectives: every rank starts them in the same order as its other collectives
     * on the communicator, and a start never matches a blocking collective. Built-in reduce operators only.
     */
    PendingRequest iallreduce(MemorySegment in, MemorySegment out, DType dtype, long count, RuntimeReduceOp op,
                       SourceLocation where);

    /** Starts {@link #allgather} ({@code MPI_Iallgather}); see {@link #iallreduce}. */
    PendingRequest iallgather(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where);

    /** Starts {@link #reduceScatter} ({@code MPI_Ireduce_scatter_block}); see {@link #iallreduce}. */
    PendingRequest ireduceScatter(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, RuntimeReduceOp op,
                           SourceLocation where);

    /** Starts {@link #bcast} ({@code MPI_Ibcast}) of {@code buf}, defined on every rank once waited. */
    PendingRequest ibcast(MemorySegment buf, DType dtype, long count, int root, SourceLocation where);

    /** Starts {@link #alltoall} ({@code MPI_Ialltoall}); see {@link #iallreduce}. */
    PendingRequest ialltoall(MemorySegment in, MemorySegment out, DType dtype, long countPerRank, SourceLocation where);

    /** Starts a {@link #barrier} ({@code MPI_Ibarrier}): its request completes once every rank has started it. */
    PendingRequest ibarrier(SourceLocation where);

    /**
     * Lets this rank's outstanding requests advance without blocking, as a compiled program calls it between the
     * kernels it runs while they are in flight: MPI tests them ({@code MPI_Testall}), since Open MPI and MPICH move
     * a nonblocking collective only inside MPI calls. The default does nothing (a runtime whose transfers progress
     * by themselves).
     */
    default void progress() {
    }

    /**
     * Collective: partitions the ranks by {@code color}, ordering each part by {@code key} and then by rank here,
     * and returns this rank's new communicator. A negative {@code color} is an invalid argument (there is no
     * {@code MPI_UNDEFINED}: every rank gets a communicator).
     */
    Communicator split(int color, int key, SourceLocation where);

    /** Collective: a communicator with the same ranks whose messages never match this one's. */
    Communicator dup(SourceLocation where);

    /**
     * The schedule check's exchange before this communicator's collective {@code op} (its kind, dtype, count per
     * rank or null and -1, reduce operator's name or null, root or -1): {@code out} receives the element-wise
     * maximum of every rank's {@code in} ({@code longs} i64 elements), computed on {@code dup}, this communicator's
     * {@link #privateDup}. A flight recorder records it as {@code op} itself, so that a rank blocked in the check
     * shows the operation it is about to run.
     */
    default void checkExchange(Communicator dup, MemorySegment in, MemorySegment out, long longs, CommOp.Kind op,
                               DType dtype, long count, String reduce, int root, SourceLocation where) {
        dup.allreduce(in, out, DType.I64, longs, RuntimeReduceOp.MAX, where);
    }

    /** The end of the names of {@link #privateDup}s: {@code world.weft}. */
    String PRIVATE_SUFFIX = ".weft";

    /**
     * Like {@link #dup}, for Weft's own traffic (the schedule check): named {@code <name>.weft} and not counted in
     * the numbers of the user's derived communicators ({@code #0}, {@code #1}, ...). Collective under MPI; the
     * outermost communicator of a world makes it once, with the communicator, and returns that one.
     */
    Communicator privateDup(SourceLocation where);

    /** Releases this handle; using it afterwards raises a {@link CommException}. The world cannot be freed. */
    void free(SourceLocation where);
}
