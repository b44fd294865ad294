package dev.weft.backends.json;

import java.util.List;
import java.util.Map;

/** Writes JSON text: strings quoted and escaped, and the values {@link JsonParser} returns. */
public final class JsonText {
    private JsonText() {
    }

    /** Appends {@code s} as a JSON string. */
    public static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /**
     * Appends {@code value}: a {@link Map} with string keys, a {@link List}, a {@link String}, a {@link Number}
     * (whole doubles without a fraction), a {@link Boolean} or {@code null}.
     */
    public static void write(Object value, StringBuilder out) {
        switch (value) {
            case null -> out.append("null");
            case String s -> quote(s, out);
            case Boolean b -> out.append(b);
            case Double d when d == Math.rint(d) && Math.abs(d) < 1e15 -> out.append(d.longValue());
            case Double d when Double.isFinite(d) -> out.append(d);
            case Double d -> throw new IllegalArgumentException("not a JSON number: " + d);
            case Number n -> out.append(n);
            case Map<?, ?> m -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    quote((String) e.getKey(), out);
                    out.append(':');
                    write(e.getValue(), out);
                }
                out.append('}');
            }
            case List<?> l -> {
                out.append('[');
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    write(l.get(i), out);
                }
                out.append(']');
            }
            default -> throw new IllegalArgumentException("not a JSON value: " + value.getClass().getName());
        }
    }
}
