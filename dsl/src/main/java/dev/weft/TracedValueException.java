package dev.weft;

import dev.weft.spi.SourceLocation;

/**
 * A traced tensor was used where a concrete value is needed: read on the host ({@code item()},
 * {@code toFloatArray()}, a Java {@code if} on data) inside a {@link Compile} method, or used after its trace
 * ended. Data-dependent choices belong in {@link Weft#cond} or {@link Tensor#where}.
 */
public class TracedValueException extends WeftException {
    public TracedValueException(SourceLocation location, String message) {
        super(location, message);
    }
}
