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

    /** A float literal MLIR reads back exactly: decimal when it round-trips, else hex bits. */
    static String floatLiteral(double v) {
        if (Double.isFinite(v)) {
            String s = Double.toString(v);
            return s.contains("E") ? String.format("%.17e", v) : s;
        }
        return String.format("0x%016X", Double.doubleToRawLongBits(v));
    }

    /** {@code dense<...> : tensor<...>}: literal for small tensors, a hex blob otherwise. */
    static String dense(TensorType t, MemorySegment data) {
        long n = t.shape().size();
        if (n > LITERAL_LIMIT || n == 0) {
            byte[] bytes = data.asSlice(0, t.byteSize()).toArray(ValueLayout.JAVA_BYTE);
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

    private static String element(DType dtype, MemorySegment d, long i) {
        return switch (dtype) {
            case F32 -> floatElement(d.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i),
                    Float.floatToRawIntBits(d.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i)), 8);
            case F64 -> floatElement(d.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i),
                    Double.doubleToRawLongBits(d.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i)), 16);
            case I32 -> Integer.toString(d.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i));
            case I64 -> Long.toString(d.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i));
            case BOOL -> d.get(ValueLayout.JAVA_BYTE, i) != 0 ? "true" : "false";
        };
    }

    private static String floatElement(double v, long bits, int hexDigits) {
        if (!Double.isFinite(v)) {
            return String.format("0x%0" + hexDigits + "X", bits);
        }
        return hexDigits == 8 ? floatLiteral32((float) v) : floatLiteral(v);
    }

    private static String floatLiteral32(float v) {
        String s = Float.toString(v);
        return s.contains("E") ? String.format("%.9e", v) : s;
    }
}
