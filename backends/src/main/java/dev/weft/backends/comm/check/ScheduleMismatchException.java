package dev.weft.backends.comm.check;

import dev.weft.WeftException;
import dev.weft.spi.SourceLocation;

/**
 * The ranks of a communicator would communicate differently: raised on every rank, before any of them runs the
 * mismatched operations, naming each rank's operation and source line at the first divergence.
 */
public final class ScheduleMismatchException extends WeftException {
    public ScheduleMismatchException(SourceLocation location, String message) {
        super(location, message);
    }
}
