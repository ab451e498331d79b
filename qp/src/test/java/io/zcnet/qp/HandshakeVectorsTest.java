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
import java.util.Arrays;
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
        assertEquals(List.of("open", "challenge", "proof", "join", "join-challenge"), blocks("zcnet-handshake").stream().map(Block::name).toList());
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
        List<Block> vectors = blocks("zcnet-handshake");
        byte[] psk = hex(f.get("psk"));
        long token = number(f.get("token"));
        byte[] secret = JoinSecret.secret(psk, token, hex(f.get("nonce_i")), hex(f.get("nonce_a")));
        assertArrayEquals(hex(f.get("secret")), secret, "secret");
        byte[] open = transcript(vectors.get(0));
        byte[] challenge = transcript(vectors.get(1));
        byte[] join = transcript(vectors.get(3));
        byte[] joinChallenge = transcript(vectors.get(4));
        assertArrayEquals(hex(f.get("open_a")), JoinSecret.acceptorProof(psk, false, open, challenge), "open_a");
        assertArrayEquals(hex(f.get("open_i")), JoinSecret.initiatorProof(psk, false, open, challenge), "open_i");
        assertArrayEquals(hex(f.get("join_a")), JoinSecret.acceptorProof(secret, true, join, joinChallenge), "join_a");
        assertArrayEquals(hex(f.get("join_i")), JoinSecret.initiatorProof(secret, true, join, joinChallenge), "join_i");
        assertEquals(f.get("open_a"), vectors.get(1).fields().get("mac"), "the CHALLENGE vector carries open_a");
        assertEquals(f.get("open_i"), vectors.get(2).fields().get("mac"), "the PROOF vector carries open_i");
        assertEquals(f.get("join_a"), vectors.get(4).fields().get("mac"), "the JOIN's CHALLENGE carries join_a");
        assertEquals(f.get("nonce_a"), vectors.get(1).fields().get("nonce"), "the CHALLENGE vector carries nonce_a");
        assertEquals(f.get("nonce_i"), vectors.get(0).fields().get("nonce"), "the OPEN carries nonce_i");
    }

    @Test
    void theTranscriptIsTheMessageWithItsMacZero() throws IOException {
        Block challenge = blocks("zcnet-handshake").get(1);
        byte[] transcript = transcript(challenge);
        byte[] expected = challenge.bytes().clone();
        Arrays.fill(expected, (int) HandshakeMessage.MAC, (int) HandshakeMessage.MAC + HandshakeMessage.MAC_LENGTH, (byte) 0);
        assertArrayEquals(expected, transcript);
        assertTrue(Arrays.mismatch(challenge.bytes(), transcript) >= 0, "the vector's mac is not zero");
    }

    private static byte[] transcript(Block message) {
        return new HandshakeMessage().wrap(MemorySegment.ofArray(message.bytes().clone()), 0).transcript();
    }
}
