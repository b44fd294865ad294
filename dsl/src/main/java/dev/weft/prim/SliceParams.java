package dev.weft.prim;

import dev.weft.spi.Params;
import java.util.List;

/** Start (inclusive) and limit (exclusive) per axis, stride 1. */
public record SliceParams(List<Long> start, List<Long> limit) implements Params {
    public SliceParams {
        start = List.copyOf(start);
        limit = List.copyOf(limit);
    }

    public long[] startArray() {
        return start.stream().mapToLong(Long::longValue).toArray();
    }

    public long[] limitArray() {
        return limit.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public String toString() {
        return "start=" + start + " limit=" + limit;
    }
}
