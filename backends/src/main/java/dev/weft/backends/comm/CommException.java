package dev.weft.backends.comm;

import dev.weft.WeftException;
import dev.weft.spi.SourceLocation;

/**
 * A communication that failed: invalid arguments, mismatched peers, a request misuse, a peer that failed or
 * finished, or an error reported by the underlying runtime.
 */
public class CommException extends WeftException {
    public CommException(SourceLocation location, String message) {
        super(location, message);
    }

    public CommException(SourceLocation location, String message, Throwable cause) {
        super(location, message, cause);
    }
}
