package dev.weft.random;

import dev.weft.DType;
import dev.weft.DTypeException;
import dev.weft.ShapeException;
import dev.weft.Tensor;
import dev.weft.spi.Args;
import dev.weft.spi.SourceLocation;
import java.util.ArrayList;
import java.util.List;

/**
 * A splittable, counter-based random key (JAX's {@code PRNGKey}): Threefry-2x32 with 20 rounds (Random123's, JAX's
 * default) applied to a counter, so the numbers depend only on the key and the shape asked for, never on call order,
 * thread, rank count or backend. A key is a host value of two 32-bit words; {@link #split} derives independent keys
 * as JAX does (the counter {@code 0..2n-1}). The numbers are computed here, on the host, into a concrete tensor:
 * inside {@code @Compile} such a tensor is a constant of the program (the same for every call), so draw the noise
 * of each step outside and pass it in, or pass each step's key as an argument (it is a compile-time constant, and
 * a program per key).
 *
 * @param k0 the key's first word
 * @param k1 the key's second word
 */
public record Key(int k0, int k1) {
    private static final int[] ROTATIONS = {13, 15, 26, 6, 17, 29, 16, 24};
    private static final int PARITY = 0x1BD11BDA;

    /** The key of {@code seed}: its high and low 32 bits (JAX's {@code PRNGKey(seed)}). */
    public static Key of(long seed) {
        return new Key((int) (seed >>> 32), (int) seed);
    }

    /** {@code n} independent keys derived from this one. */
    public List<Key> split(int n) {
        if (n < 0) {
            throw new ShapeException(SourceLocation.capture(), "Key.split: n = " + n + " is negative");
        }
        int[] bits = bits(2L * n);
        List<Key> out = new ArrayList<>(n);
        for (int j = 0; j < n; j++) {
            out.add(new Key(bits[2 * j], bits[2 * j + 1]));
        }
        return List.copyOf(out);
    }

    /**
     * Uniform numbers in {@code [0, 1)} of {@code dtype} (f32: 23 random mantissa bits; f64: 52) and
     * {@code shape}.
     *
     * @throws DTypeException naming the line for a dtype that is not f32 or f64
     */
    public Tensor uniform(DType dtype, long... shape) {
        Args.notNull(dtype, Key.class, "uniform", "dtype");
        Args.notNull(shape, Key.class, "uniform", "shape");
        int n = count("uniform", shape);
        return switch (dtype) {
            case F32 -> Tensor.of(floats(n), shape);
            case F64 -> Tensor.of(doubles(n), shape);
            default -> throw new DTypeException(SourceLocation.capture(), "Key.uniform: " + dtype.specName()
                    + " is not f32 or f64");
        };
    }

    /** Standard normal numbers of {@code dtype} and {@code shape} (Box–Muller on {@link #uniform}'s numbers). */
    public Tensor normal(DType dtype, long... shape) {
        Args.notNull(dtype, Key.class, "normal", "dtype");
        Args.notNull(shape, Key.class, "normal", "shape");
        int n = count("normal", shape);
        if (!dtype.isFloating()) {
            throw new DTypeException(SourceLocation.capture(), "Key.normal: " + dtype.specName()
                    + " is not f32 or f64");
        }
        double[] u = doubles(2 * ((n + 1) / 2));
        double[] z = new double[n];
        for (int i = 0; i < n; i += 2) {
            double r = Math.sqrt(-2 * Math.log(1 - u[i])), a = 2 * Math.PI * u[i + 1];
            z[i] = r * Math.cos(a);
            if (i + 1 < n) {
                z[i + 1] = r * Math.sin(a);
            }
        }
        Tensor t = Tensor.of(z, shape);
        return t.cast(dtype);
    }

    /** A BOOL tensor of {@code shape}, each element true with probability {@code p}. */
    public Tensor bernoulli(double p, long... shape) {
        Args.notNull(shape, Key.class, "bernoulli", "shape");
        if (!(p >= 0 && p <= 1)) {
            throw new ShapeException(SourceLocation.capture(), "Key.bernoulli: p = " + p + " is not in [0, 1]");
        }
        int n = count("bernoulli", shape);
        double[] u = doubles(n);
        boolean[] b = new boolean[n];
        for (int i = 0; i < n; i++) {
            b[i] = u[i] < p;
        }
        return Tensor.of(b, shape);
    }

    private static int count(String what, long[] shape) {
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new ShapeException(SourceLocation.capture(), "Key." + what + ": negative dimension " + d);
            }
            n = Math.multiplyExact(n, d);
        }
        if (n > Integer.MAX_VALUE / 2) {
            throw new ShapeException(SourceLocation.capture(), "Key." + what + ": " + n + " elements is more than"
                    + " one draw makes");
        }
        return (int) n;
    }

    private float[] floats(int n) {
        int[] bits = bits(n);
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = Float.intBitsToFloat(bits[i] >>> 9 | 0x3F800000) - 1f;
        }
        return out;
    }

    private double[] doubles(int n) {
        int[] bits = bits(2L * n);
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            long word = (long) bits[2 * i] << 32 | bits[2 * i + 1] & 0xFFFFFFFFL;
            out[i] = Double.longBitsToDouble(word >>> 12 | 0x3FF0000000000000L) - 1;
        }
        return out;
    }

    /** {@code m} random words: Threefry of the counters {@code 0..m'-1} ({@code m'} = m rounded up to even). */
    int[] bits(long m) {
        int half = (int) ((m + 1) / 2);
        int[] out = new int[2 * half];
        int[] y = new int[2];
        for (int i = 0; i < half; i++) {
            threefry(i, half + i, y);
            out[i] = y[0];
            out[half + i] = y[1];
        }
        return out;
    }

    /** Threefry-2x32, 20 rounds, of the counter {@code (x0, x1)} under this key, into {@code out}. */
    void threefry(int x0, int x1, int[] out) {
        int[] ks = {k0, k1, PARITY ^ k0 ^ k1};
        x0 += ks[0];
        x1 += ks[1];
        for (int round = 0; round < 20; round++) {
            x0 += x1;
            x1 = Integer.rotateLeft(x1, ROTATIONS[round % 8]);
            x1 ^= x0;
            if (round % 4 == 3) {
                int j = round / 4 + 1;
                x0 += ks[j % 3];
                x1 += ks[(j + 1) % 3] + j;
            }
        }
        out[0] = x0;
        out[1] = x1;
    }
}
