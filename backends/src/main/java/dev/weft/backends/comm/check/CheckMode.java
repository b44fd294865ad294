package dev.weft.backends.comm.check;

import dev.weft.spi.Setting;
import java.util.Locale;

/**
 * How much Weft checks that the ranks of a communicator agree before they communicate, set by system property
 * {@value #PROPERTY} or environment variable {@value #ENV}: {@code schedule} (default) checks each compiled
 * program's communication schedule once, before its first run; {@code strict} also checks every eager collective
 * before it runs; {@code off} checks nothing.
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
