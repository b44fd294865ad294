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

    /**
     * Written out rather than the record's own, which is bound through a method handle at first use: a call of a
     * compiled method hashes and compares its arguments' avals, and before C2 has compiled that path each such
     * call ran the handle's lambda forms.
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof Aval a && a.dtype == dtype && a.shape.equals(shape);
    }

    @Override
    public int hashCode() {
        return dtype.hashCode() * 31 + shape.hashCode();
    }

    /** Like {@code f32[2,3]}. */
    @Override
    public String toString() {
        return dtype.specName() + shape;
    }
}
