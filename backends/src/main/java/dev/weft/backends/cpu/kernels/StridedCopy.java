package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.BOOL;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import java.lang.foreign.MemorySegment;

/**
 * The engine behind the data-movement kernels: copies a box of {@code dims} elements between two strided views
 * (offsets and strides in elements, element size 1, 4 or 8 bytes; a source stride of 0 repeats an element). The
 * innermost axis is a bulk copy when both of its strides are 1 and a strided loop otherwise.
 */
final class StridedCopy {
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

    private static void row(MemorySegment src, long s, long ss, MemorySegment dst, long d, long ds, long n, int es) {
        if (ss == 1 && ds == 1) {
            MemorySegment.copy(src, s * es, dst, d * es, n * es);
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
