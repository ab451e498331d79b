package io.zcnet.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FrameValidator;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Icrc;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.framing.PackedSends;
import io.zcnet.framing.ReadRequestExtension;
import io.zcnet.framing.Segmenter;
import io.zcnet.framing.TaggedExtension;
import io.zcnet.framing.UntaggedExtension;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class WireDumpTest {

    private static final int MSS = 128;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(byte[] input, String... args) {
        out.reset();
        err.reset();
        return WireDump.run(args, new ByteArrayInputStream(input), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String[] lines() {
        return out.toString(StandardCharsets.UTF_8).split("\n");
    }

    private static byte[] stream() {
        Segmenter s = new Segmenter(new FramingConfig(MSS, true, 8));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        writeFrames(s.beginWriteWithImmediate(65535, -16, MemorySegment.ofArray(pattern(300)), 0, 300,
                0xF0000001, 0x7FFFFFFF00000001L, -2), bytes);
        writeFrames(s.beginReadRequest(0, 7, 8, 9, 10, 11), bytes);
        byte[] ack = new byte[32];
        FlowControl.writeAcknowledge(new FrameHeader().wrap(MemorySegment.ofArray(ack), 0), 3, 99, true, false);
        new FrameHeader().wrap(MemorySegment.ofArray(ack), 0).subflow(2).timestampPresent(true).timestamp(5).timestampEcho(6);
        bytes.writeBytes(ack);
        writeFrames(s.beginSendWithImmediate(1, 5, MemorySegment.ofArray(pattern(20)), 0, 20, 3), bytes);
        return bytes.toByteArray();
    }

    /** Every frame of the segmenter's current work request, header and payload, appended to {@code out}. */
    private static void writeFrames(Segmenter s, ByteArrayOutputStream out) {
        MemorySegment header = MemorySegment.ofArray(new byte[FrameHeader.LENGTH + ReadRequestExtension.LENGTH]);
        for (long i = 0; i < s.frameCount(); i++) {
            int headerBytes = s.writeFrame(i, header, 0);
            out.writeBytes(header.asSlice(0, headerBytes).toArray(ValueLayout.JAVA_BYTE));
            out.writeBytes(s.source() == null ? new byte[0]
                    : s.source().asSlice(s.payloadOffset(), s.payloadLength()).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    private static byte[] pattern(int length) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + 17);
        }
        return b;
    }

    @Test
    void jsonHasEveryFieldByItsDesignName() {
        assertEquals(0, run(stream(), "--json", "--mss", String.valueOf(MSS)));
        String[] lines = lines();
        assertEquals(6, lines.length);
        Map<String, Object> first = FlatJson.parse(lines[0]);
        assertEquals(List.of("ver", "timestamp_present", "more_segments", "rtr", "rtr_ack", "ack_request", "quiet", "opcode", "msn",
                "offset", "seg", "icrc", "icrc_ok", "timestamp", "timestamp_echo", "imm_data", "length", "ext_length", "subflow",
                "rkey", "region_offset"), List.copyOf(first.keySet()));
        assertEquals("RDMA_WRITE_FIRST", first.get("opcode"));
        assertEquals(65535L, first.get("msn"));
        assertEquals(true, first.get("more_segments"));
        assertEquals(true, first.get("icrc_ok"));
        assertEquals(0xF0000001L, first.get("rkey"));
        assertEquals(0x7FFFFFFF00000001L, first.get("region_offset"));
        Map<String, Object> last = FlatJson.parse(lines[2]);
        assertEquals("RDMA_WRITE_LAST_WITH_IMMEDIATE", last.get("opcode"));
        assertEquals(256L, last.get("offset"));
        assertEquals(2L, last.get("seg"));
        assertEquals(0xFFFFFFFEL, last.get("imm_data"));
        assertEquals(List.of("rkey", "region_offset", "rsn"), List.copyOf(last.keySet()).subList(19, 22),
                "the last frame of a WRITE with immediate names the receive it consumes");
        assertEquals(0xFFFFFFF0L, last.get("rsn"));
        assertEquals(16L, last.get("ext_length"));
        Map<String, Object> read = FlatJson.parse(lines[3]);
        assertEquals(9L, read.get("read_length"));
        assertEquals(10L, read.get("sink_rkey"));
        assertEquals(11L, read.get("sink_offset"));
        Map<String, Object> ack = FlatJson.parse(lines[4]);
        assertEquals("ACKNOWLEDGE", ack.get("opcode"));
        assertEquals(true, ack.get("rtr"));
        assertEquals(99L, ack.get("imm_data"));
        assertEquals(2L, ack.get("subflow"));
        assertEquals(6L, ack.get("timestamp_echo"));
        assertNull(ack.get("icrc_ok"), "no ICRC computed");
        Map<String, Object> send = FlatJson.parse(lines[5]);
        assertEquals("SEND_ONLY_WITH_IMMEDIATE", send.get("opcode"));
        assertEquals(List.of("subflow", "rsn"), List.copyOf(send.keySet()).subList(18, 20), "a SEND's extension is its RSN");
        assertEquals(5L, send.get("rsn"));
        assertEquals(4L, send.get("ext_length"));
    }

    @Test
    void aNakShowsItsReasonAndTheMessageItNames() {
        byte[] frames = new byte[64];
        MemorySegment m = MemorySegment.ofArray(frames);
        NegativeAcknowledge.write(new FrameHeader().wrap(m, 0), 4, FrameError.REMOTE_ACCESS, 5);
        NegativeAcknowledge.write(new FrameHeader().wrap(m, 32), 4, FrameError.QUEUE_PAIR_IN_ERROR, NegativeAcknowledge.NO_MESSAGE);
        assertEquals(0, run(frames, "--mss", String.valueOf(MSS)));
        String[] lines = lines();
        assertTrue(lines[0].contains("ACKNOWLEDGE msn=4") && lines[0].contains(" nak=REMOTE_ACCESS failed_msn=5"), lines[0]);
        assertTrue(lines[1].contains(" nak=QUEUE_PAIR_IN_ERROR failed_msn=none"), lines[1]);
        assertFalse(lines[1].contains("imm="), "a NAK's imm_data is its failed MSN, not immediate data");
    }

    @Test
    void encodeReversesDump() {
        byte[] original = stream();
        assertEquals(0, run(original, "--json", "--payload", "--mss", String.valueOf(MSS)));
        byte[] json = out.toByteArray();
        assertEquals(0, run(json, "--encode"));
        assertArrayEquals(original, out.toByteArray());
    }

    @Test
    void textModePrintsOneLinePerFrame() {
        assertEquals(0, run(stream(), "--mss", String.valueOf(MSS)));
        String[] lines = lines();
        assertEquals(6, lines.length);
        assertTrue(lines[0].startsWith("#0 @0 RDMA_WRITE_FIRST msn=65535 offset=0 seg=0 len=128"), lines[0]);
        assertTrue(lines[1].startsWith("#1 @172 RDMA_WRITE_MIDDLE"), lines[1]);
        assertTrue(lines[0].contains("(ok)"), lines[0]);
        assertFalse(lines[0].contains("rsn="), "a WRITE's first frame names no receive: " + lines[0]);
        assertTrue(lines[2].endsWith(" rkey=0xf0000001 region_offset=9223372032559808769 rsn=4294967280"), lines[2]);
        assertTrue(lines[5].startsWith("#5 ") && lines[5].contains("SEND_ONLY_WITH_IMMEDIATE")
                && lines[5].endsWith(" rsn=5"), lines[5]);
    }

    @Test
    void rejectedFrameStopsWithItsErrorAndPosition() {
        byte[] bytes = stream();
        bytes[172 + 1] = 0x42;
        assertEquals(1, run(bytes, "--json", "--mss", String.valueOf(MSS)));
        String[] lines = lines();
        assertEquals(2, lines.length);
        Map<String, Object> error = FlatJson.parse(lines[1]);
        assertEquals("BAD_OPCODE", error.get("error"));
        assertEquals(172L, error.get("position"));
        assertEquals(1L, error.get("frame"));
        assertEquals(1, run(java.util.Arrays.copyOf(stream(), 40), "--mss", String.valueOf(MSS)));
        assertTrue(lines()[0].contains("TRUNCATED"), lines()[0]);
    }

    @Test
    void icrcMismatchIsReportedAndDumpContinues() {
        byte[] bytes = stream();
        bytes[100] ^= 1;
        assertEquals(0, run(bytes, "--json", "--mss", String.valueOf(MSS)));
        assertEquals(false, FlatJson.parse(lines()[0]).get("icrc_ok"));
        assertEquals(true, FlatJson.parse(lines()[1]).get("icrc_ok"));
    }

    @Test
    void encodeCraftsFramesAndRejectsWhatItDoesNotUnderstand() {
        String line = "{\"opcode\":\"SEND_ONLY\",\"msn\":5,\"rsn\":4294967295,\"payload_hex\":\"0a0b0c\"}\n";
        assertEquals(0, run(line.getBytes(StandardCharsets.UTF_8), "--encode", "--icrc"));
        byte[] frame = out.toByteArray();
        assertEquals(32 + 4 + 3, frame.length, "header, the RSN, payload");
        MemorySegment s = MemorySegment.ofArray(frame);
        FrameHeader h = new FrameHeader().wrap(s, 0);
        assertEquals(FrameError.OK, FrameValidator.validateHeader(h, MSS));
        assertEquals(5, h.msn());
        assertEquals(-1, new UntaggedExtension().wrap(s, 32).rsn());
        assertTrue(new Icrc().verify(s, 0, s, 36));
        assertEquals(0, run("{\"opcode\":255,\"length\":2}".getBytes(StandardCharsets.UTF_8), "--encode"));
        assertEquals(34, out.size());
        assertEquals(0, run("{\"opcode\":\"RDMA_WRITE_ONLY\",\"region_offset\":18446744073709551615}".getBytes(StandardCharsets.UTF_8), "--encode"));
        assertEquals(-1L, new TaggedExtension().wrap(MemorySegment.ofArray(out.toByteArray()), 32).regionOffset());
        assertEquals(1, run("{\"opcode\":\"SEND_ONLY\",\"colour\":1}".getBytes(StandardCharsets.UTF_8), "--encode"));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("colour"));
        assertEquals(1, run("{\"opcode\":\"SEND_ONLY\",\"rkey\":1}".getBytes(StandardCharsets.UTF_8), "--encode"),
                "a SEND's extension holds its RSN only");
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("rkey"));
        assertEquals(1, run("{\"opcode\":\"RDMA_WRITE_ONLY\",\"rsn\":1}".getBytes(StandardCharsets.UTF_8), "--encode"),
                "a WRITE without immediate names no receive");
        assertEquals(1, run("{\"opcode\":\"RDMA_WRITE_ONLY_WITH_IMMEDIATE\",\"read_length\":1}"
                .getBytes(StandardCharsets.UTF_8), "--encode"), "the RSN's place, not a read length");
        assertEquals(0, run("{\"opcode\":\"RDMA_WRITE_ONLY_WITH_IMMEDIATE\",\"rkey\":9,\"rsn\":7}"
                .getBytes(StandardCharsets.UTF_8), "--encode"));
        assertEquals(32 + 16, out.size());
        TaggedExtension written = new TaggedExtension().wrap(MemorySegment.ofArray(out.toByteArray()), 32);
        assertEquals(9, written.rkey());
        assertEquals(7, written.rsn());
        assertEquals(1, run("{\"opcode\":\"SEND_ONLY\",\"msn\":70000}".getBytes(StandardCharsets.UTF_8), "--encode"));
        assertEquals(1, run("{\"opcode\":\"SEND_ONLY\",\"msn\":1.5}".getBytes(StandardCharsets.UTF_8), "--encode"));
        assertEquals(1, run("{\"opcode\":\"SEND_ONLY\"} x".getBytes(StandardCharsets.UTF_8), "--encode"));
        assertEquals(1, run("{\"opcode\":\"SEND_ONLY\",\"msn\":1,\"msn\":2}".getBytes(StandardCharsets.UTF_8), "--encode"));
        assertEquals(2, run(new byte[0], "--bogus"));
        assertThrows(IllegalArgumentException.class, () -> FlatJson.parse("{\"a\":[1]}"));
    }
    // ---------------------------------------------------------------- SEND_PACKED

    /**
     * A SEND_PACKED frame as the sender writes it, MSN 0xfffe and RSN 0xffffffff (both wrap inside it), ICRC on:
     * "hello"; an empty SEND with immediate data 7; 3 bytes with immediate data 0xfffffffe. Then a SEND_ONLY.
     */
    private static byte[] packedStream() {
        byte[] frame = new byte[Segmenter.PACKED_HEADER_BYTES + 4 + 5 + 8 + 8 + 3];
        MemorySegment m = MemorySegment.ofArray(frame);
        long at = Segmenter.PACKED_HEADER_BYTES;
        at = PackedSends.writeRecord(m, at, MemorySegment.ofArray("hello".getBytes(StandardCharsets.US_ASCII)), 0, 5, false, 0);
        at = PackedSends.writeRecord(m, at, MemorySegment.ofArray(new byte[0]), 0, 0, true, 7);
        at = PackedSends.writeRecord(m, at, MemorySegment.ofArray(new byte[] {1, 2, 3}), 0, 3, true, -2);
        Segmenter s = new Segmenter(new FramingConfig(MSS, true, 8));
        s.writePackedHeader(0xFFFE, -1, (int) at - Segmenter.PACKED_HEADER_BYTES, true, m, 0);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        bytes.writeBytes(frame);
        writeFrames(s.beginSend(1, 2, MemorySegment.ofArray(pattern(10)), 0, 10), bytes);
        return bytes.toByteArray();
    }

    /** Runs the dump over {@code input} with {@code --json} and {@code args}, expecting {@code exit}: its lines, parsed. */
    private List<Map<String, Object>> json(int exit, byte[] input, String... args) {
        String[] all = Arrays.copyOf(new String[] {"--json"}, 1 + args.length);
        System.arraycopy(args, 0, all, 1, args.length);
        assertEquals(exit, run(input, all), String.join(" ", all));
        return Arrays.stream(lines()).map(FlatJson::parse).toList();
    }

    @Test
    void jsonShowsEveryRecordOfAPackedFrame() {
        List<Map<String, Object>> frames = json(0, packedStream(), "--payload", "--mss", String.valueOf(MSS));
        assertEquals(2, frames.size());
        Map<String, Object> packed = frames.get(0);
        assertEquals("SEND_PACKED", packed.get("opcode"));
        assertEquals(0xFFFEL, packed.get("msn"));
        assertEquals(0xFFFFFFFFL, packed.get("rsn"));
        assertEquals(true, packed.get("ack_request"));
        assertEquals(true, packed.get("icrc_ok"));
        assertEquals(List.of("subflow", "rsn", "records", "payload_hex"), List.copyOf(packed.keySet()).subList(18, 22),
                "the records follow the extension, the payload comes last");
        assertEquals(List.of(
                Map.of("msn", 0xFFFEL, "rsn", 0xFFFFFFFFL, "immediate_present", false, "message_length", 5L,
                        "payload_hex", "68656c6c6f"),
                Map.of("msn", 0xFFFFL, "rsn", 0L, "immediate_present", true, "message_length", 0L, "imm_data", 7L,
                        "payload_hex", ""),
                Map.of("msn", 0L, "rsn", 1L, "immediate_present", true, "message_length", 3L, "imm_data", 0xFFFFFFFEL,
                        "payload_hex", "010203")), packed.get("records"));
        assertEquals(List.of("msn", "rsn", "immediate_present", "message_length", "imm_data", "payload_hex"),
                List.copyOf(((Map<?, ?>) ((List<?>) packed.get("records")).get(2)).keySet()));
        assertEquals("SEND_ONLY", frames.get(1).get("opcode"));
        assertNull(frames.get(1).get("records"), "only a packed frame has records");
        assertEquals(Map.of("msn", 0L, "rsn", 1L, "immediate_present", true, "message_length", 3L, "imm_data", 0xFFFFFFFEL),
                ((List<?>) json(0, packedStream(), "--mss", String.valueOf(MSS)).get(0).get("records")).get(2),
                "message bytes only with --payload");
    }

    @Test
    void textShowsEveryRecordOfAPackedFrame() {
        assertEquals(0, run(packedStream(), "--mss", String.valueOf(MSS)));
        String[] lines = lines();
        assertEquals(2, lines.length);
        assertTrue(lines[0].startsWith("#0 @0 SEND_PACKED msn=65534 offset=0 seg=0 len=28 subflow=0 ack_request icrc=0x"), lines[0]);
        assertTrue(lines[0].endsWith(" rsn=4294967295 records=3 [msn=65534 rsn=4294967295 len=5]"
                + " [msn=65535 rsn=0 len=0 imm=7] [msn=0 rsn=1 len=3 imm=4294967294]"), lines[0]);
        assertTrue(lines[1].startsWith("#1 @64 SEND_ONLY msn=1 "), lines[1]);
    }

    @Test
    void encodeReversesDumpOfAPackedFrame() {
        byte[] original = packedStream();
        assertEquals(0, run(original, "--json", "--payload", "--mss", String.valueOf(MSS)));
        assertEquals(0, run(out.toByteArray(), "--encode"));
        assertArrayEquals(original, out.toByteArray(), "records are derived: the bytes come from payload_hex");
        assertEquals(1, run("{\"opcode\":\"SEND_ONLY\",\"records\":[]}".getBytes(StandardCharsets.UTF_8), "--encode"),
                "only a packed frame has records");
        assertThrows(IllegalArgumentException.class, () -> FlatJson.parse("{\"a\":[{\"b\":[]}]}"), "one level of nesting");
        assertThrows(IllegalArgumentException.class, () -> FlatJson.parse("{\"a\":[{\"b\":{}}]}"), "one level of nesting");
        assertThrows(IllegalArgumentException.class, () -> FlatJson.parse("{\"a\":[{}"), "an unterminated array");
    }

    @Test
    void aMalformedPackedFrameStopsTheDumpWithItsErrorAndRecord() {
        // The packed frame's payload starts at byte 36: records at 36 ("hello"), 45 (empty, immediate), 53.
        assertMalformed("a record running past the payload", b -> b[53 + 3] = 4, "INCONSISTENT_MESSAGE",
                "record 2 at payload byte 17: its 12 bytes run past the 28-byte payload");
        assertMalformed("reserved bits", b -> b[45] |= 0x01, "RESERVED_BITS",
                "record 1 at payload byte 9: reserved bits set in descriptor 0x81000000");
        // The last record shrinks to its 8 header bytes; the frame's length stays, so 3 bytes are left over.
        assertMalformed("a tail shorter than a record header", b -> b[53 + 3] = 0, "INCONSISTENT_MESSAGE",
                "record 3 at payload byte 25: 3 bytes left, fewer than a record header");
        assertMalformed("imm_data in the base header", b -> b[23] = 1, "RESERVED_FIELD", null);
        assertMalformed("more_segments", b -> b[0] |= 0x10, "BAD_FLAGS", null);
        assertMalformed("an offset", b -> b[6] = 1, "BAD_SEGMENT", null);
        byte[] empty = Arrays.copyOf(packedStream(), Segmenter.PACKED_HEADER_BYTES);
        empty[27] = 0;
        assertEquals(1, run(empty, "--mss", String.valueOf(MSS)));
        assertTrue(lines()[0].contains("BAD_SEGMENT"), "no record at all: " + lines()[0]);
        byte[] big = packedStream();
        big[26] = 0x10;
        big[27] = 0x01; // 4097 bytes
        assertEquals(1, run(big, "--mss", "8192"));
        assertTrue(lines()[0].contains("PAYLOAD_TOO_LONG"), "over 4096 bytes even with larger segments: " + lines()[0]);
    }

    /**
     * The packed stream after a good frame, its packed frame broken by {@code change}: the dump shows the good
     * frame, then stops at the packed one (frame 1, byte 64) with {@code error} and, when given, {@code detail}.
     */
    private void assertMalformed(String what, Consumer<byte[]> change, String error, String detail) {
        byte[] packed = packedStream();
        change.accept(packed);
        byte[] good = Arrays.copyOfRange(packedStream(), 64, packedStream().length);
        byte[] bytes = Arrays.copyOf(good, good.length + 64);
        System.arraycopy(packed, 0, bytes, good.length, 64);
        List<Map<String, Object>> frames = json(1, bytes, "--mss", String.valueOf(MSS));
        assertEquals(2, frames.size(), what + ": " + frames);
        assertEquals("SEND_ONLY", frames.get(0).get("opcode"), what);
        Map<String, Object> rejected = frames.get(1);
        assertEquals(error, rejected.get("error"), what);
        assertEquals(1L, rejected.get("frame"), what);
        assertEquals((long) good.length, rejected.get("position"), what);
        if (detail != null) {
            assertEquals(detail, rejected.get("detail"), what);
        }
        assertEquals(1, run(bytes, "--mss", String.valueOf(MSS)), what);
        assertTrue(lines()[1].startsWith("error: frame 1 at byte " + good.length + ": " + error), what + ": " + lines()[1]);
    }
}
