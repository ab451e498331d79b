package io.zcnet.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FrameValidator;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.framing.PackedSends;
import io.zcnet.framing.ReadRequestExtension;
import io.zcnet.framing.Segmenter;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dissector's validation ({@code zcnet.error}) against {@link FrameValidator}: frames breaking each rule of
 * the specification's sections 14.1 and 14.2 (and valid ones; SEND_PACKED frames and their records among them),
 * each alone on a TCP connection of a capture written here, must get from tshark exactly the {@link FrameError}
 * the validator gives, or none when it accepts the frame. Needs tshark (see {@link CaptureTools}); skipped with
 * the reason otherwise.
 */
class DissectorValidationTest {

    private static final int SEGMENT = 1024;
    /** A segment size above a packed frame's own bound, {@link PackedSends#MAX_LENGTH}. */
    private static final int LARGE_SEGMENT = 8192;
    private static final int PORT = 7000;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void tsharkRefusesWhatTheValidatorRefuses() throws Exception {
        CaptureTools.assumeAvailable();
        Set<String> errors = check(cases(), SEGMENT);
        assertTrue(errors.containsAll(Set.of("OK", "BAD_VERSION", "RESERVED_BITS", "BAD_OPCODE", "BAD_EXTENSION_LENGTH",
                "PAYLOAD_TOO_LONG", "MESSAGE_TOO_LONG", "BAD_SEGMENT", "BAD_FLAGS", "RESERVED_FIELD",
                "INCONSISTENT_MESSAGE")), errors.toString());
        assertEquals(Set.of("OK", "PAYLOAD_TOO_LONG"), check(largeSegmentCases(), LARGE_SEGMENT),
                "a packed frame is bounded by 4096 bytes, not only by the segment size");
    }

    /**
     * Has tshark judge each of {@code cases} with the segment size {@code segment}, and fails unless it judges
     * each as the validator does; returns the verdicts seen.
     */
    private Set<String> check(Map<String, byte[]> cases, int segment) throws Exception {
        Path capture = dir.resolve("hostile-" + segment + ".pcap");
        Files.write(capture, CaptureTools.pcap(new ArrayList<>(cases.values()), PORT));
        String out = CaptureTools.run(List.of("tshark", "-n", "-r", capture.toString(), "-X",
                "lua_script:" + CaptureTools.DISSECTOR, "-o", "zcnet.tcp_port:" + PORT, "-o",
                "zcnet.segment_size:" + segment, "-Y", "zcnet", "-T", "fields", "-E", "separator=/t", "-e", "tcp.srcport",
                "-e", "zcnet.error"), 20);
        Map<Integer, String> verdicts = new LinkedHashMap<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                String[] columns = line.split("\t", -1);
                verdicts.put(Integer.parseInt(columns[0]), columns[1].isEmpty() ? "OK" : columns[1]);
            }
        }
        List<String> wrong = new ArrayList<>();
        Set<String> errors = new TreeSet<>();
        int i = 0;
        for (Map.Entry<String, byte[]> c : cases.entrySet()) {
            String expected = verdict(c.getValue(), segment);
            errors.add(expected);
            String actual = verdicts.get(CaptureTools.clientPort(i++));
            if (!expected.equals(actual)) {
                wrong.add(c.getKey() + ": validator " + expected + ", dissector " + actual);
            }
        }
        assertEquals(List.of(), wrong, "frames the dissector judges otherwise than FrameValidator (segment size "
                + segment + ")");
        return errors;
    }

    private static String verdict(byte[] frame, int segment) {
        MemorySegment m = MemorySegment.ofArray(frame);
        return FrameError.name(FrameValidator.validateFrame(m, 0, frame.length, segment, new FrameHeader(),
                new ReadRequestExtension()));
    }

    // ---------------------------------------------------------------- the frames

    /** Valid frames, and each broken in one way, every one as long as its header says. */
    private static Map<String, byte[]> cases() {
        Segmenter s = new Segmenter(new FramingConfig(SEGMENT, false, 64));
        s.beginSend(1, 0, MemorySegment.ofArray(new byte[2500]), 0, 2500);
        byte[] first = frame(s, 0);
        byte[] middle = frame(s, 1);
        byte[] last = frame(s, 2);
        s.beginReadRequest(2, 7, 0, 4096, 8, 0);
        byte[] read = frame(s, 0);
        byte[] ack = new byte[FrameHeader.LENGTH];
        FlowControl.writeAcknowledge(new FrameHeader().wrap(MemorySegment.ofArray(ack), 0), 5, 9, false, false);
        byte[] nak = new byte[FrameHeader.LENGTH];
        NegativeAcknowledge.write(new FrameHeader().wrap(MemorySegment.ofArray(nak), 0), 5, FrameError.REMOTE_ACCESS, 6);
        s.beginSend(3, 1, MemorySegment.ofArray(new byte[0]), 0, 0);
        byte[] empty = frame(s, 0);

        Map<String, byte[]> cases = new LinkedHashMap<>();
        cases.put("first", first);
        cases.put("middle", middle);
        cases.put("last", last);
        cases.put("read request", read);
        cases.put("acknowledge", ack);
        cases.put("nak", nak);
        cases.put("empty send only", empty);
        cases.put("timestamped", with(first, h -> h.timestampPresent(true).timestamp(5).timestampEcho(6)));
        cases.put("version 3", with(first, h -> h.version(3)));
        cases.put("version 0", with(first, h -> h.version(0)));
        cases.put("reserved bits", with(first, h -> h.flags(h.flags() | 1)));
        cases.put("opcode 0x12", with(first, h -> h.opcode(0x12)));
        cases.put("opcode 0xff", with(first, h -> h.opcode(0xFF)));
        cases.put("extension 12 on a SEND", with(first, h -> h.extLength(12)));
        cases.put("FIRST without more_segments", with(first, h -> h.moreSegments(false)));
        cases.put("LAST with more_segments", with(last, h -> h.moreSegments(true)));
        cases.put("rtr on a SEND", with(first, h -> h.rtr(true)));
        cases.put("rtr and rtr_ack", with(ack, h -> h.rtr(true).rtrAck(true)));
        cases.put("rtr_ack", with(ack, h -> h.rtrAck(true)));
        cases.put("ack_request on a LAST", with(last, h -> h.ackRequest(true)));
        cases.put("ack_request on a FIRST", with(first, h -> h.ackRequest(true)));
        cases.put("ack_request on an ACKNOWLEDGE", with(ack, h -> h.ackRequest(true)));
        cases.put("ack_request on a read request", with(read, h -> h.ackRequest(true)));
        cases.put("timestamp without its flag", with(first, h -> h.timestamp(5)));
        cases.put("echo without the flag", with(first, h -> h.timestampEcho(5)));
        cases.put("immediate on SEND_FIRST", with(first, h -> h.immData(1)));
        cases.put("NAK syndrome 22", with(nak, h -> h.messageOffsetAndSegment(0, 22)));
        cases.put("NAK syndrome 1", with(nak, h -> h.messageOffsetAndSegment(0, 1)));
        cases.put("NAK syndrome 200", with(nak, h -> h.messageOffsetAndSegment(0, 200)));
        cases.put("NAK failed MSN 0x10000", with(nak, h -> h.immData(0x10000)));
        cases.put("NAK naming no message", with(nak, h -> h.immData(-1)));
        cases.put("NAK with rtr", with(nak, h -> h.rtr(true)));
        cases.put("NAK with an offset", with(nak, h -> h.messageOffsetAndSegment(1024, 14)));
        cases.put("ACKNOWLEDGE with payload", with(ack, h -> h.length(4)));
        cases.put("read request with an offset", with(read, h -> h.messageOffsetAndSegment(0, 1)));
        cases.put("read request too long", withBytes(read, b -> b.putInt(FrameHeader.LENGTH + 12, 1 << 24)));
        cases.put("payload over the segment size", with(last, h -> h.length(SEGMENT + 1)));
        cases.put("message over 2^24-1", with(last, h -> h.messageOffsetAndSegment((1 << 24) - SEGMENT, 0xFF).length(SEGMENT)));
        cases.put("misaligned offset", with(middle, h -> h.messageOffsetAndSegment(1000, 0)));
        cases.put("wrong segment number", with(middle, h -> h.messageOffsetAndSegment(SEGMENT, 7)));
        cases.put("MIDDLE at offset 0", with(middle, h -> h.messageOffsetAndSegment(0, 0)));
        cases.put("FIRST at offset 1024", with(first, h -> h.messageOffsetAndSegment(SEGMENT, 1)));
        cases.put("short FIRST", with(first, h -> h.length(100)));
        cases.put("empty LAST", with(last, h -> h.length(0)));

        // SEND_PACKED: payload at byte 36, records at 36 (5 bytes), 45 (empty, immediate), 53 (3 bytes, immediate).
        byte[] packed = packed(5, 0, 3);
        cases.put("packed", packed);
        cases.put("packed with ack_request", with(packed, h -> h.ackRequest(true)));
        cases.put("packed, one empty message", packed(0));
        cases.put("packed with immediate data in the header", with(packed, h -> h.immData(1)));
        cases.put("packed with more_segments", with(packed, h -> h.moreSegments(true)));
        cases.put("packed with rtr", with(packed, h -> h.rtr(true)));
        cases.put("packed with an offset", with(packed, h -> h.messageOffsetAndSegment(SEGMENT, 1)));
        cases.put("packed with a segment number", with(packed, h -> h.messageOffsetAndSegment(0, 1)));
        cases.put("packed without its extension", with(packed, h -> h.extLength(0)));
        cases.put("packed shorter than a record header", with(packed, h -> h.length(3)));
        cases.put("packed with no payload", with(packed, h -> h.length(0)));
        cases.put("packed over the segment size", with(packed, h -> h.length(SEGMENT + 1)));
        cases.put("packed record past the payload", withBytes(packed, b -> b.put(53 + 3, (byte) 4)));
        cases.put("packed record with reserved bits", withBytes(packed, b -> b.put(45, (byte) 0x81)));
        cases.put("packed tail shorter than a record header", withBytes(packed, b -> b.put(53 + 3, (byte) 0)));
        cases.put("packed first record past the payload", withBytes(packed, b -> b.put(36 + 1, (byte) 1)));
        return cases;
    }

    /** Frames judged with {@link #LARGE_SEGMENT}: a packed frame at and over its bound, a SEND_ONLY over it. */
    private static Map<String, byte[]> largeSegmentCases() {
        Map<String, byte[]> cases = new LinkedHashMap<>();
        int most = PackedSends.MAX_LENGTH - PackedSends.RECORD_HEADER;
        cases.put("packed of 4096 bytes", packed(most));
        cases.put("packed of 4097 bytes", with(packed(most), h -> h.length(PackedSends.MAX_LENGTH + 1)));
        Segmenter s = new Segmenter(new FramingConfig(LARGE_SEGMENT, false, 64));
        s.beginSend(1, 0, MemorySegment.ofArray(new byte[PackedSends.MAX_LENGTH + 1]), 0, PackedSends.MAX_LENGTH + 1);
        cases.put("SEND_ONLY of 4097 bytes", frame(s, 0));
        return cases;
    }

    /**
     * A SEND_PACKED frame (MSN 9, RSN 4) of messages of these lengths, as the sender writes it: every message
     * after the first carries immediate data.
     */
    private static byte[] packed(int... lengths) {
        int bytes = 0;
        for (int i = 0; i < lengths.length; i++) {
            bytes += PackedSends.recordBytes(lengths[i], i > 0);
        }
        byte[] frame = new byte[Segmenter.PACKED_HEADER_BYTES + bytes];
        MemorySegment m = MemorySegment.ofArray(frame);
        long at = Segmenter.PACKED_HEADER_BYTES;
        for (int i = 0; i < lengths.length; i++) {
            at = PackedSends.writeRecord(m, at, MemorySegment.ofArray(new byte[lengths[i]]), 0, lengths[i], i > 0, i);
        }
        new Segmenter(new FramingConfig(LARGE_SEGMENT, false, 64)).writePackedHeader(9, 4, bytes, false, m, 0);
        return frame;
    }

    private static byte[] frame(Segmenter s, long index) {
        byte[] out = new byte[FrameHeader.LENGTH + ReadRequestExtension.LENGTH + LARGE_SEGMENT];
        MemorySegment m = MemorySegment.ofArray(out);
        int headerBytes = s.writeFrame(index, m, 0);
        if (s.payloadLength() > 0) {
            MemorySegment.copy(s.source(), s.payloadOffset(), m, headerBytes, s.payloadLength());
        }
        return Arrays.copyOf(out, headerBytes + s.payloadLength());
    }

    /** A copy of {@code frame} changed by {@code change}, cut or zero-padded to the length its header announces. */
    private static byte[] with(byte[] frame, Consumer<FrameHeader> change) {
        byte[] copy = frame.clone();
        FrameHeader h = new FrameHeader().wrap(MemorySegment.ofArray(copy), 0);
        change.accept(h);
        return Arrays.copyOf(copy, (int) h.frameLength());
    }

    private static byte[] withBytes(byte[] frame, Consumer<ByteBuffer> change) {
        byte[] copy = frame.clone();
        change.accept(ByteBuffer.wrap(copy));
        return copy;
    }
}
