package dev.weft;

import dev.weft.spi.SourceLocation;

/** Operand dtypes that an operation cannot accept; Weft never converts implicitly. */
public class DTypeException extends WeftException {
    public DTypeException(SourceLocation location, String message) {
        super(location, message);
    }
}
