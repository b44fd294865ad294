package dev.weft.backends.comm.flight;

import java.util.Locale;

/** Where a recorded operation stands. */
public enum FlightState {
    /** An {@code isend} or {@code irecv} whose request is not waited yet. */
    POSTED,
    /** A blocking operation (or a {@code wait}) that has not returned: the rank is in it. */
    STARTED,
    COMPLETED,
    /** It threw. */
    FAILED;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
