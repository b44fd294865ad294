package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import dev.weft.prim.ElementwiseOp;
import java.util.List;

/**
 * {@code stablehlo.reduce} whose body is one reducible op ({@link ElementwiseOp#isReducible}). Each output's
 * reduced elements are split among {@link #blocksPerOutput} blocks of {@link Launch#THREADS} threads: each thread folds a strided share
 * starting from the operation's identity and a shared-memory tree combines the block's threads. With one block per
 * output, thread 0 folds in the init value and stores the result (one kernel: operand, init scalar, result). With
 * several, a first kernel (operand, partials) stores one partial per block and a second one-block-per-output
 * kernel (partials, init scalar, result) reduces them the same way. The split depends only on the shapes, so the
 * order of a floating sum, reassociated relative to the CPU's row-major order, is the same on every run and device.
 */
public final class ReduceKernels {
    /** Blocks a reduction aims to keep busy: several per SM on current GPUs (an H200 has 132 SMs). */
    public static final int TARGET_BLOCKS = 1024;
    /** The fewest elements a block of a split reduction folds: 8 per thread, so the partials stay few. */
    public static final long MIN_BLOCK_ELEMENTS = 8L * Launch.THREADS;

    private ReduceKernels() {
    }

    /** The kernels of one reduction in launch order, and the partials (elements) the first leaves for the second. */
    public record Reduction(List<Kernel> passes, long partials) {
    }

    /**
     * Blocks that share each of {@code outputs} reductions of {@code count} elements: 1 when the outputs alone
     * fill {@link #TARGET_BLOCKS}, else enough to approach it, without giving a block fewer than
     * {@link #MIN_BLOCK_ELEMENTS} elements.
     */
    public static int blocksPerOutput(long outputs, long count) {
        if (outputs >= TARGET_BLOCKS) {
            return 1;
        }
        long wanted = (TARGET_BLOCKS + outputs - 1) / Math.max(1, outputs);
        long useful = (count + MIN_BLOCK_ELEMENTS - 1) / MIN_BLOCK_ELEMENTS;
        return (int) Math.max(1, Math.min(wanted, useful));
    }

    /** The kernels reducing {@code dims} over {@code axes}, folding with the reducible op {@code combiner}. */
    public static Reduction reduce(String name, ElementwiseOp combiner, DType t, long[] dims, int[] axes) {
        if (t == DType.BOOL) {
            throw new IllegalArgumentException("reductions of bool are not supported");
        }
        boolean[] reduced = new boolean[dims.length];
        for (int a : axes) {
            reduced[a] = true;
        }
        long outputs = Indexing.size(filter(dims, reduced, false)), count = Indexing.size(filter(dims, reduced, true));
        int split = blocksPerOutput(outputs, count);
        if (split == 1) {
            return new Reduction(List.of(pass(name, combiner, t, dims, reduced, 1, true)), 0);
        }
        Kernel partial = pass(name + "_partial", combiner, t, dims, reduced, split, false);
        Kernel finish = pass(name, combiner, t, new long[] {outputs, split}, new boolean[] {false, true}, 1, true);
        return new Reduction(List.of(partial, finish), outputs * split);
    }

    /**
     * One pass: block {@code o·split + g} folds the elements {@code g·THREADS + tid + j·split·THREADS} of output
     * {@code o}'s reduced elements (row-major over the reduced axes) and stores at that block's index, with the
     * init value folded in when {@code withInit}. Parameters: (operand, init, result) or (operand, result).
     */
    private static Kernel pass(String name, ElementwiseOp combiner, DType t, long[] dims, boolean[] reduced, int split,
                               boolean withInit) {
        long[] inStrides = Indexing.strides(dims);
        long[] keptDims = filter(dims, reduced, false), keptStrides = filter(inStrides, reduced, false);
        long[] redDims = filter(dims, reduced, true), redStrides = filter(inStrides, reduced, true);
        long outputs = Indexing.size(keptDims), count = Indexing.size(redDims);
        int es = t.byteSize();
        PtxWriter w = new PtxWriter();
        w.shared("partial", (long) Launch.THREADS * es);
        String in = w.param(0), init = withInit ? w.param(1) : null, out = w.param(withInit ? 2 : 1);
        String block32 = w.reg(Reg.S32), tid32 = w.reg(Reg.S32);
        w.ins("mov.u32 " + block32 + ", %ctaid.x").ins("mov.u32 " + tid32 + ", %tid.x");
        String block = w.reg(Reg.S64), o = w.reg(Reg.S64), r = w.reg(Reg.S64);
        w.ins("cvt.u64.u32 " + block + ", " + block32).ins("cvt.u64.u32 " + r + ", " + tid32);
        if (split == 1) {
            w.ins("mov.u64 " + o + ", " + block);
        } else {
            w.ins("div.u64 " + o + ", " + block + ", " + split);
            String g = w.reg(Reg.S64);
            w.ins("rem.u64 " + g + ", " + block + ", " + split);
            w.ins("mad.lo.u64 " + r + ", " + g + ", " + Launch.THREADS + ", " + r);
        }
        String base = Indexing.dot(w, Indexing.coordinates(w, o, keptDims), keptStrides, 0);
        String acc = w.reg(t);
        w.ins("mov." + Reg.arith(t) + " " + acc + ", " + identity(combiner, t));
        String[] labels = Indexing.open(w, r, count);
        String at = Indexing.dot(w, Indexing.coordinates(w, r, redDims), redStrides, 0);
        w.ins("add.s64 " + at + ", " + at + ", " + base);
        move(w, t, acc, ScalarOps.emit(w, combiner, t, t, List.of(acc, w.load(t, w.address(in, at, es)))));
        w.ins("add.s64 " + r + ", " + r + ", " + (long) split * Launch.THREADS).ins("bra " + labels[0])
                .at(labels[1]);
        String mine = w.reg(Reg.S32), sharedBase = w.reg(Reg.S32);
        w.ins("mov.u32 " + sharedBase + ", partial");
        w.ins("mad.lo.s32 " + mine + ", " + tid32 + ", " + es + ", " + sharedBase);
        w.ins("st.shared." + PtxWriter.memType(t) + " [" + mine + "], " + acc);
        w.ins("bar.sync 0");
        String idle = w.reg(Reg.PRED);
        for (int half = Launch.THREADS / 2; half >= 1; half /= 2) {
            String skip = w.label();
            w.ins("setp.ge.u32 " + idle + ", " + tid32 + ", " + half).ins("@" + idle + " bra " + skip);
            String other = w.reg(t);
            w.ins("ld.shared." + PtxWriter.memType(t) + " " + other + ", [" + mine + "+" + half * es + "]");
            move(w, t, acc, ScalarOps.emit(w, combiner, t, t, List.of(acc, other)));
            w.ins("st.shared." + PtxWriter.memType(t) + " [" + mine + "], " + acc);
            w.at(skip).ins("bar.sync 0");
        }
        String done = w.label();
        w.ins("setp.ne.u32 " + idle + ", " + tid32 + ", 0").ins("@" + idle + " bra " + done);
        String result = withInit ? ScalarOps.emit(w, combiner, t, t, List.of(w.load(t, init), acc)) : acc;
        w.store(t, w.address(out, block, es), result);
        w.at(done);
        int params = withInit ? 3 : 2;
        return new Kernel(name, w.entry(name, params), params, Launch.blockPerOutput(outputs * split));
    }

    private static void move(PtxWriter w, DType t, String to, String from) {
        w.ins("mov." + Reg.arith(t) + " " + to + ", " + from);
    }

    /** The identity of {@code combiner} on {@code t} as an immediate. */
    static String identity(ElementwiseOp combiner, DType t) {
        Number identity = combiner.identity(t);
        return identity instanceof Long l ? Long.toString(l) : Imm.of(t, identity.doubleValue());
    }

    private static long[] filter(long[] v, boolean[] reduced, boolean keep) {
        return java.util.stream.IntStream.range(0, v.length).filter(i -> reduced[i] == keep).mapToLong(i -> v[i])
                .toArray();
    }
}
