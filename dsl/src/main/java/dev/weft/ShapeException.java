package dev.weft;

import dev.weft.spi.SourceLocation;

/** Operand shapes that an operation cannot accept (not broadcast-compatible, wrong rank, bad axis...). */
public class ShapeException extends WeftException {
    public ShapeException(SourceLocation location, String message) {
        super(location, message);
    }
}
