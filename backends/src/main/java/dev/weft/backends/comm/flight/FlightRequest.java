package dev.weft.backends.comm.flight;

import dev.weft.backends.comm.PendingRequest;

/** A request of a {@link FlightCommunicator}: the runtime's request and the recorder entry of its posting. */
record FlightRequest(PendingRequest inner, FlightCall call, long seq) implements PendingRequest {
    @Override
    public String describe() {
        return inner.describe();
    }

    @Override
    public String toString() {
        return inner.toString();
    }
}
