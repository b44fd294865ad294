package dev.weft.backends.comm.flight;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One flat JSON object per line, as flight files hold them: string keys, values that are strings, whole numbers
 * or {@code null}. Written and read here to need no JSON library.
 */
final class JsonLine {
    private JsonLine() {
    }

    /** {@code fields} as one line of JSON; values are {@link String}s, {@link Number}s (whole) or null. */
    static String write(Map<String, ?> fields) {
        StringBuilder sb = new StringBuilder("{");
        fields.forEach((k, v) -> {
            if (sb.length() > 1) {
                sb.append(',');
            }
            string(sb, k);
            sb.append(':');
            switch (v) {
                case null -> sb.append("null");
                case Number n -> sb.append(n.longValue());
                default -> string(sb, v.toString());
            }
        });
        return sb.append('}').toString();
    }

    /**
     * The fields of one line: strings as {@link String}, numbers as {@link Long}, {@code null} as null.
     *
     * @throws IllegalArgumentException if the line is not such an object
     */
    static Map<String, Object> read(String line) {
        Parser p = new Parser(line);
        Map<String, Object> fields = new LinkedHashMap<>();
        p.expect('{');
        if (!p.take('}')) {
            do {
                String key = p.string();
                p.expect(':');
                fields.put(key, p.value());
            } while (p.take(','));
            p.expect('}');
        }
        p.end();
        return fields;
    }

    private static void string(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                case '\r' -> sb.append("\\r");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    private static final class Parser {
        private final String s;
        private int i;

        Parser(String s) {
            this.s = s;
        }

        Object value() {
            skip();
            if (i < s.length() && s.charAt(i) == '"') {
                return string();
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            int from = i;
            if (i < s.length() && s.charAt(i) == '-') {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            try {
                return Long.parseLong(s.substring(from, i));
            } catch (NumberFormatException e) {
                throw error("a string, a whole number or null");
            }
        }

        String string() {
            expect('"');
            StringBuilder sb = new StringBuilder();
            while (i < s.length() && s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                if (i >= s.length()) {
                    throw error("an escape");
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> sb.append('\n');
                    case 't' -> sb.append('\t');
                    case 'r' -> sb.append('\r');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'u' -> {
                        if (i + 4 > s.length()) {
                            throw error("four hex digits");
                        }
                        sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> sb.append(e);
                }
            }
            expect('"');
            return sb.toString();
        }

        boolean take(char c) {
            skip();
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        void expect(char c) {
            if (!take(c)) {
                throw error("'" + c + "'");
            }
        }

        void end() {
            skip();
            if (i != s.length()) {
                throw error("the end of the line");
            }
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private IllegalArgumentException error(String expected) {
            return new IllegalArgumentException("expected " + expected + " at column " + (i + 1));
        }
    }
}
