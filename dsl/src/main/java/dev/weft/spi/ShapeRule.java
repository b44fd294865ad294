package dev.weft.spi;

import java.util.List;

/**
 * The abstract evaluation of a primitive: output avals from input avals and parameters. Throws
 * {@link dev.weft.ShapeException} or {@link dev.weft.DTypeException} (with an unknown location; the caller
 * adds the user's) for operands it cannot accept.
 */
@FunctionalInterface
public interface ShapeRule<P extends Params> {
    List<Aval> infer(List<Aval> inputs, P params);
}
