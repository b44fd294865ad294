package dev.weft.prim;

import dev.weft.spi.Params;
import java.util.List;

/** Reduced axes, sorted and distinct. */
public record AxesParams(List<Integer> axes) implements Params {
    public AxesParams {
        axes = List.copyOf(axes);
    }

    public int[] toArray() {
        return axes.stream().mapToInt(Integer::intValue).toArray();
    }

    @Override
    public String toString() {
        return "axes=" + axes;
    }
}
