package dev.weft.backends.gpu.ptx;

import dev.weft.DType;

/** PTX immediate operands: floats in their exact hexadecimal forms ({@code 0f3F800000}, {@code 0d3FF0...}). */
final class Imm {
    private Imm() {
    }

    /** {@code v} as an immediate of {@code t} (rounded to f32 for F32, truncated for integers). */
    static String of(DType t, double v) {
        return switch (t) {
            case F32 -> String.format("0f%08X", Float.floatToRawIntBits((float) v));
            case F64 -> String.format("0d%016X", Double.doubleToRawLongBits(v));
            case I32, I64, BOOL -> Long.toString((long) v);
        };
    }
}
