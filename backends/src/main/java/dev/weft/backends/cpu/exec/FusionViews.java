package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The geometry of a fusion whose region takes views ({@link StableHlo#FUSION_SLICE_STARTS}), walked row by row:
 * a row is a run along the fused shape's last axis, contiguous in every input, so a {@link FusedLoop} runs over
 * each row with its inputs and results narrowed to that row. Inputs are the fusion's operands followed by the
 * region's full-size constants; each is a view (read at its window's row), full-size (read at the row) or rank-0
 * (read whole).
 */
final class FusionViews {
    private enum Kind { VIEW, FULL, SCALAR }

    private final long[] outer;
    private final long rowLength;
    private final Kind[] kind;
    private final long[] bytes;
    /** For a view: its window's start indices and its source's row-major strides, in elements. */
    private final long[][] starts;
    private final long[][] strides;
    private final long[] resultBytes;

    private FusionViews(Op fusion, long[] constantBytes) {
        long[] shape = fusion.results().getFirst().tensorType().shape().dims();
        int constants = constantBytes.length;
        outer = Arrays.copyOf(shape, shape.length - 1);
        rowLength = shape[shape.length - 1];
        int operands = fusion.operands().size();
        kind = new Kind[operands + constants];
        bytes = new long[kind.length];
        starts = new long[kind.length][];
        strides = new long[kind.length][];
        long n = fusion.results().getFirst().tensorType().shape().size();
        for (int i = 0; i < operands; i++) {
            TensorType source = fusion.operand(i).tensorType();
            TensorType argument = fusion.regions().getFirst().arguments().get(i).tensorType();
            bytes[i] = source.dtype().byteSize();
            starts[i] = StableHlo.fusionSliceStarts(fusion, i);
            strides[i] = source.shape().strides();
            kind[i] = starts[i].length > 0 ? Kind.VIEW : argument.shape().size() == n ? Kind.FULL : Kind.SCALAR;
        }
        for (int c = 0; c < constants; c++) {
            kind[operands + c] = Kind.FULL;
            bytes[operands + c] = constantBytes[c];
        }
        resultBytes = fusion.results().stream().mapToLong(r -> r.tensorType().dtype().byteSize()).toArray();
    }

    /**
     * The views of {@code fusion}, whose region's full-size constants have elements of {@code constantBytes}
     * bytes, or null when its region takes none.
     */
    static FusionViews of(Op fusion, long[] constantBytes) {
        return fusion.attr(StableHlo.FUSION_SLICE_STARTS) == null ? null : new FusionViews(fusion, constantBytes);
    }

    long rows() {
        long r = 1;
        for (long d : outer) {
            r *= d;
        }
        return rowLength == 0 ? 0 : r;
    }

    long rowLength() {
        return rowLength;
    }

    /** Runs {@code loop} over rows {@code [from, to)} of the fused shape. */
    void run(FusedLoop loop, MemorySegment[] in, MemorySegment[] out, long from, long to) {
        MemorySegment[] rowIn = in.clone();
        MemorySegment[] rowOut = new MemorySegment[out.length];
        for (long row = from; row < to; row++) {
            for (int i = 0; i < kind.length; i++) {
                if (kind[i] != Kind.SCALAR) {
                    rowIn[i] = in[i].asSlice(offset(i, row) * bytes[i], rowLength * bytes[i]);
                }
            }
            for (int r = 0; r < out.length; r++) {
                rowOut[r] = out[r].asSlice(row * rowLength * resultBytes[r], rowLength * resultBytes[r]);
            }
            loop.run(rowIn, rowOut, 0, rowLength);
        }
    }

    /** Copies view {@code input} of {@code source} into {@code window}, row-major. */
    void copyWindow(int input, MemorySegment source, MemorySegment window) {
        long rowBytes = rowLength * bytes[input];
        for (long row = 0, rows = rows(); row < rows; row++) {
            MemorySegment.copy(source, offset(input, row) * bytes[input], window, row * rowBytes, rowBytes);
        }
    }

    boolean isView(int input) {
        return kind[input] == Kind.VIEW;
    }

    /** The element offset of row {@code row} in input {@code input}. */
    private long offset(int input, long row) {
        if (kind[input] == Kind.FULL) {
            return row * rowLength;
        }
        long[] s = starts[input];
        long[] st = strides[input];
        int last = outer.length;
        long off = s[last] * st[last];
        for (int k = last - 1; k >= 0; k--) {
            off += (s[k] + row % outer[k]) * st[k];
            row /= outer[k];
        }
        return off;
    }
}
