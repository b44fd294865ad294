package dev.weft.prim;

import dev.weft.DType;
import dev.weft.spi.Params;

/** Target dtype of {@code convert}. */
public record ConvertParams(DType to) implements Params {
    @Override
    public String toString() {
        return "to=" + to.specName();
    }
}
