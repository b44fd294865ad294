package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.BOOL;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import java.lang.foreign.MemorySegment;

/**
 * Kernels that move elements without computing on them, on row-major buffers; {@code out} never overlaps an
 * input. Shapes are given as dimension arrays; attributes follow StableHLO.
 */
public final class DataMovement {
    private static final int IOTA_CHUNK = 1 << 14;

    private DataMovement() {
    }

    /** A row-major copy of {@code n} elements ({@code reshape}, {@code constant}). */
    public static void copy(DType t, MemorySegment in, MemorySegment out, long n) {
        MemorySegment.copy(in, 0, out, 0, n * t.byteSize());
    }

    /** Output axis {@code i} is input axis {@code perm[i]}. */
    public static void transpose(DType t, MemorySegment in, long[] inDims, int[] perm, MemorySegment out) {
        long[] inStrides = strides(inDims);
        long[] outDims = new long[perm.length];
        long[] srcStrides = new long[perm.length];
        for (int i = 0; i < perm.length; i++) {
            outDims[i] = inDims[perm[i]];
            srcStrides[i] = inStrides[perm[i]];
        }
        StridedCopy.copy(in, 0, srcStrides, out, 0, strides(outDims), outDims, t.byteSize());
    }

    /** Input axis {@code i} becomes output axis {@code dims[i]}; input axes of size 1 repeat. */
    public static void broadcastInDim(DType t, MemorySegment in, long[] inDims, int[] dims, long[] outDims,
                                      MemorySegment out) {
        StridedCopy.copy(in, 0, broadcastStrides(inDims, dims, outDims.length), out, 0, strides(outDims), outDims,
                t.byteSize());
    }

    /**
     * The input's strides along each of the {@code outRank} output axes of a broadcast (input axis {@code i} is
     * output axis {@code dims[i]}): zero along the axes it repeats.
     */
    public static long[] broadcastStrides(long[] inDims, int[] dims, int outRank) {
        long[] inStrides = strides(inDims);
        long[] srcStrides = new long[outRank];
        for (int i = 0; i < dims.length; i++) {
            srcStrides[dims[i]] = inDims[i] == 1 ? 0 : inStrides[i];
        }
        return srcStrides;
    }

    /** Elements {@code start[i], start[i] + step[i], ...} below {@code limit[i]} along each axis. */
    public static void slice(DType t, MemorySegment in, long[] inDims, long[] start, long[] limit, long[] step,
                             MemorySegment out) {
        long[] inStrides = strides(inDims);
        long[] outDims = new long[inDims.length];
        long[] srcStrides = new long[inDims.length];
        long offset = 0;
        for (int i = 0; i < inDims.length; i++) {
            outDims[i] = Math.max(0, (limit[i] - start[i] + step[i] - 1) / step[i]);
            srcStrides[i] = inStrides[i] * step[i];
            offset += start[i] * inStrides[i];
        }
        StridedCopy.copy(in, offset, srcStrides, out, 0, strides(outDims), outDims, t.byteSize());
    }

    /** Writes {@code block} (of {@code blockDims}) into {@code out} (of {@code outDims}) at {@code start}. */
    public static void insert(DType t, MemorySegment block, long[] blockDims, MemorySegment out, long[] outDims,
                              long[] start) {
        long[] outStrides = strides(outDims);
        long offset = 0;
        for (int i = 0; i < outDims.length; i++) {
            offset += start[i] * outStrides[i];
        }
        StridedCopy.copy(block, 0, strides(blockDims), out, offset, outStrides, blockDims, t.byteSize());
    }

    /** Joins {@code parts} (of {@code partDims}) along {@code axis} into {@code out} of {@code outDims}. */
    public static void concatenate(DType t, MemorySegment[] parts, long[][] partDims, int axis, long[] outDims,
                                   MemorySegment out) {
        long[] outStrides = strides(outDims);
        long offset = 0;
        for (int p = 0; p < parts.length; p++) {
            StridedCopy.copy(parts[p], 0, strides(partDims[p]), out, offset * outStrides[axis], outStrides,
                    partDims[p], t.byteSize());
            offset += partDims[p][axis];
        }
    }

    /**
     * StableHLO {@code pad} with non-negative padding: {@code low[i]} elements before, {@code high[i]} after and
     * {@code interior[i]} between the elements of axis {@code i}, all equal to the scalar {@code value}.
     */
    public static void pad(DType t, MemorySegment in, long[] inDims, MemorySegment value, long[] low, long[] high,
                           long[] interior, MemorySegment out) {
        long[] outDims = new long[inDims.length];
        for (int i = 0; i < inDims.length; i++) {
            outDims[i] = low[i] + high[i] + inDims[i] + Math.max(0, inDims[i] - 1) * interior[i];
        }
        fill(t, out, size(outDims), value);
        long[] outStrides = strides(outDims);
        long[] dstStrides = new long[inDims.length];
        long offset = 0;
        for (int i = 0; i < inDims.length; i++) {
            dstStrides[i] = outStrides[i] * (interior[i] + 1);
            offset += low[i] * outStrides[i];
        }
        StridedCopy.copy(in, 0, strides(inDims), out, offset, dstStrides, inDims, t.byteSize());
    }

    /**
     * Every one of the first {@code n} elements of {@code out} set to the scalar {@code value}: zero bits by one
     * {@code fill}, other values by copying the filled prefix after itself, so no element loop runs (a reduction's
     * initial value: an element loop over native memory costs 75-90 ns an element before the JIT compiles it).
     */
    public static void fill(DType t, MemorySegment out, long n, MemorySegment value) {
        if (n == 0) {
            return;
        }
        int es = (int) t.byteSize();
        if (isZero(value, es)) {
            out.asSlice(0, n * es).fill((byte) 0);
        } else {
            StridedCopy.repeat(value, 0, out, 0, n, es);
        }
    }

    private static boolean isZero(MemorySegment value, int es) {
        return switch (es) {
            case 8 -> value.get(I64, 0) == 0;
            case 4 -> value.get(I32, 0) == 0;
            default -> value.get(BOOL, 0) == 0;
        };
    }

    /** Each element of {@code out} (of {@code dims}) is its index along {@code axis}. */
    public static void iota(DType t, long[] dims, int axis, MemorySegment out) {
        long stride = strides(dims)[axis];
        long extent = dims[axis];
        long n = size(dims);
        // In chunks through a Java array: an iota often runs once, in code the JIT has not compiled, where writing
        // the segment element by element took ~0.1 s for 1M elements (Pi's first call).
        long[] chunk = new long[(int) Math.min(n, IOTA_CHUNK)];
        for (long base = 0; base < n; base += chunk.length) {
            int len = (int) Math.min(chunk.length, n - base);
            for (int k = 0; k < len; k++) {
                chunk[k] = (base + k) / stride % extent;
            }
            Scalars.setLongs(t, out, base, chunk, len);
        }
    }

    /** Row-major strides, in elements, of {@code dims}. */
    public static long[] strides(long[] dims) {
        long[] s = new long[dims.length];
        long acc = 1;
        for (int i = dims.length - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= dims[i];
        }
        return s;
    }

    private static long size(long[] dims) {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }
}
