package dev.weft.prim;

import static dev.weft.spi.Errors.shape;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.comm.Comm;
import dev.weft.comm.ReduceOp;
import dev.weft.graph.Node;
import dev.weft.graph.Region;
import dev.weft.spi.Aval;
import dev.weft.spi.Bind;
import dev.weft.spi.CommBindings;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Primitive;
import dev.weft.spi.Shape;
import dev.weft.spi.ShapeRule;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * The communication primitives, one per {@link CommOp} record, which is their parameters; an application's effect
 * is its descriptor's ({@link CommOp#effect}): all but {@link #COMM_RANK} are ordered on their communicator, run
 * once each, in program order, used or not. A request is an I64 scalar that exactly one {@link #WAIT} consumes.
 */
public final class CommPrims {
    private CommPrims() {
    }

    public static final Aval REQUEST = Aval.of(DType.I64);

    public static final Primitive<CommOp.Rank> COMM_RANK = prim(CommOp.Kind.COMM_RANK, CommOp.Rank.class,
            (in, p) -> List.of(Aval.of(DType.I32)));

    public static final Primitive<CommOp.Barrier> BARRIER = prim(CommOp.Kind.BARRIER, CommOp.Barrier.class,
            (in, p) -> List.of());

    public static final Primitive<CommOp.Send> SEND = prim(CommOp.Kind.SEND, CommOp.Send.class, (in, p) -> {
        checkPeer(p, p.dest(), p.tag());
        return List.of();
    });

    public static final Primitive<CommOp.Recv> RECV = prim(CommOp.Kind.RECV, CommOp.Recv.class, (in, p) -> {
        checkPeer(p, p.source(), p.tag());
        return List.of(p.result());
    });

    public static final Primitive<CommOp.Isend> ISEND = prim(CommOp.Kind.ISEND, CommOp.Isend.class, (in, p) -> {
        checkPeer(p, p.dest(), p.tag());
        return List.of(REQUEST);
    });

    public static final Primitive<CommOp.Irecv> IRECV = prim(CommOp.Kind.IRECV, CommOp.Irecv.class, (in, p) -> {
        checkPeer(p, p.source(), p.tag());
        return List.of(REQUEST);
    });

    public static final Primitive<CommOp.Wait> WAIT = prim(CommOp.Kind.WAIT, CommOp.Wait.class,
            (in, p) -> p.result() == null ? List.of() : List.of(p.result()));

    public static final Primitive<CommOp.AllReduce> ALLREDUCE = prim(CommOp.Kind.ALLREDUCE, CommOp.AllReduce.class,
            (in, p) -> {
                numeric(p, in.getFirst());
                return List.of(in.getFirst());
            });

    public static final Primitive<CommOp.AllGather> ALLGATHER = prim(CommOp.Kind.ALLGATHER, CommOp.AllGather.class,
            (in, p) -> {
                Aval a = in.getFirst();
                long[] d = a.shape().rank() == 0 ? new long[] {1} : a.shape().dims();
                d[0] *= p.handle().size();
                return List.of(new Aval(a.dtype(), Shape.of(d)));
            });

    /** {@code [sum(counts), ...]} of an operand of {@code counts[rank]} rows. */
    public static final Primitive<CommOp.AllGatherV> ALLGATHERV = prim(CommOp.Kind.ALLGATHERV,
            CommOp.AllGatherV.class, (in, p) -> {
                counts(p, p.counts(), "counts");
                return List.of(rows(p, in.getFirst(), p.counts().get(p.handle().rank()), p.total()));
            });

    /** On the root {@code [sum(counts), ...]}, elsewhere {@code [0, ...]}, of an operand of {@code counts[rank]} rows. */
    public static final Primitive<CommOp.GatherV> GATHERV = prim(CommOp.Kind.GATHERV, CommOp.GatherV.class,
            (in, p) -> {
                checkRoot(p, p.root());
                counts(p, p.counts(), "counts");
                int rank = p.handle().rank();
                return List.of(rows(p, in.getFirst(), p.counts().get(rank), rank == p.root() ? p.total() : 0));
            });

    /** {@code [counts[rank], ...]} of an operand of {@code [sum(counts), ...]}. */
    public static final Primitive<CommOp.ScatterV> SCATTERV = prim(CommOp.Kind.SCATTERV, CommOp.ScatterV.class,
            (in, p) -> {
                checkRoot(p, p.root());
                counts(p, p.counts(), "counts");
                return List.of(rows(p, in.getFirst(), p.total(), p.counts().get(p.handle().rank())));
            });

    /** {@code [sum(recvCounts), ...]} of an operand of {@code [sum(sendCounts), ...]}. */
    public static final Primitive<CommOp.AllToAllV> ALLTOALLV = prim(CommOp.Kind.ALLTOALLV, CommOp.AllToAllV.class,
            (in, p) -> {
                counts(p, p.sendCounts(), "sendCounts");
                counts(p, p.recvCounts(), "recvCounts");
                return List.of(rows(p, in.getFirst(), CommOp.sum(p.sendCounts()), CommOp.sum(p.recvCounts())));
            });

    public static final Primitive<CommOp.ReduceScatter> REDUCE_SCATTER = prim(CommOp.Kind.REDUCE_SCATTER,
            CommOp.ReduceScatter.class, (in, p) -> {
                Aval a = in.getFirst();
                numeric(p, a);
                long[] d = splitAxis0(p, a, p.handle().size());
                d[0] /= p.handle().size();
                return List.of(new Aval(a.dtype(), Shape.of(d)));
            });

    public static final Primitive<CommOp.Bcast> BCAST = prim(CommOp.Kind.BCAST, CommOp.Bcast.class, (in, p) -> {
        checkRoot(p, p.root());
        return List.of(in.getFirst());
    });

    public static final Primitive<CommOp.Reduce> REDUCE = prim(CommOp.Kind.REDUCE, CommOp.Reduce.class, (in, p) -> {
        numeric(p, in.getFirst());
        checkRoot(p, p.root());
        return List.of(in.getFirst());
    });

    public static final Primitive<CommOp.AllToAll> ALLTOALL = prim(CommOp.Kind.ALLTOALL, CommOp.AllToAll.class,
            (in, p) -> {
                splitAxis0(p, in.getFirst(), p.handle().size());
                return List.of(in.getFirst());
            });

    public static final Primitive<CommOp.SendRecv> SENDRECV = prim(CommOp.Kind.SENDRECV, CommOp.SendRecv.class,
            (in, p) -> {
                checkPeer(p, p.dest(), p.sendTag());
                checkPeer(p, p.source(), p.recvTag());
                return List.of(p.result());
            });

    /** What a {@link #RECV_ANY} gives besides the tensor: the matched message's source and tag. */
    public static final Aval STATUS = new Aval(DType.I32, Shape.of(2));

    public static final Primitive<CommOp.RecvAny> RECV_ANY = prim(CommOp.Kind.RECV_ANY, CommOp.RecvAny.class,
            (in, p) -> {
                checkPeer(p, p.source() == Comm.ANY_SOURCE ? 0 : p.source(), p.tag() == Comm.ANY_TAG ? 0 : p.tag());
                return List.of(p.result(), STATUS);
            });

    public static final Primitive<CommOp.IAllReduce> IALLREDUCE = start(CommOp.Kind.IALLREDUCE,
            CommOp.IAllReduce.class);

    public static final Primitive<CommOp.IAllGather> IALLGATHER = start(CommOp.Kind.IALLGATHER,
            CommOp.IAllGather.class);

    public static final Primitive<CommOp.IReduceScatter> IREDUCE_SCATTER = start(CommOp.Kind.IREDUCE_SCATTER,
            CommOp.IReduceScatter.class);

    public static final Primitive<CommOp.IBcast> IBCAST = start(CommOp.Kind.IBCAST, CommOp.IBcast.class);

    public static final Primitive<CommOp.IAllToAll> IALLTOALL = start(CommOp.Kind.IALLTOALL, CommOp.IAllToAll.class);

    public static final Primitive<CommOp.IBarrier> IBARRIER = start(CommOp.Kind.IBARRIER, CommOp.IBarrier.class);

    /** Inputs [request, operand] ([request] for an ibarrier); results those of the blocking collective. */
    public static final Primitive<CommOp.CollectiveWait> WAIT_COLLECTIVE = prim(CommOp.Kind.WAIT_COLLECTIVE,
            CommOp.CollectiveWait.class, (in, p) -> {
                CommOp.Collective blocking = p.start().blocking();
                return of(blocking).infer(in.subList(1, in.size()), blocking, SourceLocation.UNKNOWN);
            });

    /** Every communication primitive, in the order of {@link CommOp}'s records. */
    public static final List<Primitive<? extends CommOp>> ALL = List.of(COMM_RANK, BARRIER, SEND, RECV, ISEND, IRECV,
            WAIT, ALLREDUCE, ALLGATHER, REDUCE_SCATTER, BCAST, REDUCE, ALLTOALL, SENDRECV, ALLGATHERV, GATHERV,
            SCATTERV, ALLTOALLV, RECV_ANY,
            IALLREDUCE, IALLGATHER, IREDUCE_SCATTER, IBCAST, IALLTOALL, IBARRIER, WAIT_COLLECTIVE);

    private static final Map<CommOp.Kind, Primitive<? extends CommOp>> BY_KIND = new EnumMap<>(CommOp.Kind.class);

    static {
        for (Primitive<? extends CommOp> p : ALL) {
            BY_KIND.put(CommOp.Kind.of(p.name()), p);
        }
    }

    /** The primitive whose parameters {@code op} is. */
    public static Primitive<? extends CommOp> of(CommOp op) {
        return BY_KIND.get(op.kind());
    }

    /**
     * Applies {@code op}'s primitive to {@code args}: {@code op} alone says what to do. Refused inside a custom
     * reduce op ({@link ReduceOp#refuseInside}).
     */
    public static List<Tensor> bind(CommOp op, Tensor... args) {
        ReduceOp.refuseInside(op.kind().label());
        return Bind.bind(of(op), op, args);
    }

    /**
     * The communicators that the communication ops of {@code body} (nested regions included) run on, each bound to
     * its reference: what an executable of {@code body}'s lowered module is bound to on this rank.
     */
    public static CommBindings bindings(Region body) {
        List<CommHandle> handles = new ArrayList<>();
        handles(body, handles);
        return CommBindings.of(handles);
    }

    private static void handles(Region body, List<CommHandle> out) {
        for (Node n : body.nodes()) {
            if (n.params() instanceof CommOp op) {
                out.add(op.handle());
            }
            for (Region r : n.regions()) {
                handles(r, out);
            }
        }
    }

    /** The primitive of {@code kind}, named by its label. */
    private static <P extends CommOp> Primitive<P> prim(CommOp.Kind kind, Class<P> type, ShapeRule<P> rule) {
        return new Primitive<>(kind.label(), type, CommOp::effect, rule);
    }

    /**
     * The start of a nonblocking collective: its operands checked as its blocking collective's (a bad shape fails at
     * the start's line), a request out.
     */
    private static <P extends CommOp.CollectiveStart> Primitive<P> start(CommOp.Kind kind, Class<P> type) {
        return prim(kind, type, (in, p) -> {
            CommOp.Collective blocking = p.blocking();
            of(blocking).infer(in, blocking, SourceLocation.UNKNOWN);
            return List.of(REQUEST);
        });
    }

    private static void checkPeer(CommOp p, int peer, int tag) {
        int size = p.handle().size();
        if (peer < 0 || peer >= size) {
            throw new WeftException(SourceLocation.UNKNOWN,
                    "peer rank " + peer + " is outside [0, " + size + ") of communicator " + p.comm().name());
        }
        if (tag < 0) {
            throw new WeftException(SourceLocation.UNKNOWN, "tag " + tag + " is negative");
        }
    }

    private static void checkRoot(CommOp p, int root) {
        int size = p.handle().size();
        if (root < 0 || root >= size) {
            throw new WeftException(SourceLocation.UNKNOWN,
                    "root rank " + root + " is outside [0, " + size + ") of communicator " + p.comm().name());
        }
    }

    private static void numeric(CommOp op, Aval a) {
        if (a.dtype() == DType.BOOL) {
            throw dev.weft.spi.Errors.dtype("%s: not defined on bool", op.kind());
        }
    }

    /** {@code counts} of a variable-count collective: one entry per rank of the communicator, none negative. */
    private static void counts(CommOp op, List<Long> counts, String name) {
        int size = op.handle().size();
        if (counts.size() != size) {
            throw shape("%s: %s %s has %d entries for %d ranks", op.kind(), name, counts, counts.size(), size);
        }
        if (counts.stream().anyMatch(c -> c < 0)) {
            throw shape("%s: %s %s has a negative count", op.kind(), name, counts);
        }
    }

    /** {@code a}, checked to have {@code rows} rows along axis 0, with {@code result} rows instead. */
    private static Aval rows(CommOp op, Aval a, long rows, long result) {
        if (a.shape().rank() == 0 || a.shape().dim(0) != rows) {
            throw shape("%s: %s needs %d rows along axis 0 (from the counts)", op.kind(), a.shape(), rows);
        }
        long[] d = a.shape().dims();
        d[0] = result;
        return new Aval(a.dtype(), Shape.of(d));
    }

    private static long[] splitAxis0(CommOp op, Aval a, int size) {
        if (a.shape().rank() == 0 || a.shape().dim(0) % size != 0) {
            throw shape("%s: axis 0 of %s must split into %d equal blocks", op.kind(), a.shape(), size);
        }
        return a.shape().dims();
    }
}
