package dev.weft.spi;

import dev.weft.DType;

/** An abstract value: what tracing knows of a tensor (dtype and shape, not data). */
public record Aval(DType dtype, Shape shape) {
    public static Aval of(DType dtype, long... dims) {
        return new Aval(dtype, Shape.of(dims));
    }

    public long byteSize() {
        return shape.size() * dtype.byteSize();
    }

    /** Like {@code f32[2,3]}. */
    @Override
    public String toString() {
        return dtype.specName() + shape;
    }
}
