package dev.weft.prim;

import dev.weft.spi.Params;
import dev.weft.spi.Shape;

/** The new shape of {@code reshape} (same element count). */
public record ReshapeParams(Shape shape) implements Params {
    @Override
    public String toString() {
        return "shape=" + shape;
    }
}
