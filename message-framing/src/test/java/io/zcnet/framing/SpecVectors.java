package io.zcnet.framing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The test vectors of {@code docs/wire-format.md} (section "Test vectors"): every fenced block whose info
 * string is {@code zcnet-frame} (or another kind), as its bytes (the {@code OFFSET  hex ...} lines, offsets
 * checked) and its {@code name = value} lines in order, comments ({@code #}) stripped. Read from the file
 * itself, so the document and the codec cannot drift apart.
 */
record SpecVectors(String kind, String name, byte[] bytes, Map<String, String> fields) {

    /** The specification, found from the module directory the tests run in. */
    static final Path DOCUMENT = Path.of("..", "docs", "wire-format.md");

    /** Every block of {@code kind} in the document, in document order. */
    static List<SpecVectors> read(String kind) {
        List<String> lines;
        try {
            lines = Files.readAllLines(DOCUMENT);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the specification at " + DOCUMENT.toAbsolutePath(), e);
        }
        List<SpecVectors> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).equals("```" + kind)) {
                int end = i + 1;
                while (!lines.get(end).equals("```")) {
                    end++;
                }
                blocks.add(parse(kind, lines.subList(i + 1, end), i + 1));
                i = end;
            }
        }
        return blocks;
    }

    private static SpecVectors parse(String kind, List<String> body, int firstLine) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        Map<String, String> fields = new LinkedHashMap<>();
        for (int i = 0; i < body.size(); i++) {
            String line = body.get(i).replaceFirst("\\s*#.*$", "");
            String where = DOCUMENT + ":" + (firstLine + i + 1);
            if (line.isBlank()) {
                continue;
            }
            if (line.matches("[0-9a-f]{4}  .*")) {
                if (Integer.parseInt(line.substring(0, 4), 16) != bytes.size()) {
                    throw new IllegalStateException(where + ": dump offset " + line.substring(0, 4) + " after "
                            + bytes.size() + " bytes");
                }
                bytes.writeBytes(HexFormat.of().parseHex(line.substring(6).replace(" ", "")));
            } else if (line.contains("=")) {
                String key = line.substring(0, line.indexOf('=')).strip();
                if (fields.put(key, line.substring(line.indexOf('=') + 1).strip()) != null) {
                    throw new IllegalStateException(where + ": " + key + " given twice");
                }
            } else {
                throw new IllegalStateException(where + ": neither a dump line nor name = value: " + line);
            }
        }
        String name = fields.remove("name");
        return new SpecVectors(kind, name == null ? kind + "@" + firstLine : name, bytes.toByteArray(), fields);
    }

    /** A decimal or {@code 0x} number of up to 64 unsigned bits, in decimal. */
    static String number(String text) {
        String t = text.toLowerCase(Locale.ROOT);
        BigInteger n = t.startsWith("0x") ? new BigInteger(t.substring(2), 16) : new BigInteger(t);
        if (n.signum() < 0 || n.bitLength() > 64) {
            throw new IllegalArgumentException(text + " is not an unsigned 64-bit number");
        }
        return n.toString();
    }

    /** {@link #number} as a long holding the unsigned bits. */
    static long bits(String text) {
        return new BigInteger(number(text)).longValue();
    }

    @Override
    public String toString() {
        return kind + " " + name;
    }
}
