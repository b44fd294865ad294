package dev.weft.prim;

import dev.weft.comm.ReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.CommHandle;
import dev.weft.spi.CommId;
import dev.weft.spi.CommRef;
import dev.weft.spi.Effect;
import dev.weft.spi.Params;
import java.util.List;
import java.util.Locale;

/**
 * One communication operation, described once: the parameters of a communication primitive, made by
 * {@link dev.weft.comm.Comm}, carried by the traced node, attached to the lowered {@code custom_call} (its
 * {@code backend_config} is this descriptor's printed form) and run by each runtime, which switches over these
 * records exhaustively. Each record holds exactly its operation's fields and names its {@link Kind}, by which the
 * layers that do not switch over records (flight recorder, collective matching, schedule check) know it. While
 * tracing, the communicator is the live {@link CommHandle}; a lowered op's is its {@link CommRef}
 * ({@link #symbolic}).
 */
public sealed interface CommOp extends Params {
    /** The communicator the operation runs on. */
    CommId comm();

    /** The live communicator of an op being traced or run eagerly. */
    default CommHandle handle() {
        return switch (comm()) {
            case CommHandle h -> h;
            case CommRef r -> throw new IllegalStateException("a lowered " + kind() + " names '" + r
                    + "' by reference: bind it to a communicator first");
        };
    }

    /** This op with its communicator named by reference, as a lowered module holds it. */
    default CommOp symbolic() {
        CommRef c = comm().ref();
        return switch (this) {
            case Rank r -> new Rank(c);
            case Barrier b -> new Barrier(c);
            case Send(var x, int dest, int tag) -> new Send(c, dest, tag);
            case Recv(var x, int source, int tag, Aval result) -> new Recv(c, source, tag, result);
            case Isend(var x, int dest, int tag) -> new Isend(c, dest, tag);
            case Irecv(var x, int source, int tag, Aval result) -> new Irecv(c, source, tag, result);
            case Wait(Start start) -> new Wait((Start) start.symbolic());
            case AllReduce(var x, ReduceOp op) -> new AllReduce(c, op);
            case AllGather a -> new AllGather(c);
            case AllGatherV(var x, List<Long> counts) -> new AllGatherV(c, counts);
            case GatherV(var x, List<Long> counts, int root) -> new GatherV(c, counts, root);
            case ScatterV(var x, List<Long> counts, int root) -> new ScatterV(c, counts, root);
            case AllToAllV(var x, List<Long> send, List<Long> recv) -> new AllToAllV(c, send, recv);
            case ReduceScatter(var x, ReduceOp op) -> new ReduceScatter(c, op);
            case Bcast(var x, int root) -> new Bcast(c, root);
            case Reduce(var x, ReduceOp op, int root) -> new Reduce(c, op, root);
            case AllToAll a -> new AllToAll(c);
            case SendRecv(var x, int dest, int sendTag, int source, int recvTag, Aval result) ->
                    new SendRecv(c, dest, sendTag, source, recvTag, result);
            case RecvAny(var x, int source, int tag, Aval result) -> new RecvAny(c, source, tag, result);
            case IAllReduce(var x, ReduceOp op) -> new IAllReduce(c, op);
            case IAllGather a -> new IAllGather(c);
            case IReduceScatter(var x, ReduceOp op) -> new IReduceScatter(c, op);
            case IBcast(var x, int root) -> new IBcast(c, root);
            case IAllToAll a -> new IAllToAll(c);
            case IBarrier b -> new IBarrier(c);
            case CollectiveWait(CollectiveStart start) -> new CollectiveWait((CollectiveStart) start.symbolic());
        };
    }

    /**
     * Its kind, whose {@linkplain Kind#label label} is the primitive's name and the custom call's: {@code allreduce},
     * {@code reduce_scatter}, ...
     */
    Kind kind();

    /**
     * The kinds of communication operation: the one enumeration that every layer names an operation by (the
     * primitives, the lowered custom calls, the schedule check, the runtimes' collective matching, the flight
     * recorder and its files). The first twenty-six are the kinds of {@link CommOp}'s records, one each. The others
     * are runtime-only, operations of a runtime's communicator that no traced primitive has: {@link #WAIT_ISEND}
     * and {@link #WAIT_IRECV} (a {@link #WAIT} as a flight recorder tells which request it completes),
     * {@link #SPLIT}, {@link #DUP}, {@link #PRIVATE_DUP} (Weft's own duplicate for the schedule check) and
     * {@link #FREE}.
     */
    enum Kind {
        COMM_RANK, BARRIER, SEND, RECV, ISEND, IRECV, WAIT, ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE,
        ALLTOALL, SENDRECV,
        /** {@code MPI_Allgatherv}: a variable count of rows from each rank ({@link AllGatherV}). */
        ALLGATHERV,
        /** {@code MPI_Gatherv} ({@link GatherV}). */
        GATHERV,
        /** {@code MPI_Scatterv} ({@link ScatterV}). */
        SCATTERV,
        /** {@code MPI_Alltoallv} ({@link AllToAllV}). */
        ALLTOALLV,
        /** A receive whose source or tag may be a wildcard, giving the matched source and tag too. */
        RECV_ANY,
        /** The starts of the nonblocking collectives ({@link CollectiveStart}). */
        IALLREDUCE, IALLGATHER, IREDUCE_SCATTER, IBCAST, IALLTOALL, IBARRIER,
        /** The completion of a nonblocking collective ({@link CollectiveWait}). */
        WAIT_COLLECTIVE,
        /** Runtime-only: the {@code wait} for an {@code isend}'s request. */
        WAIT_ISEND,
        /** Runtime-only: the {@code wait} for an {@code irecv}'s request. */
        WAIT_IRECV,
        /** Runtime-only: {@code MPI_Comm_split}. */
        SPLIT,
        /** Runtime-only: {@code MPI_Comm_dup}. */
        DUP,
        /**
         * Runtime-only: Weft's own duplicate for the schedule check ({@code <name>.weft}); flight recorders no
         * longer record it, but read it in the files of earlier versions.
         */
        PRIVATE_DUP,
        /** Runtime-only: releasing a communicator handle. */
        FREE;

        /**
         * The lower-case name: a primitive's and its custom call's ({@code weft.mpi.reduce_scatter}), and the
         * label in messages, dumps and flight files ({@code allreduce}, {@code wait_irecv}).
         */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** The kind labelled {@code label}; an {@link IllegalArgumentException} if none is. */
        public static Kind of(String label) {
            for (Kind k : values()) {
                if (k.label().equals(label)) {
                    return k;
                }
            }
            throw new IllegalArgumentException("no communication op is labelled '" + label + "'");
        }

        /**
         * Whether every rank of the communicator runs it, in the same order (they are numbered per communicator):
         * the kinds of {@link Collective} records, {@code split} and the duplicates. {@code free} is not: a
         * runtime may free locally.
         */
        public boolean collective() {
            return switch (this) {
                case BARRIER, ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE, ALLTOALL, ALLGATHERV, GATHERV,
                     SCATTERV, ALLTOALLV, SPLIT, DUP, PRIVATE_DUP,
                     IALLREDUCE, IALLGATHER, IREDUCE_SCATTER, IBCAST, IALLTOALL, IBARRIER -> true;
                default -> false;
            };
        }

        /** Whether it combines the ranks' operands with a reduce op: the kinds of {@link Reducing} records. */
        public boolean reducing() {
            return this == ALLREDUCE || this == REDUCE_SCATTER || this == REDUCE || this == IALLREDUCE
                    || this == IREDUCE_SCATTER;
        }

        /** Whether it has a root rank: the kinds of {@link Rooted} records. */
        public boolean rooted() {
            return this == BCAST || this == REDUCE || this == IBCAST || this == GATHERV || this == SCATTERV;
        }

        /** Whether it sends to a peer (a {@code sendrecv} also receives, from its second peer). */
        public boolean sends() {
            return this == SEND || this == ISEND || this == WAIT_ISEND || this == SENDRECV;
        }

        /** Whether it receives from a peer ({@code sendrecv}: from its second peer). */
        public boolean receives() {
            return this == RECV || this == IRECV || this == WAIT_IRECV || this == SENDRECV || this == RECV_ANY;
        }

        /** {@link #label()}, so that messages name a kind as the IR does. */
        @Override
        public String toString() {
            return label();
        }
    }

    /** Ordered on its communicator; {@link Rank} alone is pure. */
    default Effect effect() {
        return new Effect.Ordered(comm());
    }

    /**
     * True if a runtime may write the result over the operand (one buffer passed as both): the result has the
     * operand's type, and every runtime reads all of the operand before writing the result ({@code MPI_IN_PLACE}).
     */
    default boolean inPlace() {
        return false;
    }

    /**
     * The data it moves, given the avals of its operands: its tensor operand (for a send's {@code wait}, the sent
     * tensor after the request), else what it receives; {@code null} for {@code barrier} and {@code comm_rank}.
     */
    default Aval data(List<Aval> inputs) {
        return inputs.isEmpty() ? null : inputs.getFirst();
    }

    /** An operation every rank of the communicator calls, in the same order. */
    sealed interface Collective extends CommOp {
    }

    /** A collective combining the ranks' operands with a reduce op. */
    sealed interface Reducing extends Collective {
        ReduceOp op();
    }

    /** A collective with a root rank. */
    sealed interface Rooted extends Collective {
        int root();
    }

    /**
     * The elements of one row along axis 0 of {@code a}: the product of its other dimensions (1 for a vector), by
     * which a runtime turns counts of rows into counts of elements.
     */
    static long rowElements(Aval a) {
        long n = 1;
        for (int d = 1; d < a.shape().rank(); d++) {
            n *= a.shape().dim(d);
        }
        return n;
    }

    /** {@code rows}, counts of rows of {@code row} elements each, as counts of elements. */
    static long[] elements(List<Long> rows, long row) {
        return rows.stream().mapToLong(r -> r * row).toArray();
    }

    /** The start of a nonblocking message, completed by a {@link Wait}. */
    sealed interface Start extends CommOp {
        /** The peer: the destination of an {@link Isend}, the source of an {@link Irecv}. */
        int peer();

        int tag();
    }

    /** This rank in the communicator, an I32 scalar computed at run time. */
    record Rank(CommId comm) implements CommOp {
        @Override
        public Kind kind() {
            return Kind.COMM_RANK;
        }

        @Override
        public Effect effect() {
            return Effect.PURE;
        }
    }

    record Barrier(CommId comm) implements Collective {
        @Override
        public Kind kind() {
            return Kind.BARRIER;
        }
    }

    record Send(CommId comm, int dest, int tag) implements CommOp {
        @Override
        public Kind kind() {
            return Kind.SEND;
        }
    }

    /** Receives a tensor of {@code result}'s dtype and shape. */
    record Recv(CommId comm, int source, int tag, Aval result) implements CommOp {
        @Override
        public Kind kind() {
            return Kind.RECV;
        }

        @Override
        public Aval data(List<Aval> inputs) {
            return result;
        }
    }

    record Isend(CommId comm, int dest, int tag) implements Start {
        @Override
        public Kind kind() {
            return Kind.ISEND;
        }

        @Override
        public int peer() {
            return dest;
        }
    }

    record Irecv(CommId comm, int source, int tag, Aval result) implements Start {
        @Override
        public Kind kind() {
            return Kind.IRECV;
        }

        @Override
        public int peer() {
            return source;
        }

        @Override
        public Aval data(List<Aval> inputs) {
            return result;
        }
    }

    /**
     * Completes the request {@code start} made. Receive: inputs [request], output the received tensor. Send:
     * inputs [request, sent tensor] (keeping the buffer alive until the send completes), no output.
     */
    record Wait(Start start) implements CommOp {
        @Override
        public Kind kind() {
            return Kind.WAIT;
        }

        @Override
        public CommId comm() {
            return start.comm();
        }

        /** What the wait produces: the received tensor, or {@code null} for a send. */
        public Aval result() {
            return start instanceof Irecv r ? r.result() : null;
        }

        @Override
        public Aval data(List<Aval> inputs) {
            return start instanceof Irecv r ? r.result() : inputs.get(1);
        }
    }

    record AllReduce(CommId comm, ReduceOp op) implements Reducing {
        @Override
        public Kind kind() {
            return Kind.ALLREDUCE;
        }

        @Override
        public boolean inPlace() {
            return true;
        }
    }

    /** Every rank's operand concatenated along axis 0 (a scalar becomes 1-D). */
    record AllGather(CommId comm) implements Collective {
        @Override
        public Kind kind() {
            return Kind.ALLGATHER;
        }
    }

    /**
     * A collective moving a variable count of rows along axis 0 between the ranks and their root or each other, the
     * same {@link #counts} on every rank (the other axes alike on every rank).
     */
    sealed interface Counted extends Collective {
        /** Rows per rank, one entry per rank, none negative. */
        List<Long> counts();

        /** The rows of all ranks, {@code sum(counts)}. */
        default long total() {
            return sum(counts());
        }

        /** The first row of {@code rank}'s block in the whole: the sum of the counts before it. */
        default long offset(int rank) {
            return sum(counts().subList(0, rank));
        }
    }

    /**
     * MPI_Allgatherv: rank {@code r} passes {@code counts[r]} rows and every rank gets all rows in rank order,
     * {@code [sum(counts), ...]}.
     */
    record AllGatherV(CommId comm, List<Long> counts) implements Counted {
        public AllGatherV {
            counts = List.copyOf(counts);
        }

        @Override
        public Kind kind() {
            return Kind.ALLGATHERV;
        }
    }

    /**
     * MPI_Gatherv: rank {@code r} passes {@code counts[r]} rows; {@code root} gets all rows in rank order,
     * {@code [sum(counts), ...]}, every other rank an empty {@code [0, ...]}.
     */
    record GatherV(CommId comm, List<Long> counts, int root) implements Counted, Rooted {
        public GatherV {
            counts = List.copyOf(counts);
        }

        @Override
        public Kind kind() {
            return Kind.GATHERV;
        }
    }

    /**
     * MPI_Scatterv: every rank passes an operand of {@code [sum(counts), ...]} (only {@code root}'s is read) and rank
     * {@code r} gets its {@code counts[r]} rows, those after the ranks before it.
     */
    record ScatterV(CommId comm, List<Long> counts, int root) implements Counted, Rooted {
        public ScatterV {
            counts = List.copyOf(counts);
        }

        @Override
        public Kind kind() {
            return Kind.SCATTERV;
        }
    }

    /**
     * MPI_Alltoallv: the first {@code sendCounts[0]} rows of the operand go to rank 0, the next
     * {@code sendCounts[1]} to rank 1, ...; the result holds {@code recvCounts[i]} rows from each rank {@code i} in
     * rank order. Unlike the other counts, these differ by rank: {@code recvCounts[i]} is rank {@code i}'s
     * {@code sendCounts} entry for this rank.
     */
    record AllToAllV(CommId comm, List<Long> sendCounts, List<Long> recvCounts) implements Collective {
        public AllToAllV {
            sendCounts = List.copyOf(sendCounts);
            recvCounts = List.copyOf(recvCounts);
        }

        @Override
        public Kind kind() {
            return Kind.ALLTOALLV;
        }
    }

    /** The sum of {@code counts}. */
    static long sum(List<Long> counts) {
        return counts.stream().mapToLong(Long::longValue).sum();
    }

    /** Reduces across ranks, then rank {@code r} keeps block {@code r} of axis 0. */
    record ReduceScatter(CommId comm, ReduceOp op) implements Reducing {
        @Override
        public Kind kind() {
            return Kind.REDUCE_SCATTER;
        }
    }

    record Bcast(CommId comm, int root) implements Rooted {
        @Override
        public Kind kind() {
            return Kind.BCAST;
        }
    }

    /** The reduction at the root; other ranks get their operand back. */
    record Reduce(CommId comm, ReduceOp op, int root) implements Reducing, Rooted {
        @Override
        public Kind kind() {
            return Kind.REDUCE;
        }
    }

    /** Block {@code j} of axis 0 goes to rank {@code j}; block {@code i} of the result came from rank {@code i}. */
    record AllToAll(CommId comm) implements Collective {
        @Override
        public Kind kind() {
            return Kind.ALLTOALL;
        }
    }

    /** Sends its operand to {@code dest} and receives a tensor of {@code result}'s dtype and shape. */
    record SendRecv(CommId comm, int dest, int sendTag, int source, int recvTag, Aval result)
            implements CommOp {
        @Override
        public Kind kind() {
            return Kind.SENDRECV;
        }
    }

    /**
     * Receives a tensor of {@code result}'s dtype and shape from {@code source}, a rank or
     * {@link dev.weft.comm.Comm#ANY_SOURCE}, with {@code tag}, a tag or {@link dev.weft.comm.Comm#ANY_TAG}, under
     * MPI's matching rules (the earliest matching message; messages of one sender in the order sent). Two results:
     * the tensor and the status, an i32[2] of the matched message's source and tag.
     */
    record RecvAny(CommId comm, int source, int tag, Aval result) implements CommOp {
        @Override
        public Kind kind() {
            return Kind.RECV_ANY;
        }

        @Override
        public Aval data(List<Aval> inputs) {
            return result;
        }
    }

    /**
     * The start of a nonblocking collective ({@code MPI_Iallreduce}, ...): {@link #blocking()} started, its transfer
     * left to progress while the program computes. It is a collective: every rank starts it in the same order as its
     * other collectives (a start never matches a blocking collective). Inputs: the blocking collective's operands;
     * output: a request, which exactly one {@link CollectiveWait} completes with the blocking collective's result.
     */
    sealed interface CollectiveStart extends Collective {
        /** The blocking collective this starts: the same communicator and fields. */
        Collective blocking();
    }

    record IAllReduce(CommId comm, ReduceOp op) implements CollectiveStart, Reducing {
        @Override
        public Kind kind() {
            return Kind.IALLREDUCE;
        }

        @Override
        public AllReduce blocking() {
            return new AllReduce(comm, op);
        }
    }

    record IAllGather(CommId comm) implements CollectiveStart {
        @Override
        public Kind kind() {
            return Kind.IALLGATHER;
        }

        @Override
        public AllGather blocking() {
            return new AllGather(comm);
        }
    }

    record IReduceScatter(CommId comm, ReduceOp op) implements CollectiveStart, Reducing {
        @Override
        public Kind kind() {
            return Kind.IREDUCE_SCATTER;
        }

        @Override
        public ReduceScatter blocking() {
            return new ReduceScatter(comm, op);
        }
    }

    record IBcast(CommId comm, int root) implements CollectiveStart, Rooted {
        @Override
        public Kind kind() {
            return Kind.IBCAST;
        }

        @Override
        public Bcast blocking() {
            return new Bcast(comm, root);
        }
    }

    record IAllToAll(CommId comm) implements CollectiveStart {
        @Override
        public Kind kind() {
            return Kind.IALLTOALL;
        }

        @Override
        public AllToAll blocking() {
            return new AllToAll(comm);
        }
    }

    record IBarrier(CommId comm) implements CollectiveStart {
        @Override
        public Kind kind() {
            return Kind.IBARRIER;
        }

        @Override
        public Barrier blocking() {
            return new Barrier(comm);
        }
    }

    /**
     * Completes the nonblocking collective {@code start} started. Inputs: [request, the start's operand] (the operand
     * keeps its buffer alive until the transfer is done; an {@code ibarrier}'s wait takes the request alone); output:
     * the blocking collective's result (none for {@code ibarrier}).
     */
    record CollectiveWait(CollectiveStart start) implements CommOp {
        @Override
        public Kind kind() {
            return Kind.WAIT_COLLECTIVE;
        }

        @Override
        public CommId comm() {
            return start.comm();
        }

        /** The data moved: the start's operand; {@code null} for an {@code ibarrier}. */
        @Override
        public Aval data(List<Aval> inputs) {
            return inputs.size() > 1 ? inputs.get(1) : null;
        }
    }
}
