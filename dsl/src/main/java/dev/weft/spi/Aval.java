package dev.weft.spi;

import dev.weft.DType;
import dev.weft.ShapeException;

/** An abstract value: what tracing knows of a tensor (dtype and shape, not data). */
public record Aval(DType dtype, Shape shape) {
    /** @throws ShapeException naming the caller's line when the tensor would exceed 2^63-1 bytes */
    public Aval {
        long n = shape.size(), width = dtype.byteSize();
        if (Math.multiplyHigh(n, width) != 0 || n * width < 0) {
            throw new ShapeException(SourceLocation.capture(), dtype.specName() + shape + " has " + n
                    + " elements of " + width + " bytes, more than 2^63-1 bytes");
        }
    }

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
