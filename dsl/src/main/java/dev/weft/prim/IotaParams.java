package dev.weft.prim;

import dev.weft.DType;
import dev.weft.spi.Params;

/** {@code [0, 1, ..., n-1]} of {@code dtype}. */
public record IotaParams(DType dtype, long n) implements Params {
    @Override
    public String toString() {
        return dtype.specName() + " n=" + n;
    }
}
