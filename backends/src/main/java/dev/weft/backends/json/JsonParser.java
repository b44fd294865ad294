package dev.weft.backends.json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses JSON text (RFC 8259) into {@link Map}s (keys in order), {@link List}s, {@link String}s, {@link Double}s,
 * {@link Boolean}s and {@code null}. Malformed text, and arrays and objects nested deeper than {@value #MAX_DEPTH}
 * (which would take the parser's stack), raise an {@link IllegalArgumentException} naming the line and column.
 */
public final class JsonParser {
    /** The deepest nesting of arrays and objects accepted; Weft's own files nest a few levels. */
    public static final int MAX_DEPTH = 512;

    private final String text;
    private int pos;
    private int depth;

    private JsonParser(String text) {
        this.text = text;
    }

    /** The one value {@code text} holds. */
    public static Object parse(String text) {
        JsonParser p = new JsonParser(text);
        Object v = p.value();
        p.skipSpace();
        if (p.pos != text.length()) {
            throw p.error("text after the value");
        }
        return v;
    }

    private Object value() {
        skipSpace();
        if (pos >= text.length()) {
            throw error("end of text where a value was expected");
        }
        char c = text.charAt(pos);
        if ((c == '{' || c == '[') && depth == MAX_DEPTH) {
            throw error("arrays and objects nested deeper than " + MAX_DEPTH);
        }
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> number();
        };
    }

    private Map<String, Object> object() {
        Map<String, Object> m = new LinkedHashMap<>();
        pos++;
        skipSpace();
        if (peek() == '}') {
            pos++;
            return m;
        }
        depth++;
        while (true) {
            skipSpace();
            if (peek() != '"') {
                throw error("expected a string key");
            }
            String key = string();
            skipSpace();
            expect(':');
            m.put(key, value());
            skipSpace();
            if (peek() == ',') {
                pos++;
            } else {
                expect('}');
                depth--;
                return m;
            }
        }
    }

    private List<Object> array() {
        List<Object> l = new ArrayList<>();
        pos++;
        skipSpace();
        if (peek() == ']') {
            pos++;
            return l;
        }
        depth++;
        while (true) {
            l.add(value());
            skipSpace();
            if (peek() == ',') {
                pos++;
            } else {
                expect(']');
                depth--;
                return l;
            }
        }
    }

    private String string() {
        pos++;
        StringBuilder s = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return s.toString();
            }
            if (c != '\\') {
                s.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"', '\\', '/' -> s.append(e);
                case 'b' -> s.append('\b');
                case 'f' -> s.append('\f');
                case 'n' -> s.append('\n');
                case 'r' -> s.append('\r');
                case 't' -> s.append('\t');
                case 'u' -> {
                    if (pos + 4 > text.length() || !text.substring(pos, pos + 4).matches("[0-9a-fA-F]{4}")) {
                        throw error("a \\u escape needs four hexadecimal digits");
                    }
                    s.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                }
                default -> throw error("bad escape \\" + e);
            }
        }
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("expected " + word);
        }
        pos += word.length();
        return value;
    }

    private Double number() {
        int start = pos;
        while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        if (start == pos) {
            char c = text.charAt(pos);
            throw error("unexpected character " + (c >= ' ' && c < 0x7f ? "'" + c + "'"
                    : String.format("U+%04X", (int) c)));
        }
        try {
            return Double.valueOf(text.substring(start, pos));
        } catch (NumberFormatException e) {
            throw error("bad number " + text.substring(start, pos));
        }
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private void skipSpace() {
        while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
            pos++;
        }
    }

    /** An error at the current position, as {@code bad JSON at line 3, column 7: what}. */
    private IllegalArgumentException error(String what) {
        int line = 1;
        int lineStart = 0;
        for (int i = 0; i < Math.min(pos, text.length()); i++) {
            if (text.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return new IllegalArgumentException("bad JSON at line " + line + ", column " + (pos - lineStart + 1) + ": "
                + what);
    }
}
