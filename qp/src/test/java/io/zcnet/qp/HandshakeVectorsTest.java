package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The handshake test vectors of {@code docs/wire-format.md} ({@code zcnet-handshake} and {@code zcnet-proofs}
 * blocks), read from the document itself: every message is decoded with {@link HandshakeMessage} and compared
 * field by field, encoded again from its fields and compared byte for byte, and every proof is recomputed with
 * the {@link JoinSecret} functions the handshakes use.
 */
class HandshakeVectorsTest {

    private static final Path DOCUMENT = Path.of("..", "docs", "wire-format.md");
    private static final List<String> TYPES = List.of("OPEN", "JOIN", "CHALLENGE", "PROOF", "REFUSE");
    private static final long RESERVED = HandshakeMessage.LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("reserved"));

    /** One block: its dump bytes and its {@code name = value} lines. */
    private record Block(String name, byte[] bytes, Map<String, String> fields) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static List<Block> blocks(String kind) throws IOException {
        List<String> lines = Files.readAllLines(DOCUMENT);
        List<Block> blocks = new ArrayList<>();
        for (int i = lines.indexOf("```" + kind); i >= 0; i = indexOf(lines, "```" + kind, i + 1)) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            Map<String, String> fields = new LinkedHashMap<>();
            for (int j = i + 1; !lines.get(j).equals("```"); j++) {
                String line = lines.get(j).replaceFirst("\\s*#.*$", "");
                if (line.matches("[0-9a-f]{4}  .*")) {
                    assertEquals(Integer.parseInt(line.substring(0, 4), 16), bytes.size(), DOCUMENT + ":" + (j + 1));
                    bytes.writeBytes(HexFormat.of().parseHex(line.substring(6).replace(" ", "")));
                } else if (!line.isBlank()) {
                    String[] kv = line.split("=", 2);
                    fields.put(kv[0].strip(), kv[1].strip());
                }
            }
            blocks.add(new Block(fields.getOrDefault("name", kind + "@" + (i + 1)), bytes.toByteArray(), fields));
        }
        return blocks;
    }

    private static int indexOf(List<String> lines, String line, int from) {
        for (int i = from; i < lines.size(); i++) {
            if (lines.get(i).equals(line)) {
                return i;
            }
        }
        return -1;
    }

    private static long number(String text) {
        String t = text.toLowerCase(java.util.Locale.ROOT);
        return (t.startsWith("0x") ? new BigInteger(t.substring(2), 16) : new BigInteger(t)).longValue();
    }

    private static byte[] hex(String text) {
        return HexFormat.of().parseHex(text);
    }

    @Test
    void theDocumentHasTheHandshakeVectors() throws IOException {
        assertEquals(List.of("open", "challenge", "proof"), blocks("zcnet-handshake").stream().map(Block::name).toList());
        assertEquals(1, blocks("zcnet-proofs").size());
    }

    @TestFactory
    Stream<DynamicTest> everyMessageDecodesToItsFields() throws IOException {
        return blocks("zcnet-handshake").stream().map(b -> DynamicTest.dynamicTest(b.name(), () -> {
            assertEquals(HandshakeMessage.LENGTH, b.bytes().length, b + " length");
            MemorySegment bytes = MemorySegment.ofArray(b.bytes());
            HandshakeMessage m = new HandshakeMessage().wrap(bytes, 0);
            assertNull(m.malformed(), b + " is well-formed");
            Map<String, String> f = b.fields();
            assertEquals(number(f.get("magic")), Integer.toUnsignedLong(bytes.get(
                    ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN), 0)), b + " magic");
            assertEquals(HandshakeMessage.MAGIC, (int) number(f.get("magic")), b + " magic constant");
            assertEquals(f.get("type"), TYPES.get(m.type() - 1), b + " type");
            assertEquals(number(f.get("version")), m.version(), b + " version");
            assertEquals(number(f.get("flags")), m.flags(), b + " flags");
            assertEquals(number(f.get("segment_size")), Integer.toUnsignedLong(m.segmentSize()), b + " segment_size");
            assertEquals(number(f.get("message_window")), Integer.toUnsignedLong(m.messageWindow()), b + " message_window");
            assertEquals(number(f.get("max_subflows")), m.maxSubflows(), b + " max_subflows");
            assertEquals(number(f.get("subflow")), m.subflow(), b + " subflow");
            assertEquals(number(f.get("reason")), Integer.toUnsignedLong(m.reason()), b + " reason");
            assertEquals(number(f.get("token")), m.token(), b + " token");
            assertArrayEquals(hex(f.get("nonce")), m.nonce(), b + " nonce");
            assertArrayEquals(hex(f.get("mac")), m.mac(), b + " mac");
            assertEquals(number(f.get("silence_ms")), m.silenceMillis(), b + " silence_ms");
            assertArrayEquals(hex(f.get("reserved")), bytes.asSlice(RESERVED).toArray(ValueLayout.JAVA_BYTE), b + " reserved");
        }));
    }

    @TestFactory
    Stream<DynamicTest> everyMessageEncodesFromItsFields() throws IOException {
        return blocks("zcnet-handshake").stream().map(b -> DynamicTest.dynamicTest(b.name(), () -> {
            Map<String, String> f = b.fields();
            byte[] out = new byte[HandshakeMessage.LENGTH];
            new HandshakeMessage().wrap(MemorySegment.ofArray(out), 0)
                    .clear(TYPES.indexOf(f.get("type")) + 1)
                    .flags((int) number(f.get("flags")))
                    .segmentSize((int) number(f.get("segment_size")))
                    .messageWindow((int) number(f.get("message_window")))
                    .maxSubflows((int) number(f.get("max_subflows")))
                    .subflow((int) number(f.get("subflow")))
                    .reason((int) number(f.get("reason")))
                    .token(number(f.get("token")))
                    .nonce(hex(f.get("nonce")))
                    .mac(hex(f.get("mac")))
                    .silenceMillis(number(f.get("silence_ms")));
            assertTrue(hex(f.get("reserved")).length == HandshakeMessage.LENGTH - RESERVED && number(f.get("version")) == HandshakeMessage.VERSION);
            assertArrayEquals(b.bytes(), out, b + ": bytes encoded from the fields");
        }));
    }

    @Test
    void theChallengeCarriesWhatAnAcceptorWithA500MsSilenceTimeoutAgreesToTheOpen() throws IOException {
        List<Block> vectors = blocks("zcnet-handshake");
        HandshakeMessage open = new HandshakeMessage().wrap(MemorySegment.ofArray(vectors.get(0).bytes()), 0);
        HandshakeMessage challenge = new HandshakeMessage().wrap(MemorySegment.ofArray(vectors.get(1).bytes()), 0);
        QpConfig acceptor = QpConfig.defaults().withTimeouts(Duration.ofSeconds(5), Duration.ofMillis(500));
        Agreement agreed = Agreement.of(acceptor, open.segmentSize(), (open.flags() & HandshakeMessage.FLAG_ICRC) != 0,
                open.messageWindow(), open.maxSubflows(), open.silenceMillis());
        assertEquals(new Agreement(challenge.segmentSize(), (challenge.flags() & HandshakeMessage.FLAG_ICRC) != 0,
                challenge.messageWindow(), challenge.maxSubflows(), challenge.silenceMillis()), agreed);
        assertEquals(500, agreed.silenceMillis(), "the smaller of the OPEN's 2000 and the acceptor's 500");
    }

    @Test
    void theProofsAreTheOnesTheHandshakesCompute() throws IOException {
        Map<String, String> f = blocks("zcnet-proofs").getFirst().fields();
        byte[] psk = hex(f.get("psk"));
        long token = number(f.get("token"));
        byte[] ni = hex(f.get("nonce_i"));
        byte[] na = hex(f.get("nonce_a"));
        byte[] secret = JoinSecret.secret(psk, token, ni, na);
        assertArrayEquals(hex(f.get("secret")), secret, "secret");
        assertArrayEquals(hex(f.get("open_a")), JoinSecret.acceptorProof(psk, false, token, ni, na), "open_a");
        assertArrayEquals(hex(f.get("open_i")), JoinSecret.initiatorProof(psk, false, token, ni, na), "open_i");
        assertArrayEquals(hex(f.get("join_a")), JoinSecret.acceptorProof(secret, true, token, ni, na), "join_a");
        assertArrayEquals(hex(f.get("join_i")), JoinSecret.initiatorProof(secret, true, token, ni, na), "join_i");
        Map<String, String> challenge = blocks("zcnet-handshake").get(1).fields();
        Map<String, String> proof = blocks("zcnet-handshake").get(2).fields();
        assertEquals(f.get("open_a"), challenge.get("mac"), "the CHALLENGE vector carries open_a");
        assertEquals(f.get("open_i"), proof.get("mac"), "the PROOF vector carries open_i");
        assertEquals(f.get("nonce_a"), challenge.get("nonce"), "the CHALLENGE vector carries nonce_a");
        assertEquals(f.get("nonce_i"), blocks("zcnet-handshake").getFirst().fields().get("nonce"), "the OPEN carries nonce_i");
    }
}
