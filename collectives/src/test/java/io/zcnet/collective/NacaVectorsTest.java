package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The NACA test vectors of docs/wire-format.md, section 20.5 ({@code zcnet-naca} blocks), read from the document:
 * each message's header is decoded with {@link NacaHeader} and compared field by field, validated, written again
 * from its fields and compared byte for byte; a JOIN's proof is recomputed and an ACCEPT's grant read.
 */
class NacaVectorsTest {

    private static final Path DOCUMENT = Path.of("..", "docs", "wire-format.md");

    /** One block as the document gives it. */
    private record Vector(String name, byte[] bytes, Map<String, String> fields) {
        @Override
        public String toString() {
            return name;
        }

        String get(String key) {
            String v = fields.get(key);
            assertNotNull(v, name + " gives no " + key);
            return v;
        }

        long number(String key) {
            String v = get(key);
            return v.startsWith("0x") ? Long.parseLong(v.substring(2), 16) : Long.parseLong(v);
        }
    }

    private static List<Vector> vectors() throws IOException {
        List<Vector> found = new ArrayList<>();
        Vector open = null;
        StringBuilder hex = null;
        for (String raw : Files.readAllLines(DOCUMENT)) {
            if (raw.equals("```zcnet-naca")) {
                open = new Vector(null, null, new TreeMap<>());
                hex = new StringBuilder();
            } else if (open != null && raw.equals("```")) {
                Map<String, String> f = open.fields();
                found.add(new Vector(f.remove("name"), HexFormat.of().parseHex(hex), f));
                open = null;
            } else if (open != null) {
                String line = raw.replaceFirst("\\s*#.*$", "");
                if (line.matches("[0-9a-f]{4}  .*")) {
                    assertEquals(hex.length() / 2, Integer.parseInt(line.substring(0, 4), 16), "offset of " + line);
                    hex.append(line.substring(6).replace(" ", ""));
                } else if (line.contains(" = ")) {
                    open.fields().put(line.substring(0, line.indexOf(" = ")).strip(),
                            line.substring(line.indexOf(" = ") + 3).strip());
                }
            }
        }
        return found;
    }

    @Test
    void theDocumentHoldsAVectorOfEveryType() throws IOException {
        List<String> types = vectors().stream().map(v -> v.get("type")).distinct().sorted().toList();
        assertEquals(List.of("ACCEPT", "CHALLENGE", "CHUNK", "JOIN", "REFUSE", "RESULT"), types);
    }

    @TestFactory
    Stream<DynamicTest> everyVectorDecodesValidatesAndEncodes() throws IOException {
        return vectors().stream().map(v -> DynamicTest.dynamicTest(v.name(), () -> check(v)));
    }

    private static void check(Vector v) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocate(v.bytes().length);
            MemorySegment.copy(v.bytes(), 0, m, ValueLayout.JAVA_BYTE, 0, v.bytes().length);
            NacaHeader h = new NacaHeader().wrap(m, 0);
            assertEquals(v.get("type"), NacaHeader.typeName(h.type()));
            assertEquals(v.number("flags"), h.flags());
            assertEquals(v.number("job"), h.job());
            assertEquals(v.number("collective"), h.collective());
            assertEquals(v.number("dtype"), h.dataType());
            assertEquals(v.number("redop"), h.reduction());
            assertEquals(v.number("ranks"), h.ranks());
            assertEquals(v.number("rank"), h.rank());
            assertEquals(v.number("slot"), h.slot());
            assertEquals(v.number("sequence"), h.sequence());
            assertEquals(v.number("length"), h.length());
            assertEquals(v.number("operation"), h.operation());
            String refusal = h.validate(v.bytes().length);
            if (v.get("validation").equals("OK")) {
                assertNull(refusal, v.name());
            } else {
                assertNotNull(refusal, v.name() + " should be refused");
                assertTrue(refusal.contains(v.get("validation")), refusal);
            }

            MemorySegment again = arena.allocate(NacaHeader.LENGTH);
            new NacaHeader().wrap(again, 0).write(h.type(), h.flags(), h.job(), h.collective(), h.dataType(),
                    h.reduction(), h.ranks(), h.rank(), h.slot(), h.sequence(), h.length(), h.operation());
            assertArrayEquals(m.asSlice(0, NacaHeader.LENGTH).toArray(ValueLayout.JAVA_BYTE),
                    again.toArray(ValueLayout.JAVA_BYTE), "the header written again from its fields");

            long body = NacaHeader.LENGTH;
            switch (h.type()) {
                case NacaHeader.JOIN -> {
                    assertEquals(v.number("slots"), NacaJoin.slots(m, body));
                    assertEquals(v.number("chunk_bytes"), NacaJoin.chunkBytes(m, body));
                    assertEquals(v.number("result_key"), Integer.toUnsignedLong(NacaJoin.resultKey(m, body)));
                    byte[] secret = HexFormat.of().parseHex(v.get("secret"));
                    byte[] nonce = HexFormat.of().parseHex(v.get("nonce"));
                    assertNull(NacaJoin.check(m, 0, secret, nonce), "the proof recomputed");
                    byte[] other = secret.clone();
                    other[0] ^= 1;
                    assertNotNull(NacaJoin.check(m, 0, other, nonce), "another secret proves nothing");
                    MemorySegment rewritten = arena.allocate(v.bytes().length);
                    MemorySegment.copy(m, 0, rewritten, 0, NacaHeader.LENGTH);
                    NacaJoin.write(rewritten, 0, (int) v.number("slots"), (int) v.number("chunk_bytes"),
                            NacaJoin.resultKey(m, body), secret, nonce);
                    assertArrayEquals(v.bytes(), rewritten.toArray(ValueLayout.JAVA_BYTE), "the JOIN written again");
                }
                case NacaHeader.ACCEPT -> {
                    NacaGrant.Granted g = NacaGrant.read(m, body, 64, NacaHeader.MAX_CHUNK_BYTES);
                    assertEquals(v.number("slots"), g.slots());
                    assertEquals(v.number("chunk_bytes"), g.chunkBytes());
                    assertEquals(v.number("dtypes"), g.dataTypes());
                    assertEquals(v.number("redops"), g.reductions());
                }
                case NacaHeader.REFUSE -> assertEquals(v.get("reason"),
                        new String(v.bytes(), NacaHeader.LENGTH, (int) h.length(), StandardCharsets.UTF_8));
                default -> {
                }
            }
        }
    }

    /** A header as {@link NacaHeader#write} takes it, and what {@link NacaHeader#validate} must say of it. */
    private record Case(int type, int flags, int collective, int dtype, int redop, int ranks, int rank, int slot,
            long sequence, long length, String refusal) {
    }

    @Test
    void everyRuleOfTheHeaderRefusesAloneWithItsReason() {
        List<Case> cases = List.of(
                new Case(NacaHeader.CHUNK, 0, 1, 1, 1, 4, 2, 3, 11, 16, null),
                new Case(9, 0, 1, 1, 1, 4, 2, 3, 11, 16, "unknown"),
                new Case(NacaHeader.CHUNK, 0x80, 1, 1, 1, 4, 2, 3, 11, 16, "flags"),
                new Case(NacaHeader.RESULT, NacaHeader.FLAG_RESEND, 1, 1, 1, 4, 2, 3, 11, 16, "flags"),
                new Case(NacaHeader.CHUNK, NacaHeader.FLAG_FALLBACK, 1, 1, 1, 4, 2, 3, 11, 16, "flags"),
                new Case(NacaHeader.CHUNK, 0, 2, 1, 1, 4, 2, 3, 11, 16, "collective"),
                new Case(NacaHeader.CHUNK, 0, 1, 7, 1, 4, 2, 3, 11, 16, "dtype"),
                new Case(NacaHeader.CHUNK, 0, 1, 1, 5, 4, 2, 3, 11, 16, "redop"),
                new Case(NacaHeader.CHUNK, 0, 1, 1, 1, 65, 2, 3, 11, 16, "ranks"),
                new Case(NacaHeader.CHUNK, 0, 1, 1, 1, 4, 4, 3, 11, 16, "rank 4 of 4"),
                new Case(NacaHeader.ACCEPT, 0, 0, 0, 0, 4, 2, 1, 0, 16, "slot"),
                new Case(NacaHeader.CHALLENGE, 0, 0, 0, 0, 4, 0, 0, 0, 16, "names a job"),
                new Case(NacaHeader.JOIN, 0, 0, 0, 0, 4, 2, 0, 0, 16, "JOIN body"));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocate(64);
            NacaHeader h = new NacaHeader().wrap(m, 0);
            for (Case c : cases) {
                h.write(c.type(), c.flags(), 7, c.collective(), c.dtype(), c.redop(), c.ranks(), c.rank(), c.slot(),
                        c.sequence(), c.length(), 2 * Math.min(1, c.collective()));
                String refusal = h.validate(NacaHeader.LENGTH + c.length());
                if (c.refusal() == null) {
                    assertNull(refusal, c.toString());
                } else {
                    assertNotNull(refusal, c + " should be refused");
                    assertTrue(refusal.contains(c.refusal()), c + ": " + refusal);
                }
            }
            h.write(NacaHeader.CHUNK, 0, 7, 1, 1, 1, 4, 2, 3, 11, 16, 2);
            assertTrue(h.validate(47).contains("does not match"));
            m.set(ValueLayout.JAVA_BYTE, NacaHeader.RESERVED1_OFFSET + 3, (byte) 1);
            assertTrue(h.validate(48).contains("reserved"));
            m.set(ValueLayout.JAVA_BYTE, NacaHeader.VERSION_OFFSET, (byte) 2);
            assertTrue(h.validate(48).contains("version"));
            m.set(ValueLayout.JAVA_BYTE, NacaHeader.MAGIC_OFFSET, (byte) 0x4f);
            assertTrue(h.validate(48).contains("magic"));
        }
    }
}
