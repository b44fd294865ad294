package dev.weft.prim;

import dev.weft.spi.Params;

/** Axis along which operands are joined. */
public record ConcatParams(int axis) implements Params {
    @Override
    public String toString() {
        return "axis=" + axis;
    }
}
