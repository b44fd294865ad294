package dev.weft.backends.gpu.ptx;

import dev.weft.DType;

/**
 * Data movement with compile-time shapes, one thread per element in a grid-stride loop. Every kernel but
 * {@link #iota} takes (source, destination) pointers; {@link #pad} takes (source, padding value, destination).
 */
public final class CopyKernels {
    private CopyKernels() {
    }

    /**
     * For each coordinate {@code c} of {@code space}: {@code dst[dstBase + c·dstStrides] = src[srcBase + c·srcStrides]}
     * (element offsets). Transpose, broadcast and slice are gathers over the result's shape; each part of a
     * concatenation is a scatter over the part's shape.
     */
    public static Kernel affine(String name, DType t, long[] space, long[] srcStrides, long srcBase,
                                long[] dstStrides, long dstBase) {
        PtxWriter w = new PtxWriter();
        String src = w.param(0), dst = w.param(1);
        String[] loop = Indexing.gridStride(w);
        long n = Indexing.size(space);
        String[] labels = Indexing.open(w, loop[0], n);
        String[] c = Indexing.coordinates(w, loop[0], space);
        String from = offset(w, loop[0], c, space, srcStrides, srcBase);
        String to = offset(w, loop[0], c, space, dstStrides, dstBase);
        int es = t.byteSize();
        w.store(t, w.address(dst, to, es), w.load(t, w.address(src, from, es)));
        Indexing.close(w, loop[0], loop[1], labels);
        return new Kernel(name, w.entry(name, 2), 2, Launch.gridStride(n));
    }

    /** The linear index itself when the strides are row-major over {@code space} and there is no base. */
    private static String offset(PtxWriter w, String index, String[] c, long[] space, long[] strides, long base) {
        boolean contiguous = base == 0;
        long[] rowMajor = Indexing.strides(space);
        for (int d = 0; d < space.length && contiguous; d++) {
            contiguous = space[d] == 1 || strides[d] == rowMajor[d];
        }
        return contiguous ? index : Indexing.dot(w, c, strides, base);
    }

    /**
     * StableHLO {@code pad} with non-negative paddings: output coordinate {@code c} reads source coordinate
     * {@code (c - low)/(interior+1)} when that divides exactly and lies inside the source, else the padding value.
     */
    public static Kernel pad(String name, DType t, long[] inDims, long[] low, long[] interior, long[] outDims) {
        PtxWriter w = new PtxWriter();
        String src = w.param(0), value = w.param(1), dst = w.param(2);
        int es = t.byteSize();
        String padding = w.load(t, value);
        String[] loop = Indexing.gridStride(w);
        String[] labels = Indexing.open(w, loop[0], Indexing.size(outDims));
        String[] c = Indexing.coordinates(w, loop[0], outDims);
        long[] inStrides = Indexing.strides(inDims);
        String inside = w.reg(Reg.PRED), from = w.reg(Reg.S64);
        w.ins("setp.eq.u32 " + inside + ", 0, 0");
        w.ins("mov.u64 " + from + ", 0");
        for (int d = 0; d < c.length; d++) {
            String shifted = w.reg(Reg.S64), q = w.reg(Reg.S64), r = w.reg(Reg.S64), ok = w.reg(Reg.PRED);
            w.ins("sub.s64 " + shifted + ", " + c[d] + ", " + low[d]);
            w.ins("setp.ge.s64 " + ok + ", " + shifted + ", 0").ins("and.pred " + inside + ", " + inside + ", " + ok);
            w.ins("rem.s64 " + r + ", " + shifted + ", " + (interior[d] + 1));
            w.ins("setp.eq.s64 " + ok + ", " + r + ", 0").ins("and.pred " + inside + ", " + inside + ", " + ok);
            w.ins("div.s64 " + q + ", " + shifted + ", " + (interior[d] + 1));
            w.ins("setp.lt.s64 " + ok + ", " + q + ", " + inDims[d]).ins("and.pred " + inside + ", " + inside + ", "
                    + ok);
            w.ins("mad.lo.s64 " + from + ", " + q + ", " + inStrides[d] + ", " + from);
        }
        String skip = w.label(), store = w.label();
        String result = w.reg(t);
        w.ins("@!" + inside + " bra " + skip);
        move(w, t, result, w.load(t, w.address(src, from, es)));
        w.ins("bra " + store).at(skip);
        move(w, t, result, padding);
        w.at(store);
        w.store(t, w.address(dst, loop[0], es), result);
        Indexing.close(w, loop[0], loop[1], labels);
        return new Kernel(name, w.entry(name, 3), 3, Launch.gridStride(Indexing.size(outDims)));
    }

    /**
     * StableHLO {@code dynamic_slice}: parameters (source, start_0, ..., start_{r-1}, destination), each start an
     * integer scalar on the device of {@code startTypes[d]}, clamped to {@code [0, inDims[d] - sizes[d]]}.
     */
    public static Kernel dynamicSlice(String name, DType t, long[] inDims, long[] sizes, DType[] startTypes) {
        return dynamicBlock(name, t, inDims, sizes, startTypes, false);
    }

    /**
     * The block write of StableHLO {@code dynamic_update_slice} into a destination already holding the operand:
     * parameters (update, start_0, ..., start_{r-1}, destination), starts clamped to
     * {@code [0, dims[d] - updateDims[d]]}.
     */
    public static Kernel dynamicUpdate(String name, DType t, long[] dims, long[] updateDims, DType[] startTypes) {
        return dynamicBlock(name, t, dims, updateDims, startTypes, true);
    }

    /** One thread per element of the block: read from the block at a run-time start, or ({@code write}) into it. */
    private static Kernel dynamicBlock(String name, DType t, long[] dims, long[] block, DType[] startTypes,
                                       boolean write) {
        PtxWriter w = new PtxWriter();
        int r = dims.length;
        String src = w.param(0);
        String base = dynamicBase(w, dims, block, startTypes);
        String dst = w.param(r + 1);
        String[] loop = Indexing.gridStride(w);
        long n = Indexing.size(block);
        String[] labels = Indexing.open(w, loop[0], n);
        String[] c = Indexing.coordinates(w, loop[0], block);
        String inFull = Indexing.dot(w, c, Indexing.strides(dims), 0);
        w.ins("add.s64 " + inFull + ", " + inFull + ", " + base);
        int es = t.byteSize();
        String from = write ? loop[0] : inFull, to = write ? inFull : loop[0];
        w.store(t, w.address(dst, to, es), w.load(t, w.address(src, from, es)));
        Indexing.close(w, loop[0], loop[1], labels);
        return new Kernel(name, w.entry(name, r + 2), r + 2, Launch.gridStride(n));
    }

    /** The element offset of a block's first element, from starts in parameters 1..r, each clamped. */
    private static String dynamicBase(PtxWriter w, long[] dims, long[] sizes, DType[] startTypes) {
        long[] strides = Indexing.strides(dims);
        String base = w.reg(Reg.S64);
        w.ins("mov.u64 " + base + ", 0");
        for (int d = 0; d < dims.length; d++) {
            String start = w.load(startTypes[d], w.param(d + 1));
            if (startTypes[d] != DType.I64) {
                String wide = w.reg(Reg.S64);
                w.ins("cvt.s64.s32 " + wide + ", " + start);
                start = wide;
            }
            w.ins("max.s64 " + start + ", " + start + ", 0");
            w.ins("min.s64 " + start + ", " + start + ", " + (dims[d] - sizes[d]));
            w.ins("mad.lo.s64 " + base + ", " + start + ", " + strides[d] + ", " + base);
        }
        return base;
    }

    private static void move(PtxWriter w, DType t, String to, String from) {
        w.ins("mov." + (t == DType.BOOL ? "pred" : Reg.arith(t)) + " " + to + ", " + from);
    }

    /** {@code out[c] = (t) c[axis]}: StableHLO {@code iota}; parameter: the destination. */
    public static Kernel iota(String name, DType t, long[] dims, int axis) {
        PtxWriter w = new PtxWriter();
        String dst = w.param(0);
        String[] loop = Indexing.gridStride(w);
        long n = Indexing.size(dims);
        String[] labels = Indexing.open(w, loop[0], n);
        String[] c = Indexing.coordinates(w, loop[0], dims);
        String v = w.reg(t);
        switch (t) {
            case F32, F64 -> w.ins("cvt.rn." + Reg.arith(t) + ".u64 " + v + ", " + c[axis]);
            case I32 -> w.ins("cvt.u32.u64 " + v + ", " + c[axis]);
            case I64 -> w.ins("mov.u64 " + v + ", " + c[axis]);
            case BOOL -> w.ins("setp.ne.u64 " + v + ", " + c[axis] + ", 0");
        }
        w.store(t, w.address(dst, loop[0], t.byteSize()), v);
        Indexing.close(w, loop[0], loop[1], labels);
        return new Kernel(name, w.entry(name, 1), 1, Launch.gridStride(n));
    }
}
