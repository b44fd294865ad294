package dev.weft.prim;

import dev.weft.spi.Params;
import dev.weft.spi.Shape;
import java.util.List;

/**
 * StableHLO's {@code broadcast_in_dim}: input axis {@code i} becomes output axis {@code dims.get(i)}; an input
 * axis of size 1 is repeated along its output axis.
 */
public record BroadcastParams(Shape shape, List<Integer> dims) implements Params {
    public BroadcastParams {
        dims = List.copyOf(dims);
    }

    public int[] dimsArray() {
        return dims.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public String toString() {
        return "shape=" + shape + " dims=" + dims;
    }
}
