package dev.weft;

import dev.weft.spi.SourceLocation;

/**
 * An error raised by Weft at trace, compile or run time. The message starts with the user's source location
 * ({@code File.java:line}) of the operation at fault when one is known.
 */
public class WeftException extends RuntimeException {
    private final transient SourceLocation location;

    public WeftException(SourceLocation location, String message) {
        this(location, message, null);
    }

    public WeftException(SourceLocation location, String message, Throwable cause) {
        super(location == null || location.isUnknown() ? message : location + ": " + message, cause);
        this.location = location;
    }

    /** Where in the user's code the failing operation was written; unknown if Weft could not tell. */
    public SourceLocation location() {
        return location == null ? SourceLocation.UNKNOWN : location;
    }
}
