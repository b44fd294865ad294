package dev.weft.backends.comm;

import dev.weft.spi.SourceLocation;

/**
 * A message was matched but does not fit its receive: more or fewer elements than the receive posted (MPI's
 * {@code MPI_ERR_TRUNCATE}, or a short message). The receive's buffer holds no more than it posted.
 */
public final class MessageMismatchException extends CommException {
    public MessageMismatchException(SourceLocation location, String message) {
        super(location, message);
    }
}
