package dev.weft.backends.comm.flight;

/**
 * One operation in a flight recorder, as read at a dump.
 *
 * @param seq         the rank's operation number (from 1, over all its communicators)
 * @param call        what was called
 * @param collective  the collective's number on its communicator (from 1); -1 for other operations
 * @param posted      for a {@code wait}, the {@code seq} of the {@code isend} or {@code irecv} it waits; else -1
 * @param state       where it stands
 * @param startMillis when it started (ms since the epoch, to the recorder clock's resolution)
 * @param endMillis   when it completed or failed; -1 while it has not
 */
public record FlightEntry(long seq, FlightCall call, long collective, long posted, FlightState state,
                          long startMillis, long endMillis) {
    /** Whether the operation had not returned (started, or posted and not waited). */
    public boolean pending() {
        return state == FlightState.STARTED || state == FlightState.POSTED;
    }
}
