package dev.weft.backends.comm.flight;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * What one rank's flight recorder held at a dump.
 *
 * @param rank    the world rank
 * @param size    the world's size
 * @param reason  why it was dumped: {@code timeout}, {@code signal}, {@code abort}, {@code exit} ...
 * @param time    when (ms since the epoch, to the recorder clock's resolution)
 * @param entries the operations, oldest first
 */
public record FlightDump(int rank, int size, String reason, long time, List<FlightEntry> entries) {
    public FlightDump {
        entries = List.copyOf(entries);
    }

    /** A dump of {@code recorder} now. */
    public static FlightDump of(FlightRecorder recorder, String reason) {
        FlightClock.tick();
        return new FlightDump(recorder.rank(), recorder.size(), reason, FlightClock.now(), recorder.snapshot());
    }

    /** The operation the rank has been blocked in longest, if it is in one. */
    public Optional<FlightEntry> blocked() {
        return entries.stream().filter(e -> e.state() == FlightState.STARTED)
                .min(Comparator.comparingLong(FlightEntry::startMillis));
    }

    /** Seconds from {@code millis} to the dump, like {@code 3.02}. */
    public String secondsSince(long millis) {
        return String.format("%.2f", (time - millis) / 1000.0);
    }

    /**
     * The entries as a table, one line each, oldest first: sequence number, how long before the dump it started,
     * how long it took, state, communicator, collective number, the operation and the user's line.
     */
    public String table() {
        StringBuilder sb = new StringBuilder(String.format("  %-6s %9s %8s  %-9s  %-14s %-5s %-42s %s%n", "seq",
                "started", "took", "state", "comm", "coll", "operation", "line"));
        for (FlightEntry e : entries) {
            FlightCall c = e.call();
            String took = e.endMillis() < 0 ? "-" : String.format("%.2f s", (e.endMillis() - e.startMillis()) / 1000.0);
            String args = e.posted() > 0 ? c.args() + " (#" + e.posted() + ")" : c.args();
            sb.append(String.format("  #%-5d %7s s %8s  %-9s  %-14s %-5s %-42s %s%n", e.seq(),
                    "-" + secondsSince(e.startMillis()), took, e.state().label(), c.comm(),
                    e.collective() < 0 ? "" : "#" + e.collective(), args, c.where()));
        }
        return sb.toString();
    }
}
