package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import dev.weft.lowering.ir.StableHlo;

/**
 * {@code stablehlo.reduce} with an add, multiply, maximum or minimum body: one block of {@link Launch#THREADS}
 * threads per output element. Each thread folds a strided share of the reduced elements starting from the
 * operation's identity, a shared-memory tree combines the threads' partials, and thread 0 folds in the init value
 * and stores. Parameters: (operand, init scalar, result). Floating sums are therefore reassociated relative to the
 * CPU's row-major order.
 */
public final class ReduceKernels {
    private ReduceKernels() {
    }

    /** The kernel reducing {@code dims} over {@code axes} with the binary op {@code combiner} ({@link StableHlo}). */
    public static Kernel reduce(String name, String combiner, DType t, long[] dims, int[] axes) {
        if (t == DType.BOOL) {
            throw new IllegalArgumentException("reductions of bool are not supported");
        }
        long[] inStrides = Indexing.strides(dims);
        boolean[] reduced = new boolean[dims.length];
        for (int a : axes) {
            reduced[a] = true;
        }
        long[] keptDims = filter(dims, reduced, false), keptStrides = filter(inStrides, reduced, false);
        long[] redDims = filter(dims, reduced, true), redStrides = filter(inStrides, reduced, true);
        long outputs = Indexing.size(keptDims), count = Indexing.size(redDims);
        int es = t.byteSize();
        PtxWriter w = new PtxWriter();
        w.shared("partial", (long) Launch.THREADS * es);
        String in = w.param(0), init = w.param(1), out = w.param(2);
        String block = w.reg(Reg.S32), tid32 = w.reg(Reg.S32);
        w.ins("mov.u32 " + block + ", %ctaid.x").ins("mov.u32 " + tid32 + ", %tid.x");
        String o = w.reg(Reg.S64), r = w.reg(Reg.S64);
        w.ins("cvt.u64.u32 " + o + ", " + block).ins("cvt.u64.u32 " + r + ", " + tid32);
        String base = Indexing.dot(w, Indexing.coordinates(w, o, keptDims), keptStrides, 0);
        String acc = w.reg(t);
        w.ins("mov." + Reg.arith(t) + " " + acc + ", " + identity(combiner, t));
        String[] labels = Indexing.open(w, r, count);
        String at = Indexing.dot(w, Indexing.coordinates(w, r, redDims), redStrides, 0);
        w.ins("add.s64 " + at + ", " + at + ", " + base);
        move(w, t, acc, ScalarOps.binary(w, combiner, t, acc, w.load(t, w.address(in, at, es))));
        w.ins("add.s64 " + r + ", " + r + ", " + Launch.THREADS).ins("bra " + labels[0]).at(labels[1]);
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
            move(w, t, acc, ScalarOps.binary(w, combiner, t, acc, other));
            w.ins("st.shared." + PtxWriter.memType(t) + " [" + mine + "], " + acc);
            w.at(skip).ins("bar.sync 0");
        }
        String done = w.label();
        w.ins("setp.ne.u32 " + idle + ", " + tid32 + ", 0").ins("@" + idle + " bra " + done);
        String result = ScalarOps.binary(w, combiner, t, w.load(t, init), acc);
        w.store(t, w.address(out, o, es), result);
        w.at(done);
        return new Kernel(name, w.entry(name, 3), 3, Launch.blockPerOutput(outputs));
    }

    private static void move(PtxWriter w, DType t, String to, String from) {
        w.ins("mov." + Reg.arith(t) + " " + to + ", " + from);
    }

    /** The identity of {@code combiner} on {@code t} as an immediate. */
    static String identity(String combiner, DType t) {
        return switch (combiner) {
            case StableHlo.ADD -> Imm.of(t, 0);
            case StableHlo.MULTIPLY -> Imm.of(t, 1);
            case StableHlo.MAXIMUM -> switch (t) {
                case I32 -> Integer.toString(Integer.MIN_VALUE);
                case I64 -> Long.toString(Long.MIN_VALUE);
                default -> Imm.of(t, Double.NEGATIVE_INFINITY);
            };
            case StableHlo.MINIMUM -> switch (t) {
                case I32 -> Integer.toString(Integer.MAX_VALUE);
                case I64 -> Long.toString(Long.MAX_VALUE);
                default -> Imm.of(t, Double.POSITIVE_INFINITY);
            };
            default -> throw new IllegalArgumentException("no GPU reduction kernel for a " + combiner + " body");
        };
    }

    private static long[] filter(long[] v, boolean[] reduced, boolean keep) {
        return java.util.stream.IntStream.range(0, v.length).filter(i -> reduced[i] == keep).mapToLong(i -> v[i])
                .toArray();
    }
}
