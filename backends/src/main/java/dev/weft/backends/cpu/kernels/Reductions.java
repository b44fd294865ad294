package dev.weft.backends.cpu.kernels;

import static dev.weft.backends.cpu.kernels.Layouts.F32;
import static dev.weft.backends.cpu.kernels.Layouts.F64;
import static dev.weft.backends.cpu.kernels.Layouts.I32;
import static dev.weft.backends.cpu.kernels.Layouts.I64;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reductions over any set of axes of a row-major tensor. The output (the input's shape without the reduced
 * axes) is an accumulator: the caller fills it with the initial value ({@link #fillIdentity} or an explicit init)
 * and {@link #accumulate} folds every input element into it. Adjacent axes of one kind are merged, so each
 * innermost run is either a contiguous reduction or a contiguous elementwise combination; a contiguous floating run
 * folds in {@link #LANES} lanes, f32 sums and products in double. Floating max/min propagate NaN.
 */
public final class Reductions {
    private Reductions() {
    }

    /** Fills the first {@code n} elements of {@code out} with the identity of {@code r} ({@code -inf} for f32 max). */
    public static void fillIdentity(ElementwiseOp r, DType t, MemorySegment out, long n) {
        Number identity = r.identity(t);
        for (long i = 0; i < n; i++) {
            if (identity instanceof Long l) {
                Scalars.setLong(t, out, i, l);
            } else {
                Scalars.setDouble(t, out, i, identity.doubleValue());
            }
        }
    }

    /**
     * Folds {@code in} (of {@code dims}) over {@code axes} into {@code out}: {@code out[k] = r(out[k], in[j])} for
     * every input element {@code j} that maps to output element {@code k}.
     */
    public static void accumulate(ElementwiseOp r, DType t, MemorySegment in, long[] dims, int[] axes,
                                  MemorySegment out) {
        Groups g = Groups.of(dims, axes);
        if (g == null) {
            return;
        }
        int last = g.sizes.length - 1;
        long inner = g.sizes[last];
        boolean innerReduced = g.reduced[last];
        long[] counts = new long[last];
        long outOffset = 0;
        long es = t.byteSize();
        double[] lanes = t.isFloating() ? startLanes(r) : null;
        for (long inOffset = 0, total = g.total; inOffset < total; inOffset += inner) {
            if (innerReduced && t.isFloating()) {
                combineFloating(r, t, out, outOffset, reduceFloatingRun(r, t, in, inOffset, inner, lanes));
            } else if (innerReduced) {
                combineInteger(r, t, out, outOffset, reduceIntegerRun(r, t, in, inOffset, inner));
            } else {
                MemorySegment row = out.asSlice(outOffset * es, inner * es);
                Elementwise.binary(r, t, row, in.asSlice(inOffset * es, inner * es), row, inner);
            }
            for (int ax = last - 1; ax >= 0; ax--) {
                outOffset += g.outStrides[ax];
                if (++counts[ax] < g.sizes[ax]) {
                    break;
                }
                outOffset -= g.outStrides[ax] * counts[ax];
                counts[ax] = 0;
            }
        }
    }

    /**
     * When the reduced axes of {@code dims} all come before the kept ones (size-1 axes aside), so that
     * {@link #accumulate} folds row after row of the input into the whole output: {@code {rows, rowLength}}; else
     * null.
     */
    public static long[] leadingFold(long[] dims, int[] axes) {
        Groups g = Groups.of(dims, axes);
        if (g == null || g.sizes.length != 2 || !g.reduced[0] || g.reduced[1]) {
            return null;
        }
        return new long[] {g.sizes[0], g.sizes[1]};
    }

    /**
     * When the reduced axes of {@code dims} all come after the kept ones (size-1 axes aside), so that
     * {@link #accumulate} folds each contiguous row of the input into one output element, in order:
     * {@code {rows, rowLength}} (one row for a reduction of every axis); else null.
     */
    public static long[] trailingFold(long[] dims, int[] axes) {
        Groups g = Groups.of(dims, axes);
        if (g == null || !g.reduced[g.sizes.length - 1] || g.sizes.length > 2) {
            return null;
        }
        return g.sizes.length == 1 ? new long[] {1, g.sizes[0]} : new long[] {g.sizes[0], g.sizes[1]};
    }

    /**
     * For generic (non-library) reductions: the output index of every input element, in row-major input order.
     */
    public static long[] outputIndexOfEachInput(long[] dims, int[] axes) {
        Groups g = Groups.of(dims, axes);
        if (g == null) {
            return new long[0];
        }
        long[] map = new long[Math.toIntExact(g.total)];
        int rank = g.sizes.length;
        long[] counts = new long[rank];
        long out = 0;
        for (int i = 0; i < map.length; i++) {
            map[i] = out;
            for (int ax = rank - 1; ax >= 0; ax--) {
                out += g.outStrides[ax];
                if (++counts[ax] < g.sizes[ax]) {
                    break;
                }
                out -= g.outStrides[ax] * counts[ax];
                counts[ax] = 0;
            }
        }
        return map;
    }

    /** Axes merged into groups of one kind; each group has an output stride (0 for reduced groups). */
    private record Groups(long[] sizes, boolean[] reduced, long[] outStrides, long total) {
        /** The groups, or {@code null} for an empty input. */
        static Groups of(long[] dims, int[] axes) {
            boolean[] isReduced = new boolean[dims.length];
            for (int a : axes) {
                isReduced[a] = true;
            }
            List<long[]> groups = new ArrayList<>();
            long total = 1;
            for (int i = 0; i < dims.length; i++) {
                total *= dims[i];
                if (dims[i] == 1) {
                    continue;
                }
                long kind = isReduced[i] ? 1 : 0;
                if (!groups.isEmpty() && groups.getLast()[1] == kind) {
                    groups.getLast()[0] *= dims[i];
                } else {
                    groups.add(new long[] {dims[i], kind});
                }
            }
            if (total == 0) {
                return null;
            }
            if (groups.isEmpty()) {
                groups.add(new long[] {1, 0});
            }
            int n = groups.size();
            long[] sizes = new long[n];
            boolean[] reduced = new boolean[n];
            long[] strides = new long[n];
            long acc = 1;
            for (int i = n - 1; i >= 0; i--) {
                sizes[i] = groups.get(i)[0];
                reduced[i] = groups.get(i)[1] == 1;
                if (!reduced[i]) {
                    strides[i] = acc;
                    acc *= sizes[i];
                }
            }
            return new Groups(sizes, reduced, strides, total);
        }
    }

    static void combineFloating(ElementwiseOp r, DType t, MemorySegment out, long k, double v) {
        if (t == DType.F32) {
            out.setAtIndex(F32, k, (float) combine(r, out.getAtIndex(F32, k), v));
        } else {
            out.setAtIndex(F64, k, combine(r, out.getAtIndex(F64, k), v));
        }
    }

    /** Integer results wrap; the low 32 bits of a 64-bit sum or product are the i32 result. */
    static void combineInteger(ElementwiseOp r, DType t, MemorySegment out, long k, long v) {
        if (t == DType.I32) {
            out.setAtIndex(I32, k, (int) combine(r, out.getAtIndex(I32, k), v));
        } else {
            out.setAtIndex(I64, k, combine(r, out.getAtIndex(I64, k), v));
        }
    }

    private static double combine(ElementwiseOp r, double a, double b) {
        return switch (r) {
            case ADD -> a + b;
            case MUL -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> throw new IllegalArgumentException(r + " is not reducible");
        };
    }

    private static long combine(ElementwiseOp r, long a, long b) {
        return switch (r) {
            case ADD -> a + b;
            case MUL -> a * b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
            default -> throw new IllegalArgumentException(r + " is not reducible");
        };
    }

    /**
     * The lanes of a floating fold: a run's element {@code p} (counting from the run's start) folds into lane
     * {@code p % LANES}, and the lanes combine in one fixed tree ({@link #combineLanes}). Independent lanes let the
     * CPU overlap the additions that one accumulator would chain (a 2M-element f32 sum: 2.7 ms chained, NumPy's
     * pairwise sum 0.45 ms); the fixed assignment keeps the result independent of how a run is split into pieces
     * and of the machine.
     */
    static final int LANES = 8;

    /** Fresh lanes for a fold by {@code r}: each holds {@code r}'s identity ({@code -0.0} for a sum). */
    static double[] startLanes(ElementwiseOp r) {
        double[] lanes = new double[LANES];
        resetLanes(r, lanes);
        return lanes;
    }

    /**
     * Sets every lane to {@code r}'s identity; a sum's is {@code -0.0}, not {@code 0.0}, so a sum of {@code -0.0}s
     * stays so.
     */
    static void resetLanes(ElementwiseOp r, double[] lanes) {
        Arrays.fill(lanes, r == ElementwiseOp.ADD ? -0.0 : r.identity(DType.F64).doubleValue());
    }

    /** The lanes combined: {@code ((l0 r l1) r (l2 r l3)) r ((l4 r l5) r (l6 r l7))}. */
    static double combineLanes(ElementwiseOp r, double[] l) {
        return combine(r, combine(r, combine(r, l[0], l[1]), combine(r, l[2], l[3])),
                combine(r, combine(r, l[4], l[5]), combine(r, l[6], l[7])));
    }

    private static double reduceFloatingRun(ElementwiseOp r, DType t, MemorySegment in, long from, long n,
                                            double[] lanes) {
        resetLanes(r, lanes);
        foldLanes(r, t, in, from, from + n, 0, lanes);
        return combineLanes(r, lanes);
    }

    /**
     * Folds elements {@code [from, to)} of {@code in} into {@code lanes}, the first of them being element
     * {@code position} of its run: f32 values in double (sums and products), max and min propagating NaN.
     */
    static void foldLanes(ElementwiseOp r, DType t, MemorySegment in, long from, long to, long position,
                          double[] lanes) {
        boolean f32 = t == DType.F32;
        int lane = (int) (position % LANES);
        long i = from;
        for (; i < to && lane != 0; i++, lane = (lane + 1) % LANES) {
            lanes[lane] = combine(r, lanes[lane], f32 ? in.getAtIndex(F32, i) : in.getAtIndex(F64, i));
        }
        if (r == ElementwiseOp.ADD) {
            i = f32 ? addF32(in, i, to, lanes) : addF64(in, i, to, lanes);
        } else if (r == ElementwiseOp.MAX || r == ElementwiseOp.MIN) {
            i = extreme(r == ElementwiseOp.MAX, f32, in, i, to, lanes);
        }
        for (; i < to; i++, lane = (lane + 1) % LANES) {
            lanes[lane] = combine(r, lanes[lane], f32 ? in.getAtIndex(F32, i) : in.getAtIndex(F64, i));
        }
    }

    /** Whole groups of {@link #LANES} f32 values from {@code i} (lane 0) added into the lanes; the index after. */
    private static long addF32(MemorySegment in, long i, long to, double[] l) {
        double a0 = l[0], a1 = l[1], a2 = l[2], a3 = l[3], a4 = l[4], a5 = l[5], a6 = l[6], a7 = l[7];
        for (; i + LANES <= to; i += LANES) {
            a0 += in.getAtIndex(F32, i);
            a1 += in.getAtIndex(F32, i + 1);
            a2 += in.getAtIndex(F32, i + 2);
            a3 += in.getAtIndex(F32, i + 3);
            a4 += in.getAtIndex(F32, i + 4);
            a5 += in.getAtIndex(F32, i + 5);
            a6 += in.getAtIndex(F32, i + 6);
            a7 += in.getAtIndex(F32, i + 7);
        }
        l[0] = a0; l[1] = a1; l[2] = a2; l[3] = a3; l[4] = a4; l[5] = a5; l[6] = a6; l[7] = a7;
        return i;
    }

    /** As {@link #addF32}, for f64 values. */
    private static long addF64(MemorySegment in, long i, long to, double[] l) {
        double a0 = l[0], a1 = l[1], a2 = l[2], a3 = l[3], a4 = l[4], a5 = l[5], a6 = l[6], a7 = l[7];
        for (; i + LANES <= to; i += LANES) {
            a0 += in.getAtIndex(F64, i);
            a1 += in.getAtIndex(F64, i + 1);
            a2 += in.getAtIndex(F64, i + 2);
            a3 += in.getAtIndex(F64, i + 3);
            a4 += in.getAtIndex(F64, i + 4);
            a5 += in.getAtIndex(F64, i + 5);
            a6 += in.getAtIndex(F64, i + 6);
            a7 += in.getAtIndex(F64, i + 7);
        }
        l[0] = a0; l[1] = a1; l[2] = a2; l[3] = a3; l[4] = a4; l[5] = a5; l[6] = a6; l[7] = a7;
        return i;
    }

    /**
     * Whole groups of {@link #LANES} values from {@code i} (lane 0) folded into the lanes by max ({@code max}) or min;
     * the index after. Max and min give the same result in any order, so this only runs faster.
     */
    private static long extreme(boolean max, boolean f32, MemorySegment in, long i, long to, double[] l) {
        for (; i + LANES <= to; i += LANES) {
            for (int k = 0; k < LANES; k++) {
                double v = f32 ? in.getAtIndex(F32, i + k) : in.getAtIndex(F64, i + k);
                l[k] = max ? Math.max(l[k], v) : Math.min(l[k], v);
            }
        }
        return i;
    }

    private static long reduceIntegerRun(ElementwiseOp r, DType t, MemorySegment in, long from, long n) {
        long first = t == DType.I32 ? in.getAtIndex(I32, from) : in.getAtIndex(I64, from);
        return foldIntegerRun(r, t, in, from + 1, from + n, first);
    }

    /**
     * {@code init} (the fold of a run's earlier elements) folded with elements {@code [from, to)} of {@code in}, in
     * order; i32 values wrap at every step.
     */
    static long foldIntegerRun(ElementwiseOp r, DType t, MemorySegment in, long from, long to, long init) {
        if (t == DType.I32) {
            int acc = (int) init;
            switch (r) {
                case ADD -> {
                    for (long i = from; i < to; i++) {
                        acc += in.getAtIndex(I32, i);
                    }
                }
                case MUL -> {
                    for (long i = from; i < to; i++) {
                        acc *= in.getAtIndex(I32, i);
                    }
                }
                case MAX -> {
                    for (long i = from; i < to; i++) {
                        acc = Math.max(acc, in.getAtIndex(I32, i));
                    }
                }
                case MIN -> {
                    for (long i = from; i < to; i++) {
                        acc = Math.min(acc, in.getAtIndex(I32, i));
                    }
                }
            }
            return acc;
        }
        long acc = init;
        switch (r) {
            case ADD -> {
                for (long i = from; i < to; i++) {
                    acc += in.getAtIndex(I64, i);
                }
            }
            case MUL -> {
                for (long i = from; i < to; i++) {
                    acc *= in.getAtIndex(I64, i);
                }
            }
            case MAX -> {
                for (long i = from; i < to; i++) {
                    acc = Math.max(acc, in.getAtIndex(I64, i));
                }
            }
            case MIN -> {
                for (long i = from; i < to; i++) {
                    acc = Math.min(acc, in.getAtIndex(I64, i));
                }
            }
        }
        return acc;
    }
}
