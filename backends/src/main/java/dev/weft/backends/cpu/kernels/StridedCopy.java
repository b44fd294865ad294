package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.BOOL;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.spi.BulkFill;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The engine behind the data-movement kernels: copies a box of {@code dims} elements between two strided views
 * (offsets and strides in elements, element size 1, 4 or 8 bytes; a source stride of 0 repeats an element). The
 * innermost axis is a bulk copy when both of its strides are 1, one element doubled into a dense row of at least
 * {@value #REPEAT_MIN} when its source stride is 0, and a strided loop otherwise; leading axes that repeat the
 * source into a dense destination double what is already copied.
 */
final class StridedCopy {
    /** The shortest row {@link #repeat} fills by doubling. */
    private static final long REPEAT_MIN = 32;

    private StridedCopy() {
    }

    static void copy(MemorySegment src, long srcOffset, long[] srcStrides, MemorySegment dst, long dstOffset,
                     long[] dstStrides, long[] dims, int elementSize) {
        int rank = dims.length;
        for (long d : dims) {
            if (d == 0) {
                return;
            }
        }
        if (rank == 0) {
            MemorySegment.copy(src, srcOffset * elementSize, dst, dstOffset * elementSize, elementSize);
            return;
        }
        int lead = 0;
        while (lead < rank - 1 && srcStrides[lead] == 0) {
            lead++;
        }
        if (lead > 0 && isDense(dstStrides, dims)) {
            replicate(src, srcOffset, srcStrides, dst, dstOffset, dstStrides, dims, lead, elementSize);
            return;
        }
        int last = rank - 1;
        long n = dims[last], ss = srcStrides[last], ds = dstStrides[last];
        long[] counts = new long[last];
        long s = srcOffset, d = dstOffset;
        while (true) {
            row(src, s, ss, dst, d, ds, n, elementSize);
            int ax = last - 1;
            for (; ax >= 0; ax--) {
                s += srcStrides[ax];
                d += dstStrides[ax];
                if (++counts[ax] < dims[ax]) {
                    break;
                }
                s -= srcStrides[ax] * counts[ax];
                d -= dstStrides[ax] * counts[ax];
                counts[ax] = 0;
            }
            if (ax < 0) {
                return;
            }
        }
    }

    /**
     * A box whose {@code lead} leading axes repeat the source (stride 0) into a dense destination: the inner box is
     * copied once, then the destination's filled prefix is copied after itself, doubling it. A bias broadcast to
     * {@code [128, 512]} is 8 bulk copies instead of 128 (each one costs microseconds before the JIT compiles it).
     */
    private static void replicate(MemorySegment src, long srcOffset, long[] srcStrides, MemorySegment dst,
                                  long dstOffset, long[] dstStrides, long[] dims, int lead, int elementSize) {
        int rank = dims.length;
        copy(src, srcOffset, Arrays.copyOfRange(srcStrides, lead, rank), dst, dstOffset,
                Arrays.copyOfRange(dstStrides, lead, rank), Arrays.copyOfRange(dims, lead, rank), elementSize);
        long block = dstStrides[lead - 1] * elementSize;
        long copies = 1;
        for (int ax = 0; ax < lead; ax++) {
            copies *= dims[ax];
        }
        BulkFill.byDoubling(dst, dstOffset * elementSize, block, copies);
    }

    /**
     * One element repeated into {@code n} contiguous ones (a broadcast along the innermost axis, as a softmax's
     * maximum back over its row): the element, then the filled prefix copied after itself, doubling it. Bulk copies
     * run at memory speed where the element loop does not vectorize ({@code [128] -> [128,512]} f32: 8.3 against
     * 64 µs a call once compiled; {@code [128,128]}: 6.1 against 16.5 µs), and they need no loop of their own for C2
     * to compile. Rows shorter than {@link #REPEAT_MIN} keep the loop, whose few iterations cost less than the
     * copies' calls ({@code [128,10]}: 1.1 µs with the loop, 4.0-4.5 by doubling).
     */
    static void repeat(MemorySegment src, long from, MemorySegment dst, long to, long n, int es) {
        MemorySegment.copy(src, from, dst, to, es);
        BulkFill.byDoubling(dst, to, es, n);
    }

    /** Whether {@code strides} are the row-major strides of {@code dims}. */
    private static boolean isDense(long[] strides, long[] dims) {
        long expected = 1;
        for (int ax = dims.length - 1; ax >= 0; ax--) {
            if (strides[ax] != expected) {
                return false;
            }
            expected *= dims[ax];
        }
        return true;
    }

    private static void row(MemorySegment src, long s, long ss, MemorySegment dst, long d, long ds, long n, int es) {
        if (ss == 1 && ds == 1) {
            MemorySegment.copy(src, s * es, dst, d * es, n * es);
            return;
        }
        if (ss == 0 && ds == 1 && n >= REPEAT_MIN) {
            repeat(src, s * es, dst, d * es, n, es);
            return;
        }
        switch (es) {
            case 8 -> {
                for (long i = 0; i < n; i++) {
                    dst.setAtIndex(I64, d + i * ds, src.getAtIndex(I64, s + i * ss));
                }
            }
            case 4 -> {
                for (long i = 0; i < n; i++) {
                    dst.setAtIndex(I32, d + i * ds, src.getAtIndex(I32, s + i * ss));
                }
            }
            default -> {
                for (long i = 0; i < n; i++) {
                    dst.set(BOOL, d + i * ds, src.get(BOOL, s + i * ss));
                }
            }
        }
    }
}
