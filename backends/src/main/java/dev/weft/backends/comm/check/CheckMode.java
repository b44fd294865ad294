package dev.weft.backends.comm.check;

import dev.weft.spi.Setting;
import java.util.Locale;

/**
 * How much Weft checks that the ranks of a communicator agree before they communicate ({@link CommCheck}), set by
 * system property {@value #PROPERTY} or environment variable {@value #ENV}, the same on every rank:
 * {@code schedule} (default) checks every collective before it runs, eager or compiled (a compiled run checks the
 * collectives it declares in one exchange), and sends every message with an envelope its receive compares;
 * {@code strict} also checks each declared collective on its own; {@code off} sends messages without envelopes (a
 * receive of another dtype of the same byte size then passes) but still checks collectives, since under MPI ranks
 * whose counts differ corrupt each other's memory.
 */
public enum CheckMode {
    OFF, SCHEDULE, STRICT;

    public static final String PROPERTY = "weft.check";
    public static final String ENV = "WEFT_CHECK";

    /** The mode set now (read on each use, so a test can change the property). */
    public static CheckMode current() {
        return valueOf(Setting.CHECK.choice().toUpperCase(Locale.ROOT));
    }
}
