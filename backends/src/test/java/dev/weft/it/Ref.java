package dev.weft.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.weft.DType;
import dev.weft.Tensor;
import java.util.Arrays;
import java.util.Random;

/** Reference arithmetic on plain row-major {@code double[]} arrays (independent of Weft) and comparisons. */
final class Ref {
    private Ref() {
    }

    /** A tensor of {@code dtype} and {@code shape} (rank 0 when empty) holding {@code values}, which it must represent. */
    static Tensor make(DType dtype, double[] values, long... shape) {
        Tensor t = switch (dtype) {
            case F32 -> {
                float[] f = new float[values.length];
                for (int i = 0; i < f.length; i++) {
                    f[i] = (float) values[i];
                }
                yield Tensor.of(f, shape);
            }
            case F64 -> Tensor.of(values.clone(), shape);
            case I32 -> Tensor.of(Arrays.stream(values).mapToInt(v -> (int) v).toArray(), shape);
            case I64 -> Tensor.of(Arrays.stream(values).mapToLong(v -> (long) v).toArray(), shape);
            case BOOL -> {
                boolean[] b = new boolean[values.length];
                for (int i = 0; i < b.length; i++) {
                    b[i] = values[i] != 0;
                }
                yield Tensor.of(b, shape);
            }
        };
        return shape.length == 0 ? t.reshape() : t;
    }

    static long size(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /** Values that every dtype holds exactly: quarters for floats, whole numbers for integers, in [-lim, lim]. */
    static double[] values(Random rnd, DType dtype, long n, int lim) {
        double[] v = new double[(int) n];
        for (int i = 0; i < v.length; i++) {
            v[i] = dtype.isFloating() ? (rnd.nextInt(8 * lim + 1) - 4 * lim) / 4.0 : rnd.nextInt(2 * lim + 1) - lim;
        }
        return v;
    }

    /** {@code v} rounded to what {@code dtype} stores (F32 rounding, integer wrap-around). */
    static double store(DType dtype, double v) {
        return switch (dtype) {
            case F32 -> (float) v;
            case F64 -> v;
            case I32 -> (int) (long) v;
            case I64 -> (long) v;
            case BOOL -> v != 0 ? 1 : 0;
        };
    }

    static long[] unravel(long flat, long[] shape) {
        long[] idx = new long[shape.length];
        for (int i = shape.length - 1; i >= 0; i--) {
            idx[i] = flat % shape[i];
            flat /= shape[i];
        }
        return idx;
    }

    static long ravel(long[] idx, long[] shape) {
        long flat = 0;
        for (int i = 0; i < shape.length; i++) {
            flat = flat * shape[i] + idx[i];
        }
        return flat;
    }

    /** NumPy broadcast of two shapes. */
    static long[] broadcastShape(long[] a, long[] b) {
        int r = Math.max(a.length, b.length);
        long[] out = new long[r];
        for (int i = 0; i < r; i++) {
            long da = i - (r - a.length) >= 0 ? a[i - (r - a.length)] : 1;
            long db = i - (r - b.length) >= 0 ? b[i - (r - b.length)] : 1;
            out[i] = da == 1 ? db : da;
        }
        return out;
    }

    /** {@code v} (of {@code shape}) broadcast to {@code target}. */
    static double[] broadcast(double[] v, long[] shape, long[] target) {
        double[] out = new double[(int) size(target)];
        int off = target.length - shape.length;
        for (int f = 0; f < out.length; f++) {
            long[] t = unravel(f, target);
            long[] s = new long[shape.length];
            for (int i = 0; i < shape.length; i++) {
                s[i] = shape[i] == 1 ? 0 : t[i + off];
            }
            out[f] = v[(int) ravel(s, shape)];
        }
        return out;
    }

    /** The tensor's dtype, shape and elements equal the given ones exactly (NaN equals NaN). */
    static void assertExact(String what, Tensor got, Tensor want) {
        assertThat(got.dtype()).as(what + " dtype").isEqualTo(want.dtype());
        assertThat(got.shape()).as(what + " shape").containsExactly(want.shape());
        double[] g = got.toDoubleArray(), w = want.toDoubleArray();
        for (int i = 0; i < w.length; i++) {
            if (Double.compare(g[i], w[i]) != 0 && !(g[i] == 0 && w[i] == 0)) {
                fail("%s: element %d is %s, expected exactly %s%n got  %s%n want %s", what, i, g[i], w[i],
                        Arrays.toString(g), Arrays.toString(w));
            }
        }
    }

    /** Elements within {@code ulps} units in the last place of {@code dtype} (exact for integers and BOOL). */
    static void assertUlps(String what, Tensor got, DType dtype, long[] shape, double[] want, int ulps) {
        assertThat(got.dtype()).as(what + " dtype").isEqualTo(dtype);
        assertThat(got.shape()).as(what + " shape").containsExactly(shape);
        double[] g = got.toDoubleArray();
        for (int i = 0; i < want.length; i++) {
            double w = store(dtype, want[i]);
            boolean ok = Double.compare(g[i], w) == 0 || g[i] == w
                    || dtype.isFloating() && Math.abs(g[i] - w) <= ulps * ulp(dtype, w);
            if (!ok) {
                fail("%s: element %d is %s, expected %s (within %d ulp)%n got  %s%n want %s", what, i, g[i], w,
                        ulps, Arrays.toString(g), Arrays.toString(want));
            }
        }
    }

    private static double ulp(DType dtype, double v) {
        return dtype == DType.F32 ? Math.ulp((float) v) : Math.ulp(v);
    }
}
