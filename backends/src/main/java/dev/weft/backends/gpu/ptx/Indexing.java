package dev.weft.backends.gpu.ptx;

/** Grid-stride loops and row-major index arithmetic with compile-time shapes. */
final class Indexing {
    private Indexing() {
    }

    /** The first element index of this thread and the grid's stride, as 64-bit registers {i, stride}. */
    static String[] gridStride(PtxWriter w) {
        String block = w.reg(Reg.S32), threads = w.reg(Reg.S32), tid = w.reg(Reg.S32), blocks = w.reg(Reg.S32);
        w.ins("mov.u32 " + block + ", %ctaid.x").ins("mov.u32 " + threads + ", %ntid.x")
                .ins("mov.u32 " + tid + ", %tid.x").ins("mov.u32 " + blocks + ", %nctaid.x");
        String i = w.reg(Reg.S64), t = w.reg(Reg.S64), stride = w.reg(Reg.S64);
        w.ins("mul.wide.u32 " + i + ", " + block + ", " + threads);
        w.ins("cvt.u64.u32 " + t + ", " + tid);
        w.ins("add.s64 " + i + ", " + i + ", " + t);
        w.ins("mul.wide.u32 " + stride + ", " + threads + ", " + blocks);
        return new String[] {i, stride};
    }

    /**
     * Opens {@code for (i; i < n; i += stride)}: emits the loop head and returns the labels {top, end}; the caller
     * writes the body and calls {@link #close}.
     */
    static String[] open(PtxWriter w, String i, long n) {
        String top = w.label(), end = w.label(), p = w.reg(Reg.PRED);
        w.at(top);
        w.ins("setp.ge.u64 " + p + ", " + i + ", " + n).ins("@" + p + " bra " + end);
        return new String[] {top, end};
    }

    static void close(PtxWriter w, String i, String stride, String[] labels) {
        w.ins("add.s64 " + i + ", " + i + ", " + stride).ins("bra " + labels[0]).at(labels[1]);
    }

    /** The coordinates of row-major index {@code index} in {@code dims}, as 64-bit registers. */
    static String[] coordinates(PtxWriter w, String index, long[] dims) {
        String[] c = new String[dims.length];
        String rest = index;
        for (int d = dims.length - 1; d >= 0; d--) {
            if (d == 0) {
                c[d] = rest;
                break;
            }
            c[d] = w.reg(Reg.S64);
            w.ins("rem.u64 " + c[d] + ", " + rest + ", " + dims[d]);
            String next = w.reg(Reg.S64);
            w.ins("div.u64 " + next + ", " + rest + ", " + dims[d]);
            rest = next;
        }
        return c;
    }

    /** {@code base + Σ c[d]·strides[d]} into a fresh register; zero strides are skipped. */
    static String dot(PtxWriter w, String[] c, long[] strides, long base) {
        String r = w.reg(Reg.S64);
        w.ins("mov.u64 " + r + ", " + base);
        for (int d = 0; d < c.length; d++) {
            if (strides[d] != 0) {
                w.ins("mad.lo.s64 " + r + ", " + c[d] + ", " + strides[d] + ", " + r);
            }
        }
        return r;
    }

    /** Row-major strides of {@code dims}, in elements. */
    static long[] strides(long[] dims) {
        long[] s = new long[dims.length];
        long acc = 1;
        for (int d = dims.length - 1; d >= 0; d--) {
            s[d] = acc;
            acc *= dims[d];
        }
        return s;
    }

    static long size(long[] dims) {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }
}
