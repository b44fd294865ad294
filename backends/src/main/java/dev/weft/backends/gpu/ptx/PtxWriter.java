package dev.weft.backends.gpu.ptx;

import dev.weft.DType;
import java.util.EnumMap;
import java.util.Map;

/**
 * Writes the body of one PTX entry: allocates virtual registers per {@link Reg} class (ptxas does the real
 * allocation), numbers labels, and assembles the entry with its parameter list and register declarations.
 */
public final class PtxWriter {
    private final Map<Reg, Integer> counts = new EnumMap<>(Reg.class);
    private final StringBuilder body = new StringBuilder();
    private int labels;

    /** A fresh register of class {@code r}. */
    public String reg(Reg r) {
        int n = counts.merge(r, 1, Integer::sum);
        return r.prefix() + n;
    }

    /** A fresh register holding one element of {@code t}. */
    public String reg(DType t) {
        return reg(Reg.of(t));
    }

    /** A fresh label name. */
    public String label() {
        return "L" + ++labels;
    }

    /** Appends one instruction; {@code ;} is added. */
    public PtxWriter ins(String instruction) {
        body.append("    ").append(instruction).append(";\n");
        return this;
    }

    /** Appends a label definition. */
    public PtxWriter at(String label) {
        body.append(label).append(":\n");
        return this;
    }

    /** Appends a shared-memory array declaration of {@code bytes} bytes aligned to 8. */
    public PtxWriter shared(String name, long bytes) {
        body.insert(0, "    .shared .align 8 .b8 " + name + "[" + bytes + "];\n");
        return this;
    }

    /**
     * The entry {@code name} taking {@code pointerParams} {@code .u64} parameters named {@code p0, p1, ...}, with
     * the instructions written so far.
     */
    public String entry(String name, int pointerParams) {
        StringBuilder b = new StringBuilder(".visible .entry ").append(name).append("(");
        for (int i = 0; i < pointerParams; i++) {
            b.append(i == 0 ? "\n    " : ",\n    ").append(".param .u64 p").append(i);
        }
        b.append(")\n{\n");
        for (Map.Entry<Reg, Integer> e : counts.entrySet()) {
            b.append("    .reg .").append(e.getKey().declType()).append(' ').append(e.getKey().prefix())
                    .append('<').append(e.getValue() + 1).append(">;\n");
        }
        return b.append(body).append("    ret;\n}\n").toString();
    }

    /** Loads kernel parameter {@code i} as a global address into a fresh 64-bit register. */
    public String param(int i) {
        String r = reg(Reg.S64);
        ins("ld.param.u64 " + r + ", [p" + i + "]");
        ins("cvta.to.global.u64 " + r + ", " + r);
        return r;
    }

    /** Loads the element of dtype {@code t} at address register {@code addr} into a fresh register. */
    public String load(DType t, String addr) {
        if (t == DType.BOOL) {
            String h = reg(Reg.U16);
            ins("ld.global.u8 " + h + ", [" + addr + "]");
            String p = reg(Reg.PRED);
            ins("setp.ne.u16 " + p + ", " + h + ", 0");
            return p;
        }
        String r = reg(t);
        ins("ld.global." + memType(t) + " " + r + ", [" + addr + "]");
        return r;
    }

    /** Stores register {@code value} holding an element of {@code t} at address register {@code addr}. */
    public void store(DType t, String addr, String value) {
        if (t == DType.BOOL) {
            String h = reg(Reg.U16);
            ins("selp.u16 " + h + ", 1, 0, " + value);
            ins("st.global.u8 [" + addr + "], " + h);
            return;
        }
        ins("st.global." + memType(t) + " [" + addr + "], " + value);
    }

    /** {@code base + index * bytes} into a fresh 64-bit register. */
    public String address(String base, String index, int bytes) {
        String r = reg(Reg.S64);
        ins("mad.lo.s64 " + r + ", " + index + ", " + bytes + ", " + base);
        return r;
    }

    /** The memory type of one element of {@code t} in loads and stores. */
    static String memType(DType t) {
        return switch (t) {
            case F32 -> "f32";
            case F64 -> "f64";
            case I32 -> "u32";
            case I64 -> "u64";
            case BOOL -> "u8";
        };
    }
}
