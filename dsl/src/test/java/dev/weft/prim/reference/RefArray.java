package dev.weft.prim.reference;

import dev.weft.DType;
import dev.weft.Tensor;
import dev.weft.spi.Aval;
import dev.weft.spi.NativeMemory;
import dev.weft.spi.Shape;
import dev.weft.spi.TensorAccess;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A row-major array on the Java heap for {@link ReferenceInterpreter}: a floating element as a double (an f32's value
 * exactly), any other as a long (a bool as 0 or 1). Each store rounds or wraps to the dtype, as a store to a buffer
 * of that dtype would: {@code (float)} for f32, the low 32 bits for i32, {@code != 0} for bool.
 */
final class RefArray {
    final DType dtype;
    final long[] dims;
    private final double[] reals;
    private final long[] integers;

    RefArray(DType dtype, long[] dims) {
        this.dtype = dtype;
        this.dims = dims.clone();
        int n = Math.toIntExact(Shape.of(dims).size());
        this.reals = dtype.isFloating() ? new double[n] : null;
        this.integers = dtype.isFloating() ? null : new long[n];
    }

    /** The elements of the concrete tensor {@code t}, or {@code null} if {@code t} is traced. */
    static RefArray of(Tensor t) {
        MemorySegment data = TensorAccess.data(t);
        if (data == null) {
            return null;
        }
        RefArray a = new RefArray(t.dtype(), t.shape());
        for (int i = 0; i < a.size(); i++) {
            switch (a.dtype) {
                case F32 -> a.reals[i] = data.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                case F64 -> a.reals[i] = data.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
                case I32 -> a.integers[i] = data.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i);
                case I64 -> a.integers[i] = data.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i);
                case BOOL -> a.integers[i] = data.get(ValueLayout.JAVA_BYTE, i) != 0 ? 1 : 0;
            }
        }
        return a;
    }

    /** A new concrete tensor holding these elements. */
    Tensor toTensor() {
        Aval aval = new Aval(dtype, Shape.of(dims));
        MemorySegment data = NativeMemory.allocate(aval);
        for (int i = 0; i < size(); i++) {
            switch (dtype) {
                case F32 -> data.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) reals[i]);
                case F64 -> data.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, reals[i]);
                case I32 -> data.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, (int) integers[i]);
                case I64 -> data.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, integers[i]);
                case BOOL -> data.set(ValueLayout.JAVA_BYTE, i, (byte) integers[i]);
            }
        }
        return TensorAccess.concrete(aval, data);
    }

    int size() {
        return dtype.isFloating() ? reals.length : integers.length;
    }

    int rank() {
        return dims.length;
    }

    boolean isFloating() {
        return dtype.isFloating();
    }

    /** Element {@code i} of a floating array. */
    double real(int i) {
        return reals[i];
    }

    /** Element {@code i} of an integer or bool array. */
    long integer(int i) {
        return integers[i];
    }

    /** Sets floating element {@code i} to {@code v} rounded to the dtype. */
    void setReal(int i, double v) {
        reals[i] = dtype == DType.F32 ? (float) v : v;
    }

    /** Sets integer or bool element {@code i} to {@code v} wrapped to the dtype. */
    void setInteger(int i, long v) {
        integers[i] = switch (dtype) {
            case I32 -> (int) v;
            case BOOL -> v != 0 ? 1 : 0;
            default -> v;
        };
    }

    /** Sets element {@code i} to {@code v} converted as {@code convert} converts an f64 (Java's casts). */
    void setFromDouble(int i, double v) {
        switch (dtype) {
            case F32, F64 -> setReal(i, v);
            case I32 -> setInteger(i, (int) v);
            case I64 -> setInteger(i, (long) v);
            case BOOL -> setInteger(i, v != 0 ? 1 : 0);
        }
    }

    /** Sets element {@code i} to element {@code j} of {@code from}, which has this dtype. */
    void copy(int i, RefArray from, int j) {
        if (isFloating()) {
            reals[i] = from.reals[j];
        } else {
            integers[i] = from.integers[j];
        }
    }

    /** The multi-index of flat element {@code flat}. */
    long[] unravel(int flat) {
        long[] idx = new long[dims.length];
        long rest = flat;
        for (int d = dims.length - 1; d >= 0; d--) {
            idx[d] = rest % dims[d];
            rest /= dims[d];
        }
        return idx;
    }

    /** The flat position of multi-index {@code idx}. */
    int ravel(long[] idx) {
        long flat = 0;
        for (int d = 0; d < dims.length; d++) {
            flat = flat * dims[d] + idx[d];
        }
        return Math.toIntExact(flat);
    }
}
