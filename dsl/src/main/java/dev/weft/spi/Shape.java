package dev.weft.spi;

import dev.weft.ShapeException;
import java.util.Arrays;

/** An immutable tensor shape: row-major dimensions, each {@code >= 0}. Rank 0 is a scalar. */
public final class Shape {
    public static final Shape SCALAR = new Shape(new long[0], 1);

    private final long[] dims;
    private final long size;

    private Shape(long[] dims, long size) {
        this.dims = dims;
        this.size = size;
    }

    /**
     * A shape from dimensions.
     *
     * @throws ShapeException naming the caller's line for a negative dimension, or dimensions whose product
     *                        exceeds {@link Long#MAX_VALUE} elements
     */
    public static Shape of(long... dims) {
        long size = 1;
        for (long d : dims) {
            if (d < 0) {
                throw new ShapeException(SourceLocation.capture(),
                        "shape " + Arrays.toString(dims) + " has the negative dimension " + d);
            }
            long product = size * d;
            if (Math.multiplyHigh(size, d) != 0 || product < 0) {
                throw new ShapeException(SourceLocation.capture(),
                        "shape " + Arrays.toString(dims) + " has more than 2^63-1 elements");
            }
            size = product;
        }
        return dims.length == 0 ? SCALAR : new Shape(dims.clone(), size);
    }

    public int rank() {
        return dims.length;
    }

    public long dim(int axis) {
        return dims[axis];
    }

    /** A copy of the dimensions. */
    public long[] dims() {
        return dims.clone();
    }

    /** Number of elements (1 for a scalar). */
    public long size() {
        return size;
    }

    /** Row-major strides in elements. */
    public long[] strides() {
        long[] s = new long[dims.length];
        long acc = 1;
        for (int i = dims.length - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= dims[i];
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Shape s && Arrays.equals(dims, s.dims);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(dims);
    }

    /** Like {@code [2,3]}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < dims.length; i++) {
            b.append(i == 0 ? "" : ",").append(dims[i]);
        }
        return b.append(']').toString();
    }
}
