package dev.weft.prim;

import dev.weft.spi.Params;
import java.util.List;

/** The size of a {@code dynamic_slice} along each axis; its start is given by operands. */
public record DynamicSliceParams(List<Long> sizes) implements Params {
    public DynamicSliceParams {
        sizes = List.copyOf(sizes);
    }

    public long[] sizesArray() {
        return sizes.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public String toString() {
        return "sizes=" + sizes;
    }
}
