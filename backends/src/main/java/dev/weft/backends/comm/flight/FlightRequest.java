package dev.weft.backends.comm.flight;

import dev.weft.backends.comm.Request;

/** A request of a {@link FlightCommunicator}: the runtime's request and the recorder entry of its posting. */
record FlightRequest(Request inner, FlightCall call, long seq) implements Request {
    @Override
    public String describe() {
        return inner.describe();
    }

    @Override
    public String toString() {
        return inner.toString();
    }
}
