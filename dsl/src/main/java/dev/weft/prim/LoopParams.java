package dev.weft.prim;

import dev.weft.spi.Params;

/** Trip range of {@code fori}: the body runs for {@code i} in {@code [lo, hi)}. */
public record LoopParams(int lo, int hi) implements Params {
    @Override
    public String toString() {
        return "lo=" + lo + " hi=" + hi;
    }
}
