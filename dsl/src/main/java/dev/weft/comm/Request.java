package dev.weft.comm;

import dev.weft.Tensor;
import dev.weft.WeftException;
import dev.weft.spi.Aval;
import dev.weft.spi.SourceLocation;

/**
 * A pending {@link Comm#isend} or {@link Comm#irecv}. It must be completed by exactly one {@link Comm#wait} (or
 * {@link Comm#waitAll}) on the communicator that started it, before the enclosing {@code @Compile} method
 * returns; Weft rejects a request that is never waited or waited twice, at trace time, naming the line.
 */
public final class Request {
    private final Comm comm;
    private final Tensor handle;
    private final Tensor sent;
    private final Aval result;
    private final SourceLocation origin;
    private boolean waited;

    private Request(Comm comm, Tensor handle, Tensor sent, Aval result, SourceLocation origin) {
        this.comm = comm;
        this.handle = handle;
        this.sent = sent;
        this.result = result;
        this.origin = origin;
    }

    static Request send(Comm comm, Tensor handle, Tensor sent, SourceLocation origin) {
        return new Request(comm, handle, sent, null, origin);
    }

    static Request receive(Comm comm, Tensor handle, Aval result, SourceLocation origin) {
        return new Request(comm, handle, null, result, origin);
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

    /** What a receive produces, or {@code null} for a send. */
    Aval result() {
        return result;
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
        return "Request(" + (sent != null ? "send " + sent.dtype().specName() + java.util.Arrays.toString(sent.shape())
                : "recv " + result) + " from " + origin + (waited ? ", completed)" : ")");
    }
}
