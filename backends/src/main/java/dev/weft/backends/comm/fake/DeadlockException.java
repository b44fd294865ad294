package dev.weft.backends.comm.fake;

import dev.weft.backends.comm.CommException;
import dev.weft.spi.SourceLocation;

/**
 * Every live rank of a fake world is blocked and none can proceed. Each blocked rank fails with one of these,
 * located at its own blocked call, all carrying the same {@link #report() report} of what every rank waits for.
 */
public final class DeadlockException extends CommException {
    private final String report;

    DeadlockException(SourceLocation where, String report) {
        super(where, report);
        this.report = report;
    }

    /** One line per rank: the operation, communicator, peer, tag and source line it is blocked in, or its end. */
    public String report() {
        return report;
    }
}
