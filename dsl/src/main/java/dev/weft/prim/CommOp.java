package dev.weft.prim;

import dev.weft.comm.ReduceOp;
import dev.weft.spi.Aval;
import dev.weft.spi.CommHandle;
import dev.weft.spi.CommId;
import dev.weft.spi.CommRef;
import dev.weft.spi.Effect;
import dev.weft.spi.Params;
import java.util.List;

/**
 * One communication operation, described once: the parameters of a communication primitive, made by
 * {@link dev.weft.comm.Comm}, carried by the traced node, attached to the lowered {@code custom_call} (its
 * {@code backend_config} is this descriptor's printed form) and run by each runtime, which switches over these
 * records exhaustively. Each record holds exactly its operation's fields. While tracing, the communicator is the
 * live {@link CommHandle}; a lowered op's is its {@link CommRef} ({@link #symbolic}).
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
            case ReduceScatter(var x, ReduceOp op) -> new ReduceScatter(c, op);
            case Bcast(var x, int root) -> new Bcast(c, root);
            case Reduce(var x, ReduceOp op, int root) -> new Reduce(c, op, root);
            case AllToAll a -> new AllToAll(c);
            case SendRecv(var x, int dest, int sendTag, int source, int recvTag, Aval result) ->
                    new SendRecv(c, dest, sendTag, source, recvTag, result);
        };
    }

    /** The primitive's name, which is also the custom call's: {@code allreduce}, {@code reduce_scatter}, ... */
    default String kind() {
        return CommPrims.of(this).name();
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

    /** The start of a nonblocking message, completed by a {@link Wait}. */
    sealed interface Start extends CommOp {
        /** The peer: the destination of an {@link Isend}, the source of an {@link Irecv}. */
        int peer();

        int tag();
    }

    /** This rank in the communicator, an I32 scalar computed at run time. */
    record Rank(CommId comm) implements CommOp {
        @Override
        public Effect effect() {
            return Effect.PURE;
        }
    }

    record Barrier(CommId comm) implements Collective {
    }

    record Send(CommId comm, int dest, int tag) implements CommOp {
    }

    /** Receives a tensor of {@code result}'s dtype and shape. */
    record Recv(CommId comm, int source, int tag, Aval result) implements CommOp {
        @Override
        public Aval data(List<Aval> inputs) {
            return result;
        }
    }

    record Isend(CommId comm, int dest, int tag) implements Start {
        @Override
        public int peer() {
            return dest;
        }
    }

    record Irecv(CommId comm, int source, int tag, Aval result) implements Start {
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
        public boolean inPlace() {
            return true;
        }
    }

    /** Every rank's operand concatenated along axis 0 (a scalar becomes 1-D). */
    record AllGather(CommId comm) implements Collective {
    }

    /** Reduces across ranks, then rank {@code r} keeps block {@code r} of axis 0. */
    record ReduceScatter(CommId comm, ReduceOp op) implements Reducing {
    }

    record Bcast(CommId comm, int root) implements Rooted {
    }

    /** The reduction at the root; other ranks get their operand back. */
    record Reduce(CommId comm, ReduceOp op, int root) implements Reducing, Rooted {
    }

    /** Block {@code j} of axis 0 goes to rank {@code j}; block {@code i} of the result came from rank {@code i}. */
    record AllToAll(CommId comm) implements Collective {
    }

    /** Sends its operand to {@code dest} and receives a tensor of {@code result}'s dtype and shape. */
    record SendRecv(CommId comm, int dest, int sendTag, int source, int recvTag, Aval result)
            implements CommOp {
    }
}
