package dev.weft.testing;

import dev.weft.DType;
import dev.weft.Tensor;
import java.util.Arrays;
import org.assertj.core.api.AbstractAssert;

/**
 * AssertJ assertions on concrete (eager or returned) tensors; failure messages print the actual and the expected
 * tensor. {@code TensorAssert.assertThat(t).hasShape(2, 3).isCloseTo(expected, 1e-6)}.
 */
public final class TensorAssert extends AbstractAssert<TensorAssert, Tensor> {
    private TensorAssert(Tensor actual) {
        super(actual, TensorAssert.class);
    }

    /** Starts assertions on {@code actual}. */
    public static TensorAssert assertThat(Tensor actual) {
        return new TensorAssert(actual);
    }

    /** The tensor's shape is {@code shape} (empty for a scalar). */
    public TensorAssert hasShape(long... shape) {
        isNotNull();
        if (!Arrays.equals(actual.shape(), shape)) {
            failWithMessage("expected shape %s but was %s in%n  %s", Arrays.toString(shape),
                    Arrays.toString(actual.shape()), actual);
        }
        return this;
    }

    /** The tensor's element type is {@code dtype}. */
    public TensorAssert hasDType(DType dtype) {
        isNotNull();
        if (actual.dtype() != dtype) {
            failWithMessage("expected dtype %s but was %s in%n  %s", dtype, actual.dtype(), actual);
        }
        return this;
    }

    /** Same dtype, shape and elements; floating elements compare exactly (NaN equals NaN). */
    public TensorAssert isEqualTo(Tensor expected) {
        return compare(expected, 0, "equal to");
    }

    /** Same dtype and shape, every element within {@code within} of the expected one. */
    public TensorAssert isCloseTo(Tensor expected, double within) {
        return compare(expected, within, "within " + within + " of");
    }

    private TensorAssert compare(Tensor expected, double within, String relation) {
        isNotNull();
        if (actual.dtype() != expected.dtype() || !Arrays.equals(actual.shape(), expected.shape())) {
            failWithMessage("expected %s%n  %s%nbut was%n  %s", relation, expected, actual);
        }
        int bad = firstMismatch(expected, within);
        if (bad >= 0) {
            failWithMessage("expected %s%n  %s%nbut was%n  %s%nfirst difference at flat index %d", relation,
                    expected, actual, bad);
        }
        return this;
    }

    private int firstMismatch(Tensor expected, double within) {
        DType t = actual.dtype();
        if (t == DType.I32 || t == DType.I64 || t == DType.BOOL) {
            long[] a = asLongs(actual);
            long[] e = asLongs(expected);
            for (int i = 0; i < a.length; i++) {
                if (Math.abs(a[i] - e[i]) > within) {
                    return i;
                }
            }
            return -1;
        }
        double[] a = actual.toDoubleArray();
        double[] e = expected.toDoubleArray();
        for (int i = 0; i < a.length; i++) {
            boolean same = Double.isNaN(a[i]) ? Double.isNaN(e[i]) : Math.abs(a[i] - e[i]) <= within;
            if (!same) {
                return i;
            }
        }
        return -1;
    }

    private static long[] asLongs(Tensor t) {
        return t.dtype() == DType.BOOL ? t.cast(DType.I64).toLongArray() : t.toLongArray();
    }
}
