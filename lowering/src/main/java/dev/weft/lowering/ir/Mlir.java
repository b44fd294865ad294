package dev.weft.lowering.ir;

import dev.weft.DType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** Spelling of MLIR literals. */
final class Mlir {
    private static final Pattern BARE_ID = Pattern.compile("[A-Za-z_][A-Za-z0-9_$.]*");
    private static final int LITERAL_LIMIT = 16;

    private Mlir() {
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                b.append(String.format("\\%02X", (int) c & 0xff));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }

    static String attrName(String name) {
        return BARE_ID.matcher(name).matches() ? name : quote(name);
    }

    /**
     * A float literal of MLIR type {@code type} that MLIR reads back exactly: decimal for finite values, else the
     * hex bits, which MLIR requires to be as wide as the type ({@code f32}: 8 digits, otherwise 16).
     */
    static String floatLiteral(double v, String type) {
        if (Double.isFinite(v)) {
            return type.equals("f32") ? floatLiteral32((float) v) : floatLiteral64(v);
        }
        return type.equals("f32") ? String.format("0x%08X", Float.floatToRawIntBits((float) v))
                : String.format("0x%016X", Double.doubleToRawLongBits(v));
    }

    private static String floatLiteral64(double v) {
        String s = Double.toString(v);
        return s.contains("E") ? String.format("%.17e", v) : s;
    }

    /**
     * {@code dense<...> : tensor<...>}: literal for small tensors, a hex blob otherwise (MLIR packs {@code i1}
     * blobs eight elements a byte, least significant bit first, where Weft stores one byte per element).
     */
    static String dense(TensorType t, MemorySegment data) {
        long n = t.shape().size();
        if (n > 1 && isSplat(data, t.dtype().byteSize(), n)) {
            return "dense<" + element(t.dtype(), data, 0) + "> : " + t.mlir();
        }
        if (n > LITERAL_LIMIT || n == 0) {
            byte[] bytes = t.dtype() == DType.BOOL ? packBits(data, n)
                    : data.asSlice(0, t.byteSize()).toArray(ValueLayout.JAVA_BYTE);
            return "dense<\"0x" + HexFormat.of().withUpperCase().formatHex(bytes) + "\"> : " + t.mlir();
        }
        StringBuilder b = new StringBuilder("dense<");
        if (t.shape().rank() > 0) {
            b.append('[');
        }
        for (long i = 0; i < n; i++) {
            b.append(i == 0 ? "" : ", ").append(element(t.dtype(), data, i));
        }
        if (t.shape().rank() > 0) {
            b.append(']');
        }
        return b.append("> : ").append(t.mlir()).toString();
    }

    private static byte[] packBits(MemorySegment data, long n) {
        byte[] packed = new byte[Math.toIntExact((n + 7) / 8)];
        for (long i = 0; i < n; i++) {
            if (data.get(ValueLayout.JAVA_BYTE, i) != 0) {
                packed[(int) (i / 8)] |= (byte) (1 << (i % 8));
            }
        }
        return packed;
    }

    /** True when all {@code n} elements of {@code size} bytes are bitwise equal. */
    private static boolean isSplat(MemorySegment data, int size, long n) {
        MemorySegment first = data.asSlice(0, size);
        for (long i = 1; i < n; i++) {
            if (MemorySegment.mismatch(first, 0, size, data, i * size, (i + 1) * size) >= 0) {
                return false;
            }
        }
        return true;
    }

    private static String element(DType dtype, MemorySegment d, long i) {
        return switch (dtype) {
            case F32 -> floatLiteral(d.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i), "f32");
            case F64 -> floatLiteral(d.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i), "f64");
            case I32 -> Integer.toString(d.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i));
            case I64 -> Long.toString(d.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i));
            case BOOL -> d.get(ValueLayout.JAVA_BYTE, i) != 0 ? "true" : "false";
        };
    }

    private static String floatLiteral32(float v) {
        String s = Float.toString(v);
        return s.contains("E") ? String.format("%.9e", v) : s;
    }
}
