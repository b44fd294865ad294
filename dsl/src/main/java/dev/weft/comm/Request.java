package dev.weft.comm;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.prim.CommOp;
import dev.weft.spi.SourceLocation;
import dev.weft.spi.TensorAccess;

/**
 * A pending {@link Comm#isend} or {@link Comm#irecv}, or a nonblocking collective ({@link Comm#iallreduce}, ...). It must be completed by exactly one {@link Comm#wait} (or
 * {@link Comm#waitAll}) on the communicator that started it, before the enclosing {@code @Compile} method
 * returns; Weft rejects a request that is never waited or waited twice, at trace time, naming the line.
 */
public final class Request {
    private final Comm comm;
    private final CommOp.Start start;
    private final Tensor handle;
    private final Tensor sent;
    private final SourceLocation origin;
    private final CommOp.CollectiveStart collective;
    private final Tensor operand;
    private boolean waited;

    private Request(Comm comm, CommOp.Start start, Tensor handle, Tensor sent, SourceLocation origin) {
        this(comm, start, handle, sent, origin, null, null);
    }

    private Request(Comm comm, CommOp.Start start, Tensor handle, Tensor sent, SourceLocation origin,
                    CommOp.CollectiveStart collective, Tensor operand) {
        this.comm = comm;
        this.start = start;
        this.handle = handle;
        this.sent = sent;
        this.origin = origin;
        this.collective = collective;
        this.operand = operand;
    }

    /** A started nonblocking collective on {@code operand} ({@code null} for an ibarrier). */
    static Request collective(Comm comm, CommOp.CollectiveStart start, Tensor handle, Tensor operand,
                              SourceLocation origin) {
        return new Request(comm, null, handle, null, origin, start, operand);
    }

    /** The nonblocking collective that started it, or {@code null} for a message. */
    CommOp.CollectiveStart collective() {
        return collective;
    }

    /** A nonblocking collective's operand, kept until its wait; {@code null} otherwise. */
    Tensor operand() {
        return operand;
    }

    static Request send(Comm comm, CommOp.Isend start, Tensor handle, Tensor sent, SourceLocation origin) {
        return new Request(comm, start, handle, sent, origin);
    }

    /**
     * A request already complete: an {@code isend} to or {@code irecv} from {@link Comm#PROC_NULL}; waiting gives
     * {@code result} ({@code sent}, or the zeros received).
     */
    static Request done(Comm comm, Tensor result, Tensor sent, SourceLocation origin) {
        return new Request(comm, null, result, sent, origin);
    }

    static Request receive(Comm comm, CommOp.Irecv start, Tensor handle, SourceLocation origin) {
        return new Request(comm, start, handle, null, origin);
    }

    /**
     * The message that started it; {@code null} for a request to or from {@link Comm#PROC_NULL} and for a
     * nonblocking collective.
     */
    CommOp.Start start() {
        return start;
    }

    /** The tensor being sent, or {@code null} for a receive. */
    Tensor sent() {
        return sent;
    }

    Comm comm() {
        return comm;
    }

    Tensor handle() {
        return handle;
    }

    /** Marks the request completed; a second completion is an error naming both lines. */
    void complete(SourceLocation where) {
        if (waited) {
            throw new WeftException(where, "request from " + origin + " is waited twice");
        }
        waited = true;
    }

    /** True once waited. */
    public boolean isCompleted() {
        return waited;
    }

    @Override
    public String toString() {
        if (collective != null) {
            return "Request(" + collective.kind() + (operand == null ? "" : " " + TensorAccess.aval(operand)) + " from "
                    + origin + (waited ? ", completed)" : ")");
        }
        return "Request(" + (sent != null ? "send " + sent.dtype().specName() + java.util.Arrays.toString(sent.shape())
                : "recv " + (start == null ? TensorAccess.aval(handle) : ((CommOp.Irecv) start).result())) + " from " + origin + (waited ? ", completed)" : ")");
    }
}
