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
    private final Aval result;
    private final SourceLocation origin;
    private boolean waited;

    Request(Comm comm, Tensor handle, Aval result, SourceLocation origin) {
        this.comm = comm;
        this.handle = handle;
        this.result = result;
        this.origin = origin;
    }

    Comm comm() {
        return comm;
    }

    Tensor handle() {
        return handle;
    }

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
        return "Request(" + result + " from " + origin + (waited ? ", completed)" : ")");
    }
}
