package dev.weft.backends.gpu.ptx;

import dev.weft.DType;

/**
 * The fallback matmul when no cuBLAS is loaded: {@code C[b] = A[b]·B[b]} for row-major {@code A: m×k},
 * {@code B: k×n}, {@code C: m×n}, {@code batch} matrices each, with {@value #TILE}×{@value #TILE} tiles of A and B
 * staged in shared memory. The output tiles of all batches are numbered {@code (b·tileRows + tileRow)·tileCols +
 * tileCol}; a one-dimensional grid of {@link #launch} blocks walks them with a block stride, so no grid extent
 * limits the matrix or batch size, and batch offsets are 64-bit. Parameters: (A, B, C). Floating products
 * accumulate with FMA, so results may differ from the CPU's in the last bits.
 */
public final class GemmKernel {
    public static final int TILE = 16;
    /** Most blocks in a grid's x extent (CUDA's limit on {@code gridDim.x}). */
    public static final long MAX_GRID_X = Integer.MAX_VALUE;

    private GemmKernel() {
    }

    /** The number of output tiles over all batches. */
    public static long tiles(int m, int n, int batch) {
        return Math.multiplyExact(Math.multiplyExact((long) ceil(m), ceil(n)), (long) batch);
    }

    /** One {@value #TILE}×{@value #TILE} block per output tile, at most {@link #MAX_GRID_X} blocks. */
    public static Launch launch(int m, int n, int batch) {
        return new Launch((int) Math.max(1, Math.min(MAX_GRID_X, tiles(m, n, batch))), 1, 1, TILE, TILE);
    }

    private static int ceil(int extent) {
        return (extent + TILE - 1) / TILE;
    }

    public static Kernel generate(String name, DType t, int m, int n, int k, int batch) {
        if (t == DType.BOOL) {
            throw new IllegalArgumentException("matmul of bool is not supported");
        }
        int es = t.byteSize();
        String mem = PtxWriter.memType(t), arith = Reg.arith(t);
        PtxWriter w = new PtxWriter();
        w.shared("tileA", (long) TILE * TILE * es).shared("tileB", (long) TILE * TILE * es);
        String a = w.param(0), b = w.param(1), c = w.param(2);
        String tx = w.reg(Reg.S32), ty = w.reg(Reg.S32), block = w.reg(Reg.S32), blocks = w.reg(Reg.S32);
        w.ins("mov.u32 " + tx + ", %tid.x").ins("mov.u32 " + ty + ", %tid.y").ins("mov.u32 " + block + ", %ctaid.x")
                .ins("mov.u32 " + blocks + ", %nctaid.x");
        String tile = w.reg(Reg.S64), stride = w.reg(Reg.S64);
        w.ins("cvt.u64.u32 " + tile + ", " + block).ins("cvt.u64.u32 " + stride + ", " + blocks);
        String[] tiles = Indexing.open(w, tile, tiles(m, n, batch));
        String tileCol = w.reg(Reg.S64), rest = w.reg(Reg.S64), tileRow = w.reg(Reg.S64), bz = w.reg(Reg.S64);
        w.ins("rem.u64 " + tileCol + ", " + tile + ", " + ceil(n));
        w.ins("div.u64 " + rest + ", " + tile + ", " + ceil(n));
        w.ins("rem.u64 " + tileRow + ", " + rest + ", " + ceil(m));
        w.ins("div.u64 " + bz + ", " + rest + ", " + ceil(m));
        String row = w.reg(Reg.S32), col = w.reg(Reg.S32);
        w.ins("cvt.u32.u64 " + row + ", " + tileRow).ins("mad.lo.s32 " + row + ", " + row + ", " + TILE + ", " + ty);
        w.ins("cvt.u32.u64 " + col + ", " + tileCol).ins("mad.lo.s32 " + col + ", " + col + ", " + TILE + ", " + tx);
        String[] base = new String[3];
        long[] matrixElements = {(long) m * k, (long) k * n, (long) m * n};
        String[] ptr = {a, b, c};
        for (int i = 0; i < 3; i++) {
            base[i] = w.reg(Reg.S64);
            w.ins("mad.lo.u64 " + base[i] + ", " + bz + ", " + matrixElements[i] * es + ", " + ptr[i]);
        }
        String sa = w.reg(Reg.S32), sb = w.reg(Reg.S32), mySlot = w.reg(Reg.S32);
        w.ins("mov.u32 " + sa + ", tileA").ins("mov.u32 " + sb + ", tileB");
        w.ins("mad.lo.s32 " + mySlot + ", " + ty + ", " + TILE + ", " + tx);
        w.ins("mul.lo.s32 " + mySlot + ", " + mySlot + ", " + es);
        String acc = w.reg(t), zero = Imm.of(t, 0);
        w.ins("mov." + arith + " " + acc + ", " + zero);
        String k0 = w.reg(Reg.S32), top = w.label(), end = w.label(), p = w.reg(Reg.PRED);
        w.ins("mov.u32 " + k0 + ", 0");
        w.at(top);
        w.ins("setp.ge.s32 " + p + ", " + k0 + ", " + k).ins("@" + p + " bra " + end);
        String ka = w.reg(Reg.S32), kb = w.reg(Reg.S32);
        w.ins("add.s32 " + ka + ", " + k0 + ", " + tx).ins("add.s32 " + kb + ", " + k0 + ", " + ty);
        stage(w, t, base[0], row, m, ka, k, sa, mySlot, p);
        stage(w, t, base[1], kb, k, col, n, sb, mySlot, p);
        w.ins("bar.sync 0");
        String rowA = w.reg(Reg.S32), colB = w.reg(Reg.S32);
        w.ins("mad.lo.s32 " + rowA + ", " + ty + ", " + TILE * es + ", " + sa);
        w.ins("mad.lo.s32 " + colB + ", " + tx + ", " + es + ", " + sb);
        for (int kk = 0; kk < TILE; kk++) {
            String x = w.reg(t), y = w.reg(t);
            w.ins("ld.shared." + mem + " " + x + ", [" + rowA + "+" + kk * es + "]");
            w.ins("ld.shared." + mem + " " + y + ", [" + colB + "+" + kk * TILE * es + "]");
            w.ins((t.isFloating() ? "fma.rn." : "mad.lo.") + arith + " " + acc + ", " + x + ", " + y + ", " + acc);
        }
        w.ins("bar.sync 0");
        w.ins("add.s32 " + k0 + ", " + k0 + ", " + TILE).ins("bra " + top);
        w.at(end);
        String skip = w.label();
        w.ins("setp.ge.s32 " + p + ", " + row + ", " + m).ins("setp.ge.or.s32 " + p + ", " + col + ", " + n + ", " + p);
        w.ins("@" + p + " bra " + skip);
        String index = w.reg(Reg.S64);
        w.ins("mul.wide.s32 " + index + ", " + row + ", " + n);
        String colWide = w.reg(Reg.S64);
        w.ins("cvt.s64.s32 " + colWide + ", " + col).ins("add.s64 " + index + ", " + index + ", " + colWide);
        w.store(t, w.address(base[2], index, es), acc);
        w.at(skip);
        Indexing.close(w, tile, stride, tiles);
        return new Kernel(name, w.entry(name, 3), 3, launch(m, n, batch));
    }

    /**
     * Stages element ({@code row}, {@code col}) of a row-major {@code rows × cols} matrix into this thread's slot of
     * {@code tile}, or zero when it lies outside the matrix.
     */
    private static void stage(PtxWriter w, DType t, String base, String row, int rows, String col, int cols,
                              String tile, String slot, String p) {
        int es = t.byteSize();
        String v = w.reg(t);
        w.ins("mov." + Reg.arith(t) + " " + v + ", " + Imm.of(t, 0));
        String skip = w.label();
        w.ins("setp.ge.s32 " + p + ", " + row + ", " + rows);
        w.ins("setp.ge.or.s32 " + p + ", " + col + ", " + cols + ", " + p);
        w.ins("@" + p + " bra " + skip);
        String index = w.reg(Reg.S64), colWide = w.reg(Reg.S64);
        w.ins("mul.wide.s32 " + index + ", " + row + ", " + cols);
        w.ins("cvt.s64.s32 " + colWide + ", " + col).ins("add.s64 " + index + ", " + index + ", " + colWide);
        w.ins("mov." + Reg.arith(t) + " " + v + ", " + w.load(t, w.address(base, index, es)));
        w.at(skip);
        String at = w.reg(Reg.S32);
        w.ins("add.s32 " + at + ", " + tile + ", " + slot);
        w.ins("st.shared." + PtxWriter.memType(t) + " [" + at + "], " + v);
    }
}
