package io.zcnet.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict parser for one flat JSON object per line (RFC 8259 with one level of nesting only): string,
 * integer, {@code true}/{@code false}/{@code null} values, and at the top level an array of such flat objects
 * (a SEND_PACKED frame's {@code records}), which becomes a {@link List} of maps; integers become {@link Long},
 * or {@link Unsigned64} between 2^63 and 2^64-1. Fractions, exponents, other arrays, nested objects, duplicate
 * keys and trailing text are rejected with {@link IllegalArgumentException}. For {@link WireDump}'s
 * {@code --encode}; stateless, thread-safe.
 */
final class FlatJson {

    /** An integer in 2^63 .. 2^64-1, kept as its two's complement bits. */
    record Unsigned64(long bits) {
        @Override
        public String toString() {
            return Long.toUnsignedString(bits);
        }
    }

    private final String text;
    private int at;

    private FlatJson(String text) {
        this.text = text;
    }

    static Map<String, Object> parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("no text");
        }
        FlatJson parser = new FlatJson(text);
        Map<String, Object> fields = parser.object(true);
        parser.skipSpace();
        if (parser.at != text.length()) {
            throw parser.error("text after the object");
        }
        return fields;
    }

    /** An object; at the {@code top} its values may be arrays of flat objects, below it they may not. */
    private Map<String, Object> object(boolean top) {
        Map<String, Object> fields = new LinkedHashMap<>();
        expect('{');
        if (peek() == '}') {
            at++;
        } else {
            while (true) {
                String key = string();
                expect(':');
                Object value = top && peek() == '[' ? array() : value();
                if (fields.containsKey(key)) {
                    throw error("duplicate key \"" + key + "\"");
                }
                fields.put(key, value);
                char c = next();
                if (c == '}') {
                    break;
                }
                if (c != ',') {
                    throw error("expected ',' or '}'");
                }
            }
        }
        return fields;
    }

    /** An array of flat objects. */
    private List<Map<String, Object>> array() {
        List<Map<String, Object>> elements = new ArrayList<>();
        expect('[');
        if (peek() == ']') {
            at++;
            return elements;
        }
        while (true) {
            if (peek() != '{') {
                throw error("only objects in an array");
            }
            elements.add(object(false));
            char c = next();
            if (c == ']') {
                return elements;
            }
            if (c != ',') {
                throw error("expected ',' or ']'");
            }
        }
    }

    private Object value() {
        char c = peek();
        if (c == '"') {
            return string();
        }
        if (c == '-' || (c >= '0' && c <= '9')) {
            return integer();
        }
        if (text.startsWith("true", at)) {
            at += 4;
            return Boolean.TRUE;
        }
        if (text.startsWith("false", at)) {
            at += 5;
            return Boolean.FALSE;
        }
        if (text.startsWith("null", at)) {
            at += 4;
            return null;
        }
        throw error("unsupported value (only strings, integers, true, false, null; at the top, arrays of objects)");
    }

    private Object integer() {
        int start = at;
        if (text.charAt(at) == '-') {
            at++;
        }
        int digits = at;
        while (at < text.length() && Character.isDigit(text.charAt(at)) && text.charAt(at) < 128) {
            at++;
        }
        if (at == digits || (text.charAt(digits) == '0' && at - digits > 1)) {
            throw error("malformed integer");
        }
        if (at < text.length() && (text.charAt(at) == '.' || text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
            throw error("only integers are supported");
        }
        String s = text.substring(start, at);
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException tooBig) {
            try {
                return new Unsigned64(Long.parseUnsignedLong(s));
            } catch (NumberFormatException e) {
                throw error("integer out of range: " + s);
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (at >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return sb.toString();
            }
            if (c < 0x20) {
                throw error("control character in string");
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (at >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(at++);
            switch (e) {
                case '"', '\\', '/' -> sb.append(e);
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'n' -> sb.append('\n');
                case 'r' -> sb.append('\r');
                case 't' -> sb.append('\t');
                case 'u' -> {
                    if (at + 4 > text.length()) {
                        throw error("short \\u escape");
                    }
                    try {
                        sb.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    } catch (NumberFormatException ex) {
                        throw error("bad \\u escape");
                    }
                    at += 4;
                }
                default -> throw error("bad escape \\" + e);
            }
        }
    }

    private void expect(char c) {
        if (next() != c) {
            throw error("expected '" + c + "'");
        }
    }

    private char next() {
        char c = peek();
        at++;
        return c;
    }

    private char peek() {
        skipSpace();
        if (at >= text.length()) {
            throw error("unexpected end of line");
        }
        return text.charAt(at);
    }

    private void skipSpace() {
        while (at < text.length() && (text.charAt(at) == ' ' || text.charAt(at) == '\t' || text.charAt(at) == '\r')) {
            at++;
        }
    }

    private IllegalArgumentException error(String message) {
        return new IllegalArgumentException(message + " at column " + (at + 1));
    }
}
