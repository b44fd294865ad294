package dev.weft.backends.comm.exec;

import dev.weft.backends.comm.Communicator;
import dev.weft.backends.comm.PendingRequest;
import dev.weft.backends.comm.check.CommCheck;
import dev.weft.spi.SourceLocation;

/**
 * A non-blocking send or receive with its envelope ({@link CommCheck}): an {@code isend}'s sent envelope, or the
 * envelope an {@code irecv} expects, compared with it at the wait before the message is taken.
 */
record CheckedRequest(PendingRequest message, CommCheck.Sent sent, CommCheck.Expected expected) implements PendingRequest {
    /** Completes {@code r} on {@code comm}: checked when it is a {@link CheckedRequest}. */
    static void await(Communicator comm, PendingRequest r, SourceLocation where) {
        if (r instanceof CheckedRequest c) {
            c.await(comm, where);
        } else {
            comm.wait(r, where);
        }
    }

    private void await(Communicator comm, SourceLocation where) {
        if (sent != null) {
            comm.wait(message, where);
            sent.complete(where);
            return;
        }
        CheckedComm.receive(() -> comm.wait(message, where), () -> expected, where);
    }

    @Override
    public String describe() {
        return message.describe();
    }
}
