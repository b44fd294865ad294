package dev.weft.prim;

import dev.weft.Tensor;
import dev.weft.spi.Params;
import java.util.Arrays;

/**
 * A concrete tensor embedded in a program. Small constants (up to 16 elements) compare by value so that CSE can
 * merge them; larger ones compare by identity.
 */
public record ConstantParams(Tensor value) implements Params {
    private static final int BY_VALUE_LIMIT = 16;

    private boolean byValue() {
        return value.size() <= BY_VALUE_LIMIT;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ConstantParams c)) {
            return false;
        }
        if (c.value == value) {
            return true;
        }
        return byValue() && c.byValue() && c.value.dtype() == value.dtype()
                && Arrays.equals(c.value.shape(), value.shape())
                && Arrays.equals(c.value.toDoubleArray(), value.toDoubleArray());
    }

    @Override
    public int hashCode() {
        return byValue() ? Arrays.hashCode(value.toDoubleArray()) * 31 + value.dtype().hashCode()
                : System.identityHashCode(value);
    }

    @Override
    public String toString() {
        return value.size() <= BY_VALUE_LIMIT ? value.toString() : "<" + value.size() + " elements>";
    }
}
