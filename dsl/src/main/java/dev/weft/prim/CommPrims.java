package dev.weft.prim;

import static dev.weft.spi.Errors.shape;

import dev.weft.DType;
import dev.weft.WeftException;
import dev.weft.spi.Aval;
import dev.weft.spi.Effect;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.ShapeRule;
import dev.weft.spi.SourceLocation;
import java.util.List;

/**
 * The communication primitives. All but {@link #COMM_RANK} have an ordered effect on their communicator: they
 * run once each, in program order, used or not. A request is an I64 scalar that exactly one {@link #WAIT}
 * consumes.
 */
public final class CommPrims {
    private CommPrims() {
    }

    public static final Aval REQUEST = Aval.of(DType.I64);

    /** This rank in the communicator, as an I32 scalar computed at run time. */
    public static final Primitive<CommParams> COMM_RANK = new Primitive<>("comm_rank", CommParams.class,
            Effect.PURE, (in, p) -> List.of(Aval.of(DType.I32)));

    public static final Primitive<CommParams> BARRIER = ordered("barrier", (in, p) -> List.of());

    public static final Primitive<CommParams> SEND = ordered("send", (in, p) -> {
        checkPeer(p, p.peer(), p.tag());
        return List.of();
    });

    public static final Primitive<CommParams> RECV = ordered("recv", (in, p) -> {
        checkPeer(p, p.peer(), p.tag());
        return List.of(p.result());
    });

    public static final Primitive<CommParams> ISEND = ordered("isend", (in, p) -> {
        checkPeer(p, p.peer(), p.tag());
        return List.of(REQUEST);
    });

    public static final Primitive<CommParams> IRECV = ordered("irecv", (in, p) -> {
        checkPeer(p, p.peer(), p.tag());
        return List.of(REQUEST);
    });

    /**
     * Completes a request. Receive: inputs [request], output the received tensor ({@code result}). Send: inputs
     * [request, sent tensor] (keeping the buffer alive until the send completes), no output.
     */
    public static final Primitive<CommParams> WAIT = ordered("wait",
            (in, p) -> p.result() == null ? List.of() : List.of(p.result()));

    public static final Primitive<CommParams> ALLREDUCE = ordered("allreduce", (in, p) -> {
        numeric("allreduce", in.getFirst());
        return List.of(in.getFirst());
    });

    /** Concatenation of every rank's operand along a new leading block of axis 0 (a scalar becomes 1-D). */
    public static final Primitive<CommParams> ALLGATHER = ordered("allgather", (in, p) -> {
        Aval a = in.getFirst();
        long[] d = a.shape().rank() == 0 ? new long[] {1} : a.shape().dims();
        d[0] *= p.comm().size();
        return List.of(new Aval(a.dtype(), Shape.of(d)));
    });

    /** Reduces across ranks, then rank {@code r} keeps block {@code r} of axis 0. */
    public static final Primitive<CommParams> REDUCE_SCATTER = ordered("reduce_scatter", (in, p) -> {
        Aval a = in.getFirst();
        numeric("reduceScatter", a);
        long[] d = splitAxis0("reduceScatter", a, p.comm().size());
        d[0] /= p.comm().size();
        return List.of(new Aval(a.dtype(), Shape.of(d)));
    });

    public static final Primitive<CommParams> BCAST = ordered("bcast", (in, p) -> {
        checkRoot(p);
        return List.of(in.getFirst());
    });

    /** The reduction at the root; other ranks get their operand back. */
    public static final Primitive<CommParams> REDUCE = ordered("reduce", (in, p) -> {
        numeric("reduce", in.getFirst());
        checkRoot(p);
        return List.of(in.getFirst());
    });

    /** Block {@code j} of axis 0 goes to rank {@code j}; block {@code i} of the result came from rank {@code i}. */
    public static final Primitive<CommParams> ALLTOALL = ordered("alltoall", (in, p) -> {
        splitAxis0("alltoall", in.getFirst(), p.comm().size());
        return List.of(in.getFirst());
    });

    public static final Primitive<CommParams> SENDRECV = ordered("sendrecv", (in, p) -> {
        checkPeer(p, p.peer(), p.tag());
        checkPeer(p, p.source(), p.recvTag());
        return List.of(p.result());
    });

    /**
     * The data an application of {@code prim} moves: its tensor operand (for {@code wait}, the sent tensor after
     * the request), else what it receives; {@code null} for {@code barrier} and {@code comm_rank}.
     */
    public static Aval data(Primitive<?> prim, CommParams p, List<Aval> inputs) {
        int first = prim == WAIT ? 1 : 0;
        return inputs.size() > first ? inputs.get(first) : p.result();
    }

    private static Primitive<CommParams> ordered(String name, ShapeRule<CommParams> rule) {
        return new Primitive<>(name, CommParams.class, Effect.ORDERED, rule);
    }

    private static void checkPeer(CommParams p, int peer, int tag) {
        int size = p.comm().size();
        if (peer < 0 || peer >= size) {
            throw new WeftException(SourceLocation.UNKNOWN,
                    "peer rank " + peer + " is outside [0, " + size + ") of communicator " + p.comm().name());
        }
        if (tag < 0) {
            throw new WeftException(SourceLocation.UNKNOWN, "tag " + tag + " is negative");
        }
    }

    private static void checkRoot(CommParams p) {
        int size = p.comm().size();
        if (p.root() < 0 || p.root() >= size) {
            throw new WeftException(SourceLocation.UNKNOWN,
                    "root rank " + p.root() + " is outside [0, " + size + ") of communicator " + p.comm().name());
        }
    }

    private static void numeric(String op, Aval a) {
        if (a.dtype() == DType.BOOL) {
            throw dev.weft.spi.Errors.dtype("%s: not defined on bool", op);
        }
    }

    private static long[] splitAxis0(String op, Aval a, int size) {
        if (a.shape().rank() == 0 || a.shape().dim(0) % size != 0) {
            throw shape("%s: axis 0 of %s must split into %d equal blocks", op, a.shape(), size);
        }
        return a.shape().dims();
    }
}
