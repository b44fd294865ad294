package dev.weft.backends.cpu.exec;

import dev.weft.lowering.ir.FusionPiece;
import dev.weft.lowering.ir.Op;
import dev.weft.lowering.ir.StableHlo;
import dev.weft.lowering.ir.TensorType;
import dev.weft.lowering.ir.Value;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * The geometry of a fusion whose region takes views ({@link StableHlo#FUSION_SLICE_STARTS}) or piecewise arguments
 * ({@link StableHlo#FUSION_PIECES}), walked row by row: a row is a run along the fused shape's last axis. Each
 * input reads every row as column intervals, each contiguous in one source; a row is split at the union of all
 * inputs' interval boundaries and a {@link FusedLoop} runs over each part, so nothing is assembled first.
 *
 * <p>Inputs (the loop's) are the region's arguments followed by its full-size constants; each is read as boxes
 * (the whole of a full-size input, a view's window, a piecewise argument's pieces) or is rank-0 and read whole.
 * Sources (what boxes read) are the fusion's operands, then the constants, then one fill row per rank-0 operand
 * that pieces read: a row of that value, filled once per run, which a box of the value reads at its own columns.
 *
 * <p>Rows sharing the boxes they cross share a plan: the row indices along each outer axis split at every box's
 * edges, and each cell of that grid has its cut columns and, per part and input, the source and the offset that
 * turns a row's base in that source into the part's first element.
 */
final class FusionViews {
    private static final int NONE = -1;

    private final long[] outer;
    private final long rowLength;
    private final int inputs;
    private final int operands;
    private final int constants;
    /** Per input: element bytes; the operand a rank-0 input reads whole ({@link #NONE} for others). */
    private final long[] bytes;
    private final int[] wholeSource;
    /** Per region argument: a view or piecewise, so the chunked path copies it out first. */
    private final boolean[] assembled;
    /** Per source: row-major strides along the outer axes, in elements (zero for fill rows). */
    private final long[][] rowStrides;
    private final int[] fillOperand;
    private final long[] fillBytes;
    /** Shifted operands: read other than element {@code i} at element {@code i} of the result. */
    private final boolean[] shifted;
    /** Per outer axis, the row indices where its cells start (first 0). */
    private final long[][] cellStarts;
    private final Cell[] cells;
    private final long[] resultBytes;

    /**
     * The plan of the rows of one cell: parts {@code [cuts[j], cuts[j+1])}; input {@code i} reads part {@code j}
     * from source {@code source[j][i]} starting at element {@code base + cuts[j] + delta[j][i]}, where
     * {@code base} is the row's base in that source.
     */
    private record Cell(long[] cuts, int[][] source, long[][] delta) {
    }

    /** Elements {@code [at, at + size)} of an input are those of source {@code source} from element {@code from}. */
    private record Box(int source, long[] at, long[] from, long[] size) {
    }

    private FusionViews(Op fusion, long[] constantBytes) {
        TensorType fused = fusion.results().getFirst().tensorType();
        long[] shape = fused.shape().dims();
        int rank = shape.length;
        outer = Arrays.copyOf(shape, rank - 1);
        rowLength = shape[rank - 1];
        List<Value> arguments = fusion.regions().getFirst().arguments();
        operands = fusion.operands().size();
        constants = constantBytes.length;
        inputs = arguments.size() + constants;
        bytes = new long[inputs];
        wholeSource = new int[inputs];
        assembled = new boolean[arguments.size()];
        shifted = new boolean[operands];
        List<Integer> fills = new ArrayList<>();
        List<List<Box>> boxes = new ArrayList<>();
        for (int i = 0; i < arguments.size(); i++) {
            boxes.add(argumentBoxes(fusion, i, fills));
        }
        for (int c = 0; c < constants; c++) {
            bytes[arguments.size() + c] = constantBytes[c];
            wholeSource[arguments.size() + c] = NONE;
            boxes.add(List.of(new Box(operands + c, new long[rank], new long[rank], shape)));
        }
        fillOperand = fills.stream().mapToInt(Integer::intValue).toArray();
        fillBytes = Arrays.stream(fillOperand)
                .mapToLong(o -> rowLength * fusion.operand(o).tensorType().dtype().byteSize()).toArray();
        rowStrides = new long[operands + constants + fillOperand.length][];
        for (int s = 0; s < rowStrides.length; s++) {
            long[] strides = s < operands ? fusion.operand(s).tensorType().shape().strides()
                    : s < operands + constants ? fused.shape().strides() : new long[rank];
            rowStrides[s] = Arrays.copyOf(strides, rank - 1);
        }
        cellStarts = cellStarts(boxes);
        int count = 1;
        for (long[] starts : cellStarts) {
            count = Math.multiplyExact(count, starts.length);
        }
        cells = new Cell[count];
        for (int c = 0; c < count; c++) {
            cells[c] = cell(c, boxes, rank);
        }
        resultBytes = fusion.results().stream().mapToLong(r -> r.tensorType().dtype().byteSize()).toArray();
    }

    /**
     * The boxes that region argument {@code i} reads (none when it has rank 0); sets its entries of the per-input
     * and per-operand tables, and numbers the fill rows its pieces read, adding their operands to {@code fills}.
     */
    private List<Box> argumentBoxes(Op fusion, int i, List<Integer> fills) {
        TensorType argument = fusion.regions().getFirst().arguments().get(i).tensorType();
        long[] shape = fusion.results().getFirst().tensorType().shape().dims();
        int rank = shape.length;
        bytes[i] = argument.dtype().byteSize();
        long[] starts = StableHlo.fusionSliceStarts(fusion, i);
        List<FusionPiece> pieces = StableHlo.fusionPieces(fusion, i);
        wholeSource[i] = NONE;
        assembled[i] = starts.length > 0 || !pieces.isEmpty();
        if (!pieces.isEmpty()) {
            List<Box> own = new ArrayList<>();
            for (FusionPiece p : pieces) {
                int source = p.operand();
                if (p.isFill()) {
                    if (!fills.contains(source)) {
                        fills.add(source);
                    }
                    source = operands + constants + fills.indexOf(source);
                }
                own.add(new Box(source, p.at(), p.isFill() ? new long[rank] : p.from(), p.size()));
                shifted[p.operand()] = true;
            }
            return own;
        }
        if (starts.length > 0) {
            shifted[i] = true;
            return List.of(new Box(i, new long[rank], starts, shape));
        }
        if (argument.shape().rank() == rank) {
            return List.of(new Box(i, new long[rank], new long[rank], shape));
        }
        wholeSource[i] = i;
        return List.of();
    }

    /** Per outer axis, the sorted row indices where some box starts or ends (0 first, the axis's length not). */
    private long[][] cellStarts(List<List<Box>> boxes) {
        long[][] out = new long[outer.length][];
        for (int k = 0; k < outer.length; k++) {
            TreeSet<Long> edges = new TreeSet<>(List.of(0L));
            for (List<Box> own : boxes) {
                for (Box b : own) {
                    edges.add(b.at[k]);
                    edges.add(b.at[k] + b.size[k]);
                }
            }
            out[k] = edges.headSet(outer[k], false).stream().mapToLong(Long::longValue).toArray();
        }
        return out;
    }

    /**
     * The views of {@code fusion}, whose region's full-size constants have elements of {@code constantBytes}
     * bytes, or null when its region takes none.
     */
    static FusionViews of(Op fusion, long[] constantBytes) {
        return fusion.attr(StableHlo.FUSION_SLICE_STARTS) == null && fusion.attr(StableHlo.FUSION_PIECES) == null
                ? null : new FusionViews(fusion, constantBytes);
    }

    /** The plan of cell number {@code c} (its index along each outer axis, mixed radix, last axis fastest). */
    private Cell cell(int c, List<List<Box>> boxes, int rank) {
        long[] first = new long[outer.length];
        for (int k = outer.length - 1; k >= 0; k--) {
            first[k] = cellStarts[k][c % cellStarts[k].length];
            c /= cellStarts[k].length;
        }
        TreeSet<Long> cuts = new TreeSet<>(List.of(0L, rowLength));
        List<List<Box>> crossing = new ArrayList<>();
        for (List<Box> own : boxes) {
            List<Box> here = new ArrayList<>();
            for (Box b : own) {
                boolean crosses = true;
                for (int k = 0; k < outer.length; k++) {
                    crosses &= b.at[k] <= first[k] && first[k] < b.at[k] + b.size[k];
                }
                if (crosses) {
                    here.add(b);
                    cuts.add(b.at[rank - 1]);
                    cuts.add(b.at[rank - 1] + b.size[rank - 1]);
                }
            }
            crossing.add(here);
        }
        long[] cut = cuts.stream().mapToLong(Long::longValue).toArray();
        int parts = cut.length - 1;
        int[][] source = new int[parts][inputs];
        long[][] delta = new long[parts][inputs];
        for (int j = 0; j < parts; j++) {
            for (int i = 0; i < inputs; i++) {
                source[j][i] = NONE;
                for (Box b : crossing.get(i)) {
                    if (b.at[rank - 1] <= cut[j] && cut[j] < b.at[rank - 1] + b.size[rank - 1]) {
                        source[j][i] = b.source;
                        delta[j][i] = offsetDelta(b, rank);
                    }
                }
                if (source[j][i] == NONE && wholeSource[i] == NONE) {
                    throw new IllegalArgumentException("fusion input " + i + " has no piece at column " + cut[j]);
                }
            }
        }
        return new Cell(cut, source, delta);
    }

    /**
     * {@code sum_k (from_k - at_k) * stride_k}: the box's element (row x, column c) is source element
     * base(x) + c + this. A fill row holds its value at every column: 0.
     */
    private long offsetDelta(Box b, int rank) {
        if (b.source >= operands + constants) {
            return 0;
        }
        long d = b.from[rank - 1] - b.at[rank - 1];
        for (int k = 0; k < rank - 1; k++) {
            d += (b.from[k] - b.at[k]) * rowStrides[b.source][k];
        }
        return d;
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

    /** How many sources {@link #run} and {@link #copyWindow} take: operands, constants, fill rows. */
    int sources() {
        return rowStrides.length;
    }

    int fillRows() {
        return fillOperand.length;
    }

    long fillRowBytes(int fill) {
        return fillBytes[fill];
    }

    /** Fills each fill row of {@code sources} (from index operands + constants) with its rank-0 operand's value. */
    void fill(MemorySegment[] sources) {
        for (int f = 0; f < fillOperand.length; f++) {
            MemorySegment value = sources[fillOperand[f]];
            MemorySegment row = sources[operands + constants + f];
            long es = value.byteSize();
            MemorySegment.copy(value, 0, row, 0, es);
            for (long done = 1; done < rowLength; done *= 2) {
                MemorySegment.copy(row, 0, row, done * es, Math.min(done, rowLength - done) * es);
            }
        }
    }

    /**
     * True if operand {@code operand} is read other than element for element with the result, so a result must
     * not overwrite it.
     */
    boolean isShifted(int operand) {
        return shifted[operand];
    }

    /** True if region argument {@code argument} is a view or piecewise, not its operand as it is. */
    boolean isAssembled(int argument) {
        return assembled[argument];
    }

    /**
     * Runs {@code loop} over rows {@code [from, to)} of the fused shape, reading {@code sources}. Consecutive rows
     * of one cell along the last outer axis are a run: the loop goes over each part's columns of every row of the
     * run ({@link FusedLoop#runRows}), every input read in its source at the offset that makes the loop's element
     * {@code c} the input's element at column {@code c} of the row (so nothing is sliced). Row {@code row} of the
     * results is written at row {@code row - outRow} of {@code out}.
     */
    void run(FusedLoop loop, MemorySegment[] sources, MemorySegment[] out, long from, long to, long outRow) {
        MemorySegment[] in = new MemorySegment[inputs];
        long[] inOffset = new long[inputs];
        long[] inStride = new long[inputs];
        for (int i = 0; i < inputs; i++) {
            in[i] = wholeSource[i] == NONE ? null : sources[wholeSource[i]];
        }
        long[] outOffset = new long[out.length];
        long[] outStride = new long[out.length];
        for (int r = 0; r < out.length; r++) {
            outStride[r] = rowLength * resultBytes[r];
        }
        long[] index = new long[outer.length];
        long[] base = new long[rowStrides.length];
        int last = outer.length - 1;
        for (long row = from; row < to; ) {
            Cell cell = locate(row, index, base);
            long rows = Math.min(to - row, last < 0 ? 1 : runLength(last, index[last]));
            long[] cuts = cell.cuts;
            for (int j = 0; j + 1 < cuts.length; j++) {
                int[] source = cell.source[j];
                long[] delta = cell.delta[j];
                for (int i = 0; i < inputs; i++) {
                    int s = source[i];
                    if (s != NONE) {
                        in[i] = sources[s];
                        inOffset[i] = (base[s] + delta[i]) * bytes[i];
                        inStride[i] = last < 0 ? 0 : rowStrides[s][last] * bytes[i];
                    }
                }
                for (int r = 0; r < out.length; r++) {
                    outOffset[r] = (row - outRow) * outStride[r];
                }
                loop.runRows(in, inOffset, inStride, out, outOffset, outStride, rows, cuts[j], cuts[j + 1]);
            }
            row += rows;
        }
    }

    /** How many rows from index {@code at} along outer axis {@code axis} on stay in its cell and on its line. */
    private long runLength(int axis, long at) {
        long[] starts = cellStarts[axis];
        int k = Arrays.binarySearch(starts, at);
        int cell = k >= 0 ? k : -k - 2;
        return (cell + 1 < starts.length ? starts[cell + 1] : outer[axis]) - at;
    }

    /** Copies input {@code input} (a view or piecewise argument) into {@code window}, row-major. */
    void copyWindow(int input, MemorySegment[] sources, MemorySegment window) {
        long es = bytes[input];
        long[] index = new long[outer.length];
        long[] base = new long[rowStrides.length];
        for (long row = 0, rows = rows(); row < rows; row++) {
            Cell cell = locate(row, index, base);
            for (int j = 0; j + 1 < cell.cuts.length; j++) {
                long lo = cell.cuts[j];
                int s = cell.source[j][input];
                MemorySegment.copy(sources[s], (base[s] + lo + cell.delta[j][input]) * es, window,
                        (row * rowLength + lo) * es, (cell.cuts[j + 1] - lo) * es);
            }
        }
    }

    /** The cell of row {@code row}; sets {@code index} to its outer index and {@code base} to its base per source. */
    private Cell locate(long row, long[] index, long[] base) {
        for (int k = outer.length - 1; k >= 0; k--) {
            index[k] = row % outer[k];
            row /= outer[k];
        }
        int cell = 0;
        for (int k = 0; k < outer.length; k++) {
            int at = Arrays.binarySearch(cellStarts[k], index[k]);
            cell = cell * cellStarts[k].length + (at >= 0 ? at : -at - 2);
        }
        for (int s = 0; s < base.length; s++) {
            long b = 0;
            for (int k = 0; k < index.length; k++) {
                b += index[k] * rowStrides[s][k];
            }
            base[s] = b;
        }
        return cells[cell];
    }
}
