package dev.weft;

import dev.weft.spi.SourceLocation;

/**
 * A public API method was given {@code null} where it needs a value; the message names the method and the
 * parameter (or the element of a list or array argument).
 */
public class NullArgumentException extends WeftException {
    public NullArgumentException(SourceLocation location, String message) {
        super(location, message);
    }
}
