package dev.weft.comm;

import dev.weft.DType;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.prim.CommOp;
import dev.weft.prim.CommPrims;
import dev.weft.prim.ElementwiseOp;
import dev.weft.spi.AgentInstallation;
import dev.weft.spi.Args;
import dev.weft.spi.Aval;
import dev.weft.spi.CommBinding;
import dev.weft.spi.CommHandle;
import dev.weft.spi.Interpreters;
import dev.weft.spi.Setting;
import dev.weft.spi.Shape;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A communicator: a group of ranks exchanging tensors with MPI semantics (point-to-point messages match by
 * source and tag, in order per pair; collectives are called by every rank in the same order).
 *
 * <p>Outside {@code @Compile} every call runs at once on the bound runtime (fake in-process ranks or MPI). Inside,
 * tensor communication is recorded as ordered effects of the program; {@link #rank()}, {@link #size()},
 * {@link #split} and {@link #dup} are host operations that run while tracing (so a program that branches on
 * {@code rank()} is specialised to its rank; use {@link #rankTensor()} for one program on all ranks).
 * Peers out of range and negative tags are errors naming the line, as is a {@code null} argument
 * ({@link dev.weft.NullArgumentException}). A peer may be {@link #PROC_NULL}, as in MPI: sending to it does nothing and
 * receiving from it gives zeros. Two {@code Comm}s are equal when they denote the same communicator.
 */
public sealed class Comm permits CartComm {
    /**
     * MPI_PROC_NULL: a peer that is no rank. A send to it completes at once and sends nothing; a receive from it
     * completes at once with zeros of the asked dtype and shape (MPI leaves the buffer unchanged; Weft's receives
     * make a new tensor). {@link CartComm#shift} gives it at a closed edge.
     */
    public static final int PROC_NULL = -2;

    /**
     * MPI_ANY_SOURCE: the source of a {@link #recvAny} that takes a message from whichever rank sends one. Weft's
     * own value; each MPI binding passes its library's.
     */
    public static final int ANY_SOURCE = -1;

    /** MPI_ANY_TAG: the tag of a {@link #recvAny} that takes a message whatever its tag. */
    public static final int ANY_TAG = -1;

    private final CommHandle handle;

    Comm(CommHandle handle) {
        AgentInstallation.ensure();
        this.handle = handle;
    }

    /** All ranks of the job (of this fake rank's world when running on fake ranks). */
    public static Comm world() {
        return new Comm(CommBinding.world());
    }

    /** Wraps a runtime handle; for runtimes and tests. */
    public static Comm of(CommHandle handle) {
        Args.notNull(handle, Comm.class, "of", "handle");
        return new Comm(handle);
    }

    /** The runtime handle; for backends. */
    public CommHandle handle() {
        return handle;
    }

    /** This rank, a host value. */
    public int rank() {
        Interpreters.current().readComm(handle);
        return handle.rank();
    }

    /** Number of ranks, a host value. */
    public int size() {
        Interpreters.current().readComm(handle);
        return handle.size();
    }

    /** This rank as an I32 scalar tensor: a run-time value inside {@code @Compile}. */
    public Tensor rankTensor() {
        return one(CommPrims.bind(new CommOp.Rank(handle)));
    }

    /** Blocks until every rank has called it. */
    public void barrier() {
        CommPrims.bind(new CommOp.Barrier(handle));
    }

    /**
     * Sends {@code x} to {@code dest}. It may return only once {@code dest} has started the matching receive: MPI
     * does not promise to buffer sends, and fake ranks never do by default, so two ranks that both send before
     * they receive deadlock. Exchange with {@link #sendrecv}, or start {@link #isend} and {@link #irecv} and then
     * wait for both.
     */
    public void send(Tensor x, int dest, int tag) {
        Args.notNull(x, Comm.class, "send", "x");
        if (dest == PROC_NULL) {
            return;
        }
        CommPrims.bind(new CommOp.Send(handle, dest, tag), x);
    }

    /** Receives a tensor of {@code dtype} and {@code shape} from {@code src} with {@code tag}. */
    public Tensor recv(DType dtype, long[] shape, int src, int tag) {
        Args.notNull(dtype, Comm.class, "recv", "dtype");
        Args.notNull(shape, Comm.class, "recv", "shape");
        if (src == PROC_NULL) {
            return Tensor.zeros(dtype, shape);
        }
        return one(CommPrims.bind(new CommOp.Recv(handle, src, tag, new Aval(dtype, Shape.of(shape)))));
    }

    /**
     * Receives a tensor of {@code dtype} and {@code shape} from {@code src}, a rank or {@link #ANY_SOURCE}, with
     * {@code tag}, a tag or {@link #ANY_TAG}, and says which message it took ({@link Received#source()},
     * {@link Received#tag()}). MPI's matching rules: it takes the earliest matching message, and the messages of
     * one sender in the order they were sent; which of several senders' messages a wildcard takes is up to the
     * runtime (with MPI, to timing), so a program must not depend on it. The message must have this dtype and
     * shape. From {@link #PROC_NULL}: zeros at once, with source {@code PROC_NULL} and tag {@code ANY_TAG}, as
     * MPI's status says.
     *
     * <p>Inside {@code @Compile} the matched source and tag are run-time values, like {@link #rankTensor()}: read
     * them as {@link Received#sourceTensor()} and {@link Received#tagTensor()}. Differentiating through a receive
     * from {@code ANY_SOURCE} is an error naming the line (its tangent would have to come from a sender known only
     * at run time); one from a named rank differentiates as {@link #recv}. The GPU target (NCCL) has no wildcard
     * receive: compiling one for it is an error naming the line.
     */
    public Received recvAny(DType dtype, long[] shape, int src, int tag) {
        Args.notNull(dtype, Comm.class, "recvAny", "dtype");
        Args.notNull(shape, Comm.class, "recvAny", "shape");
        SourceLocation where = SourceLocation.capture();
        if (src == PROC_NULL) {
            return new Received(Tensor.zeros(dtype, shape), Tensor.of(new int[] {PROC_NULL, ANY_TAG}, 2), PROC_NULL,
                    ANY_TAG, where);
        }
        List<Tensor> out = CommPrims.bind(new CommOp.RecvAny(handle, src, tag, new Aval(dtype, Shape.of(shape))));
        return new Received(out.get(0), out.get(1), src, tag, where);
    }

    /**
     * Starts sending {@code x}; complete it with {@link #wait(Request)}, which returns {@code x} and may return only
     * once the matching receive has started.
     */
    public Request isend(Tensor x, int dest, int tag) {
        Args.notNull(x, Comm.class, "isend", "x");
        if (dest == PROC_NULL) {
            return Request.done(this, x, x, SourceLocation.capture());
        }
        CommOp.Isend start = new CommOp.Isend(handle, dest, tag);
        return Request.send(this, start, one(CommPrims.bind(start, x)), x, SourceLocation.capture());
    }

    /** Starts receiving; {@link #wait(Request)} returns the tensor. */
    public Request irecv(DType dtype, long[] shape, int src, int tag) {
        Args.notNull(dtype, Comm.class, "irecv", "dtype");
        Args.notNull(shape, Comm.class, "irecv", "shape");
        if (src == PROC_NULL) {
            return Request.done(this, Tensor.zeros(dtype, shape), null, SourceLocation.capture());
        }
        CommOp.Irecv start = new CommOp.Irecv(handle, src, tag, new Aval(dtype, Shape.of(shape)));
        return Request.receive(this, start, one(CommPrims.bind(start)), SourceLocation.capture());
    }

    /**
     * Completes {@code r}: the received tensor, the sent one, or a nonblocking collective's result ({@code null} for
     * an {@link #ibarrier}). Each request is waited exactly once.
     */
    public Tensor wait(Request r) {
        Args.notNull(r, Comm.class, "wait", "r");
        SourceLocation where = SourceLocation.capture();
        if (!r.comm().equals(this)) {
            throw new WeftException(where, "request of communicator " + r.comm().handle.name()
                    + " waited on " + handle.name());
        }
        r.complete(where);
        if (r.collective() != null) {
            CommOp.CollectiveWait done = new CommOp.CollectiveWait(r.collective());
            List<Tensor> out = r.operand() == null ? CommPrims.bind(done, r.handle())
                    : CommPrims.bind(done, r.handle(), r.operand());
            return out.isEmpty() ? null : out.getFirst();
        }
        if (r.start() == null) {
            return r.handle();
        }
        CommOp.Wait wait = new CommOp.Wait(r.start());
        if (r.sent() != null) {
            CommPrims.bind(wait, r.handle(), r.sent());
            return r.sent();
        }
        return one(CommPrims.bind(wait, r.handle()));
    }

    /** Completes every request, in order. */
    public List<Tensor> waitAll(Request... requests) {
        Args.noNulls(requests, Comm.class, "waitAll", "requests");
        List<Tensor> out = new ArrayList<>(requests.length);
        for (Request r : requests) {
            out.add(wait(r));
        }
        return out;
    }

    /**
     * Declares that every rank of this communicator holds the same {@code x} (JAX's replicated {@code P()} input)
     * and returns it, marked: a function differentiated with respect to it treats it as one value shared by the
     * ranks, invariant over this communicator, so its gradient is summed over the ranks where they use it
     * differently (data-parallel parameters), and a result computed from invariant values alone counts once. Mark
     * the tensor passed to {@code Weft.grad}/{@code vjp} (or captured by the function); the mark is on this tensor
     * object, not on values computed from it. Under {@code WEFT_CHECK=strict} the ranks compare a concrete {@code x}
     * (a collective) and a difference is an error naming this line; otherwise, and for a traced {@code x} inside
     * {@code @Compile}, the declaration is trusted.
     *
     * @throws WeftException under {@code strict}, on every rank, when the ranks hold different values
     */
    public Tensor replicated(Tensor x) {
        Args.notNull(x, Comm.class, "replicated", "x");
        if ("strict".equals(Setting.CHECK.choice()) && TensorAccess.data(x) != null
                && !Agreement.same(handle, List.of(x))[0]) {
            throw new WeftException(SourceLocation.capture(), "replicated: the ranks of " + handle.name()
                    + " hold different values of " + TensorAccess.aval(x) + " (declared the same on every rank)");
        }
        Replicas.mark(x, handle);
        return x;
    }

    /** {@link #replicated(Tensor)} for every leaf of a tree (a record of parameters, say); the tree is returned. */
    @SuppressWarnings("unchecked")
    public <T> T replicated(T tree) {
        Args.notNull(tree, Comm.class, "replicated", "tree");
        return tree instanceof Tensor t ? (T) replicated(t) : dev.weft.Trees.map(tree, this::replicated);
    }

    /** Elementwise reduction of every rank's {@code x}; every rank gets the result. */
    public Tensor allreduce(Tensor x, ReduceOp op) {
        Args.notNull(x, Comm.class, "allreduce", "x");
        Args.notNull(op, Comm.class, "allreduce", "op");
        return one(CommPrims.bind(new CommOp.AllReduce(handle, op), x));
    }

    /** Every rank's {@code x} concatenated along axis 0 in rank order (scalars become a 1-D tensor). */
    public Tensor allgather(Tensor x) {
        Args.notNull(x, Comm.class, "allgather", "x");
        return one(CommPrims.bind(new CommOp.AllGather(handle), x));
    }

    /** Reduces like {@link #allreduce}, then rank {@code r} keeps block {@code r} of {@code size()} along axis 0. */
    public Tensor reduceScatter(Tensor x, ReduceOp op) {
        Args.notNull(x, Comm.class, "reduceScatter", "x");
        Args.notNull(op, Comm.class, "reduceScatter", "op");
        return one(CommPrims.bind(new CommOp.ReduceScatter(handle, op), x));
    }

    /** The root's {@code x} on every rank (other ranks' {@code x} only give the shape and dtype). */
    public Tensor bcast(Tensor x, int root) {
        Args.notNull(x, Comm.class, "bcast", "x");
        return one(CommPrims.bind(new CommOp.Bcast(handle, root), x));
    }

    /** The reduction at {@code root}; other ranks get their own {@code x} back. */
    public Tensor reduce(Tensor x, ReduceOp op, int root) {
        Args.notNull(x, Comm.class, "reduce", "x");
        Args.notNull(op, Comm.class, "reduce", "op");
        return one(CommPrims.bind(new CommOp.Reduce(handle, op, root), x));
    }

    /**
     * MPI_Gather: on {@code root}, every rank's {@code x} concatenated along axis 0 in rank order (the layout of
     * {@link #allgather}; scalars become a 1-D tensor); elsewhere an empty tensor of shape {@code [0, ...]}. Every
     * rank calls it with operands of one dtype and shape (the schedule check names the lines of ranks that do not).
     * The {@link #gatherv} of equal blocks, so it runs and differentiates as that does: its transpose is a
     * {@link #scatter} from the root.
     *
     * @throws WeftException naming the line for a root outside the communicator
     */
    public Tensor gather(Tensor x, int root) {
        Args.notNull(x, Comm.class, "gather", "x");
        checkRoot("gather", root);
        Tensor rows = x.rank() == 0 ? x.reshape(1) : x;
        return one(CommPrims.bind(new CommOp.GatherV(handle, equalCounts(rows.shape()[0]), root), rows));
    }

    /**
     * MPI_Scatter: every rank passes a tensor of the root's shape {@code [size·d0, ...]} (only the root's values are
     * read) and gets its block {@code [d0, ...]}: rank {@code r} the rows {@code [r·d0, (r+1)·d0)}. The
     * {@link #scatterv} of equal blocks; its transpose is a {@link #gather} to the root.
     *
     * @throws ShapeException naming the line when axis 0 does not split evenly over the ranks
     */
    public Tensor scatter(Tensor x, int root) {
        Args.notNull(x, Comm.class, "scatter", "x");
        checkRoot("scatter", root);
        long[] shape = x.shape();
        if (shape.length == 0 || shape[0] % size() != 0) {
            throw new ShapeException(SourceLocation.capture(), "scatter: " + TensorAccess.aval(x) + " does not split"
                    + " along axis 0 into " + size() + " equal blocks, one per rank");
        }
        return one(CommPrims.bind(new CommOp.ScatterV(handle, equalCounts(shape[0] / size()), root), x));
    }

    /** {@code rows} for every rank, as the v-variants' counts. */
    private List<Long> equalCounts(long rows) {
        return Collections.nCopies(size(), rows);
    }

    /**
     * MPI_Scan: rank {@code r} gets the reduction of ranks {@code 0..r}'s {@code x} by {@code op} (SUM, PROD, MAX or
     * MIN; elementwise). Built on {@link #allgather}; differentiable for SUM (and MAX, MIN, PROD as their
     * reductions are).
     *
     * @throws WeftException naming the line for a custom reduce op
     */
    public Tensor scan(Tensor x, ReduceOp op) {
        Args.notNull(x, Comm.class, "scan", "x");
        Args.notNull(op, Comm.class, "scan", "op");
        return prefix("scan", x, op, rank() + 1);
    }

    /**
     * MPI_Exscan: rank {@code r} gets the reduction of ranks {@code 0..r-1}'s {@code x}; rank 0 gets the op's
     * identity (0 for SUM, 1 for PROD, the lowest value for MAX, the highest for MIN), which MPI leaves undefined.
     *
     * @throws WeftException naming the line for a custom reduce op
     */
    public Tensor exscan(Tensor x, ReduceOp op) {
        Args.notNull(x, Comm.class, "exscan", "x");
        Args.notNull(op, Comm.class, "exscan", "op");
        return prefix("exscan", x, op, rank());
    }

    /**
     * MPI_Allgatherv: rank {@code r} passes {@code counts[r]} rows ({@code x}'s axis 0; the other axes alike on every
     * rank) and every rank gets all rows in rank order, {@code [sum(counts), ...]}. Every rank passes the same
     * {@code counts} (the schedule check names the lines of ranks that do not). One collective of its own on every
     * runtime (fake ranks, MPI, NCCL; eager and compiled), moving no padding; its result is invariant, as
     * {@link #allgather}'s, and its transpose is this rank's rows of the cotangent.
     *
     * @throws ShapeException naming the line when {@code counts} has not one entry per rank, one is negative, or
     *     {@code x} has not {@code counts[rank]} rows
     */
    public Tensor allgatherv(Tensor x, long[] counts) {
        Args.notNull(x, Comm.class, "allgatherv", "x");
        Args.notNull(counts, Comm.class, "allgatherv", "counts");
        checkCounts("allgatherv", counts, "counts");
        checkRows("allgatherv", x, counts[rank()]);
        return one(CommPrims.bind(new CommOp.AllGatherV(handle, boxed(counts)), x));
    }

    /**
     * MPI_Gatherv: on {@code root}, every rank's {@code counts[r]} rows concatenated in rank order (as
     * {@link #allgatherv}); elsewhere an empty {@code [0, ...]} tensor. One collective of its own on every runtime;
     * its result is varying (only the root holds the rows), and its transpose is a {@link #scatterv} from the root.
     *
     * @throws WeftException naming the line for a root outside the communicator, or bad counts as in allgatherv
     */
    public Tensor gatherv(Tensor x, long[] counts, int root) {
        Args.notNull(x, Comm.class, "gatherv", "x");
        Args.notNull(counts, Comm.class, "gatherv", "counts");
        checkRoot("gatherv", root);
        checkCounts("gatherv", counts, "counts");
        checkRows("gatherv", x, counts[rank()]);
        return one(CommPrims.bind(new CommOp.GatherV(handle, boxed(counts), root), x));
    }

    /**
     * MPI_Scatterv: every rank passes a tensor of the root's shape {@code [sum(counts), ...]} (only the root's
     * values are read) and rank {@code r} gets its {@code counts[r]} rows, those after the counts of the ranks
     * before it. One collective of its own on every runtime; its transpose is a {@link #gatherv} to the root.
     *
     * @throws ShapeException naming the line when the counts do not add up to {@code x}'s rows, or are bad as in
     *     allgatherv
     */
    public Tensor scatterv(Tensor x, long[] counts, int root) {
        Args.notNull(x, Comm.class, "scatterv", "x");
        Args.notNull(counts, Comm.class, "scatterv", "counts");
        checkRoot("scatterv", root);
        checkCounts("scatterv", counts, "counts");
        checkRows("scatterv", x, Arrays.stream(counts).sum());
        return one(CommPrims.bind(new CommOp.ScatterV(handle, boxed(counts), root), x));
    }

    /**
     * MPI_Alltoallv: the first {@code sendCounts[0]} rows of {@code x} go to rank 0, the next {@code sendCounts[1]}
     * to rank 1, and so on; the result holds {@code recvCounts[i]} rows from each rank {@code i} in rank order. As in
     * MPI, {@code recvCounts[i]} here must equal rank {@code i}'s {@code sendCounts} entry for this rank. One
     * collective of its own on every runtime, moving no padding; its transpose is an alltoallv back, with the send
     * and receive counts swapped.
     *
     * @throws ShapeException naming the line when either count array has not one entry per rank, an entry is
     *     negative, or the send counts do not add up to {@code x}'s rows
     */
    public Tensor alltoallv(Tensor x, long[] sendCounts, long[] recvCounts) {
        Args.notNull(x, Comm.class, "alltoallv", "x");
        Args.notNull(sendCounts, Comm.class, "alltoallv", "sendCounts");
        Args.notNull(recvCounts, Comm.class, "alltoallv", "recvCounts");
        checkCounts("alltoallv", sendCounts, "sendCounts");
        checkCounts("alltoallv", recvCounts, "recvCounts");
        checkRows("alltoallv", x, Arrays.stream(sendCounts).sum());
        return one(CommPrims.bind(new CommOp.AllToAllV(handle, boxed(sendCounts), boxed(recvCounts)), x));
    }

    private static List<Long> boxed(long[] counts) {
        return Arrays.stream(counts).boxed().toList();
    }

    private void checkCounts(String what, long[] counts, String name) {
        if (counts.length != size()) {
            throw new ShapeException(SourceLocation.capture(), what + ": " + name + " has " + counts.length
                    + " entries " + Arrays.toString(counts) + " for " + size() + " ranks of " + handle.name());
        }
        for (long c : counts) {
            if (c < 0) {
                throw new ShapeException(SourceLocation.capture(), what + ": " + name + " "
                        + Arrays.toString(counts) + " has a negative count");
            }
        }
    }

    private void checkRows(String what, Tensor x, long rows) {
        long[] shape = x.shape();
        if (shape.length == 0 || shape[0] != rows) {
            throw new ShapeException(SourceLocation.capture(), what + ": " + TensorAccess.aval(x) + " on rank " + rank()
                    + " needs " + rows + " rows along axis 0 (from the counts)");
        }
    }

    /** The reduction by {@code op} of the first {@code count} ranks' {@code x}, the op's identity for none. */
    private Tensor prefix(String what, Tensor x, ReduceOp op, int count) {
        if (op.isCustom()) {
            throw new WeftException(SourceLocation.capture(), what + ": a custom reduce op (" + op.name() + ") has no"
                    + " scan here; use SUM, PROD, MAX or MIN");
        }
        long[] one = x.shape();
        long[] stacked = new long[one.length + 1];
        stacked[0] = size();
        System.arraycopy(one, 0, stacked, 1, one.length);
        Tensor all = allgather(x.reshape(prepend(one))).reshape(stacked);
        // the ranks before this one (and it, for scan), chosen by rankTensor(): the result differs from rank to rank
        long[] column = new long[stacked.length];
        Arrays.fill(column, 1);
        column[0] = size();
        Tensor mine = Tensor.arange(DType.I32, size()).reshape(column).lt(rankTensor().add(count - rank()));
        ElementwiseOp fold = op == ReduceOp.SUM ? ElementwiseOp.ADD : op == ReduceOp.PROD ? ElementwiseOp.MUL
                : op == ReduceOp.MAX ? ElementwiseOp.MAX : ElementwiseOp.MIN;
        Tensor picked = Tensor.where(mine, all, Tensor.full(x.dtype(), fold.identity(x.dtype()).doubleValue()));
        return op == ReduceOp.SUM ? picked.sum(0) : op == ReduceOp.PROD ? picked.prod(0)
                : op == ReduceOp.MAX ? picked.max(0) : picked.min(0);
    }

    /** {@code shape} with a leading axis of 1. */
    static long[] prepend(long[] shape) {
        long[] out = new long[shape.length + 1];
        out[0] = 1;
        System.arraycopy(shape, 0, out, 1, shape.length);
        return out;
    }

    private void checkRoot(String what, int root) {
        if (root < 0 || root >= size()) {
            throw new WeftException(SourceLocation.capture(), what + ": root rank " + root + " is outside [0, "
                    + size() + ") of communicator " + handle.name());
        }
    }

    /**
     * Starts {@link #allreduce}{@code (x, op)} (MPI_Iallreduce) and returns at once; {@link #wait(Request)} gives its
     * result. Every rank starts its nonblocking collectives in the same order as its other collectives on this
     * communicator (a start never matches a blocking collective). Compiled, the transfer progresses while the
     * computation between the start and the wait runs; eager, it completes at the wait. Differentiates and batches
     * as {@code allreduce} does. {@code x} must stay unchanged until the wait (Weft's tensors are immutable, so it
     * does).
     *
     * @throws WeftException naming the line for a custom reduce op, which runs only blocking
     */
    public Request iallreduce(Tensor x, ReduceOp op) {
        Args.notNull(x, Comm.class, "iallreduce", "x");
        Args.notNull(op, Comm.class, "iallreduce", "op");
        builtinOnly("iallreduce", op);
        return start(new CommOp.IAllReduce(handle, op), x);
    }

    /** Starts {@link #allgather}{@code (x)} (MPI_Iallgather); see {@link #iallreduce}. */
    public Request iallgather(Tensor x) {
        Args.notNull(x, Comm.class, "iallgather", "x");
        return start(new CommOp.IAllGather(handle), x);
    }

    /**
     * Starts {@link #reduceScatter}{@code (x, op)} (MPI_Ireduce_scatter_block); see {@link #iallreduce}.
     *
     * @throws WeftException naming the line for a custom reduce op
     */
    public Request ireduceScatter(Tensor x, ReduceOp op) {
        Args.notNull(x, Comm.class, "ireduceScatter", "x");
        Args.notNull(op, Comm.class, "ireduceScatter", "op");
        builtinOnly("ireduceScatter", op);
        return start(new CommOp.IReduceScatter(handle, op), x);
    }

    /** Starts {@link #bcast}{@code (x, root)} (MPI_Ibcast); see {@link #iallreduce}. */
    public Request ibcast(Tensor x, int root) {
        Args.notNull(x, Comm.class, "ibcast", "x");
        return start(new CommOp.IBcast(handle, root), x);
    }

    /** Starts {@link #alltoall}{@code (x)} (MPI_Ialltoall); see {@link #iallreduce}. */
    public Request ialltoall(Tensor x) {
        Args.notNull(x, Comm.class, "ialltoall", "x");
        return start(new CommOp.IAllToAll(handle), x);
    }

    /**
     * Starts a {@link #barrier} (MPI_Ibarrier): its {@link #wait(Request)} returns ({@code null}) once every rank has
     * started it.
     */
    public Request ibarrier() {
        return start(new CommOp.IBarrier(handle), null);
    }

    private Request start(CommOp.CollectiveStart op, Tensor x) {
        Tensor request = x == null ? one(CommPrims.bind(op)) : one(CommPrims.bind(op, x));
        return Request.collective(this, op, request, x, SourceLocation.capture());
    }

    private static void builtinOnly(String what, ReduceOp op) {
        if (op.isCustom()) {
            throw new WeftException(SourceLocation.capture(), what + ": a custom reduce op (" + op.name() + ") runs"
                    + " only in the blocking collective; use SUM, PROD, MAX or MIN, or the blocking call");
        }
    }

    /** Block {@code j} of axis 0 goes to rank {@code j}; block {@code i} of the result came from rank {@code i}. */
    public Tensor alltoall(Tensor x) {
        Args.notNull(x, Comm.class, "alltoall", "x");
        return one(CommPrims.bind(new CommOp.AllToAll(handle), x));
    }

    /** Sends {@code x} to {@code dest} and receives a tensor from {@code src}, without deadlock. */
    public Tensor sendrecv(Tensor x, int dest, int sendTag, DType dtype, long[] shape, int src, int recvTag) {
        Args.notNull(x, Comm.class, "sendrecv", "x");
        Args.notNull(dtype, Comm.class, "sendrecv", "dtype");
        Args.notNull(shape, Comm.class, "sendrecv", "shape");
        if (dest == PROC_NULL || src == PROC_NULL) {
            send(x, dest, sendTag);
            return recv(dtype, shape, src, recvTag);
        }
        return one(CommPrims.bind(new CommOp.SendRecv(handle, dest, sendTag, src, recvTag,
                new Aval(dtype, Shape.of(shape))), x));
    }

    /** {@link #sendrecv(Tensor, int, int, DType, long[], int, int)} receiving the dtype and shape of {@code x}. */
    public Tensor sendrecv(Tensor x, int dest, int src, int tag) {
        Args.notNull(x, Comm.class, "sendrecv", "x");
        return sendrecv(x, dest, tag, x.dtype(), x.shape(), src, tag);
    }

    /**
     * MPI_Comm_split, run at once (also while tracing) by every rank of this communicator: the ranks passing one
     * {@code color} form a new communicator, ordered by {@code key} and then by their rank here. Every rank gets
     * a communicator: {@code color} must be {@code >= 0} (MPI_UNDEFINED is not offered, so the result is never
     * {@code null}); a rank that wants to take no part passes a color that no other rank uses (such as
     * {@code size() + rank()}) and is then alone in its communicator.
     *
     * @throws WeftException naming the line for a negative color, before communicating
     */
    public Comm split(int color, int key) {
        ReduceOp.refuseInside("split");
        return new Comm(handle.split(color, key, SourceLocation.capture()));
    }

    /**
     * MPI_Cart_create without reordering, run at once (also while tracing) by every rank: a communicator of the same
     * ranks laid out on a grid of {@code dims} (row-major: the last dimension varies fastest), each dimension
     * periodic or not. The grid must hold exactly this communicator's ranks.
     *
     * @throws WeftException naming the line, before communicating, when {@code dims} and {@code periodic} differ in
     *     length, a dimension is not positive, or the dimensions do not multiply to {@link #size()}
     */
    public CartComm cart(int[] dims, boolean[] periodic) {
        Args.notNull(dims, Comm.class, "cart", "dims");
        Args.notNull(periodic, Comm.class, "cart", "periodic");
        ReduceOp.refuseInside("cart");
        SourceLocation where = SourceLocation.capture();
        CartComm.checkGrid(dims, periodic, size(), where);
        return new CartComm(handle.dup(where), handle.dup(where), dims, periodic);
    }

    /**
     * MPI_Dims_create with every dimension free: {@code ndims} dimensions whose product is {@code n}, as close to
     * each other as the factors of {@code n} allow, in non-increasing order ({@code dimsCreate(12, 2)} is
     * {@code [4, 3]}, {@code dimsCreate(7, 2)} is {@code [7, 1]}).
     *
     * @throws WeftException naming the line when {@code n} or {@code ndims} is not positive
     */
    public static int[] dimsCreate(int n, int ndims) {
        if (n < 1 || ndims < 1) {
            throw new WeftException(SourceLocation.capture(), "dimsCreate: " + n + " ranks over " + ndims
                    + " dimensions; both must be positive");
        }
        List<Integer> primes = new ArrayList<>();
        int rest = n;
        for (int p = 2; (long) p * p <= rest; p++) {
            while (rest % p == 0) {
                primes.add(p);
                rest /= p;
            }
        }
        if (rest > 1) {
            primes.add(rest);
        }
        int[] dims = new int[ndims];
        Arrays.fill(dims, 1);
        // the largest factors first, each onto the smallest dimension so far
        for (int i = primes.size() - 1; i >= 0; i--) {
            int smallest = 0;
            for (int d = 1; d < ndims; d++) {
                if (dims[d] < dims[smallest]) {
                    smallest = d;
                }
            }
            dims[smallest] *= primes.get(i);
        }
        return Arrays.stream(dims).boxed().sorted(java.util.Comparator.reverseOrder())
                .mapToInt(Integer::intValue).toArray();
    }

    /** MPI_Comm_dup, run at once (also while tracing). */
    public Comm dup() {
        ReduceOp.refuseInside("dup");
        return new Comm(handle.dup(SourceLocation.capture()));
    }

    private static Tensor one(List<Tensor> out) {
        return out.getFirst();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Comm c && c.handle == handle;
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(handle);
    }

    @Override
    public String toString() {
        return "Comm(" + handle.name() + ", rank " + rank() + " of " + size() + ")";
    }
}
