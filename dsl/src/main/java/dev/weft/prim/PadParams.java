package dev.weft.prim;

import dev.weft.spi.Params;
import java.util.List;

/** Elements added before ({@code low}) and after ({@code high}) each axis, filled with {@code value}. */
public record PadParams(List<Long> low, List<Long> high, double value) implements Params {
    public PadParams {
        low = List.copyOf(low);
        high = List.copyOf(high);
    }

    public long[] lowArray() {
        return low.stream().mapToLong(Long::longValue).toArray();
    }

    public long[] highArray() {
        return high.stream().mapToLong(Long::longValue).toArray();
    }

    @Override
    public String toString() {
        return "low=" + low + " high=" + high + " value=" + value;
    }
}
