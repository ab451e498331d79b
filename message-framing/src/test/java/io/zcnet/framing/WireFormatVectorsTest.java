package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The frame test vectors of {@code docs/wire-format.md}, checked against the codec field by field: each
 * frame's bytes are decoded with the flyweights and every field compared with the document's, then the frame
 * is encoded again from the document's fields with the flyweights' setters and compared byte for byte; its
 * validation verdict, ICRC and (for a NAK) syndrome and failed MSN are recomputed. A SEND_PACKED frame's
 * records are decoded with {@link PackedSends} ({@code records[k].<name>}), and the frame is written again as
 * the sender writes it: records with {@link PackedSends#writeRecord}, header with
 * {@link Segmenter#writePackedHeader}.
 */
class WireFormatVectorsTest {

    /** Keys of a vector that are not wire fields but what the codec concludes about the frame. */
    private static final Set<String> DERIVED = Set.of("segment_size", "validation", "icrc_ok", "nak_syndrome",
            "nak_failed_msn");

    private static final List<SpecVectors> FRAMES = SpecVectors.read("zcnet-frame");

    @Test
    void theDocumentHasAVectorOfEveryRequiredKind() {
        Set<String> names = new TreeSet<>();
        FRAMES.forEach(v -> names.add(v.name()));
        assertTrue(names.containsAll(Set.of("send-only", "send-first", "send-last", "write-only-with-immediate",
                "read-request", "read-response-only", "acknowledge-rtr", "nak", "send-packed", "acknowledge-quiet")),
                names.toString());
        assertTrue(FRAMES.stream().anyMatch(v -> v.fields().containsKey("records[1].msn")
                        && v.fields().containsKey("records[0].imm_data") != v.fields().containsKey("records[1].imm_data")),
                "a SEND_PACKED vector of two records, one with immediate data");
        assertTrue(FRAMES.stream().anyMatch(v -> v.fields().get("icrc_ok").equals("true")), "a vector with an ICRC");
        assertTrue(FRAMES.stream().anyMatch(v -> v.fields().get("timestamp_present").equals("true")),
                "a vector with timestamps");
    }

    @TestFactory
    Stream<DynamicTest> everyVectorDecodesToItsFields() {
        return FRAMES.stream().map(v -> DynamicTest.dynamicTest(v.name(), () -> {
            Map<String, String> expected = wireFields(v);
            Map<String, String> decoded = decode(v.bytes());
            assertEquals(expected.keySet(), decoded.keySet(), v + ": the document lists exactly the frame's fields");
            for (Map.Entry<String, String> e : expected.entrySet()) {
                assertEquals(canonical(e.getKey(), e.getValue()), decoded.get(e.getKey()), v + " " + e.getKey());
            }
        }));
    }

    @TestFactory
    Stream<DynamicTest> everyVectorEncodesFromItsFields() {
        return FRAMES.stream().map(v -> DynamicTest.dynamicTest(v.name(),
                () -> assertArrayEquals(v.bytes(), encode(v.fields()), v + ": bytes encoded from the fields")));
    }

    @TestFactory
    Stream<DynamicTest> everyVectorHasTheVerdictItClaims() {
        return FRAMES.stream().map(v -> DynamicTest.dynamicTest(v.name(), () -> {
            MemorySegment frame = MemorySegment.ofArray(v.bytes());
            FrameHeader h = new FrameHeader().wrap(frame, 0);
            int segmentSize = Integer.parseInt(v.fields().get("segment_size"));
            int verdict = FrameValidator.validateFrame(frame, 0, frame.byteSize(), segmentSize, h,
                    new ReadRequestExtension());
            assertEquals(v.fields().get("validation"), FrameError.name(verdict), v + " validation");
            assertEquals(frame.byteSize(), FrameValidator.frameLength(frame, 0, frame.byteSize()), v + " frame length");
            String icrc = h.icrc() == 0 ? "none"
                    : String.valueOf(new Icrc().verify(frame, 0, frame, FrameHeader.LENGTH + h.extLength()));
            assertEquals(v.fields().get("icrc_ok"), icrc, v + " icrc_ok");
            if (NegativeAcknowledge.isNegative(h)) {
                assertEquals(v.fields().get("nak_syndrome"), FrameError.name(NegativeAcknowledge.frameError(h)), v + " syndrome");
                int failed = NegativeAcknowledge.failedMsn(h);
                assertEquals(v.fields().get("nak_failed_msn"),
                        failed == NegativeAcknowledge.NO_MESSAGE ? "none" : Integer.toString(failed), v + " failed MSN");
            } else {
                assertFalse(v.fields().containsKey("nak_syndrome") || v.fields().containsKey("nak_failed_msn"),
                        v + " is no NAK");
            }
        }));
    }

    private static Map<String, String> wireFields(SpecVectors v) {
        Map<String, String> wire = new LinkedHashMap<>(v.fields());
        wire.keySet().removeAll(DERIVED);
        return wire;
    }

    @TestFactory
    Stream<DynamicTest> everyPackedVectorIsWhatTheSenderWrites() {
        return FRAMES.stream().filter(v -> Opcode.valueOf(v.fields().get("opcode")) == Opcode.SEND_PACKED)
                .map(v -> DynamicTest.dynamicTest(v.name(), () -> {
                    Map<String, String> f = v.fields();
                    byte[] bytes = new byte[v.bytes().length];
                    MemorySegment frame = MemorySegment.ofArray(bytes);
                    long at = Segmenter.PACKED_HEADER_BYTES;
                    for (int k = 0; f.containsKey(record(k, "msn")); k++) {
                        byte[] message = HexFormat.of().parseHex(f.get(record(k, "payload")));
                        boolean immediate = Boolean.parseBoolean(f.get(record(k, "immediate_present")));
                        at = PackedSends.writeRecord(frame, at, MemorySegment.ofArray(message), 0, message.length, immediate,
                                immediate ? (int) SpecVectors.bits(f.get(record(k, "imm_data"))) : 0);
                    }
                    boolean icrc = f.get("icrc_ok").equals("true");
                    Segmenter segmenter = new Segmenter(new FramingConfig(Integer.parseInt(f.get("segment_size")), icrc, 64));
                    segmenter.writePackedHeader((int) SpecVectors.bits(f.get("msn")), (int) SpecVectors.bits(f.get("rsn")),
                            (int) (at - Segmenter.PACKED_HEADER_BYTES), Boolean.parseBoolean(f.get("ack_request")), frame, 0);
                    // What the subflow sets per copy, outside the ICRC.
                    FrameHeader h = new FrameHeader().wrap(frame, 0)
                            .timestampPresent(Boolean.parseBoolean(f.get("timestamp_present")))
                            .timestamp((int) SpecVectors.bits(f.get("timestamp")))
                            .timestampEcho((int) SpecVectors.bits(f.get("timestamp_echo")))
                            .subflow((int) SpecVectors.bits(f.get("subflow")));
                    assertEquals(f.get("icrc_ok").equals("none"), h.icrc() == 0, v + ": an ICRC exactly when negotiated");
                    assertArrayEquals(v.bytes(), bytes, v + ": bytes the sender writes from the records");
                }));
    }

    /** The key of field {@code name} of record {@code k} of a SEND_PACKED vector. */
    private static String record(int k, String name) {
        return "records[" + k + "]." + name;
    }

    /** The document's way of writing a value, in the form {@link #decode} gives it. */
    private static String canonical(String field, String value) {
        return switch (field.substring(field.lastIndexOf('.') + 1)) {
            case "opcode" -> value;
            case "timestamp_present", "more_segments", "rtr", "rtr_ack", "ack_request", "quiet", "immediate_present" ->
                    Boolean.toString(Boolean.parseBoolean(value));
            case "payload" -> value.toLowerCase(java.util.Locale.ROOT);
            default -> SpecVectors.number(value);
        };
    }

    /** Every field of the frame, as the flyweights read it: the header's, then the opcode's extension, then the payload. */
    static Map<String, String> decode(byte[] bytes) {
        MemorySegment frame = MemorySegment.ofArray(bytes);
        FrameHeader h = new FrameHeader().wrap(frame, 0);
        Map<String, String> f = new LinkedHashMap<>();
        f.put("ver", Integer.toString(h.version()));
        f.put("timestamp_present", Boolean.toString(h.timestampPresent()));
        f.put("more_segments", Boolean.toString(h.moreSegments()));
        f.put("rtr", Boolean.toString(h.rtr()));
        f.put("rtr_ack", Boolean.toString(h.rtrAck()));
        f.put("ack_request", Boolean.toString(h.ackRequest()));
        f.put("quiet", Boolean.toString(h.quiet()));
        f.put("opcode", Opcode.name(h.opcode()));
        f.put("msn", Integer.toString(h.msn()));
        f.put("offset", Integer.toString(h.messageOffset()));
        f.put("seg", Integer.toString(h.segmentNumber()));
        f.put("icrc", Integer.toUnsignedString(h.icrc()));
        f.put("timestamp", Integer.toUnsignedString(h.timestamp()));
        f.put("timestamp_echo", Integer.toUnsignedString(h.timestampEcho()));
        f.put("imm_data", Integer.toUnsignedString(h.immData()));
        f.put("length", Long.toString(h.length()));
        f.put("ext_length", Integer.toString(h.extLength()));
        f.put("subflow", Integer.toString(h.subflow()));
        int opcode = h.opcode();
        if (opcode == Opcode.RDMA_READ_REQUEST) {
            ReadRequestExtension r = new ReadRequestExtension().wrap(frame, FrameHeader.LENGTH);
            f.put("rkey", Integer.toUnsignedString(r.rkey()));
            f.put("region_offset", Long.toUnsignedString(r.regionOffset()));
            f.put("read_length", Long.toString(r.readLength()));
            f.put("sink_rkey", Integer.toUnsignedString(r.sinkRkey()));
            f.put("sink_offset", Long.toUnsignedString(r.sinkOffset()));
        } else if (Opcode.isTagged(opcode)) {
            TaggedExtension t = new TaggedExtension().wrap(frame, FrameHeader.LENGTH);
            f.put("rkey", Integer.toUnsignedString(t.rkey()));
            f.put("region_offset", Long.toUnsignedString(t.regionOffset()));
        }
        if (Opcode.rsnOffset(opcode) >= 0) {
            int rsn = Opcode.isTagged(opcode) ? new TaggedExtension().wrap(frame, FrameHeader.LENGTH).rsn()
                    : new UntaggedExtension().wrap(frame, FrameHeader.LENGTH).rsn();
            f.put("rsn", Integer.toUnsignedString(rsn));
        }
        int payloadAt = FrameHeader.LENGTH + h.extLength();
        f.put("payload", HexFormat.of().formatHex(frame.asSlice(payloadAt, h.length()).toArray(ValueLayout.JAVA_BYTE)));
        if (Opcode.isPacked(opcode)) {
            decodeRecords(frame, payloadAt, h, f);
        }
        return f;
    }

    /**
     * The records of the SEND_PACKED frame whose payload is at {@code payloadAt}, as {@code records[k].<name>}:
     * record {@code k}'s MSN and RSN are the frame's plus {@code k}. None when {@link PackedSends#count} refuses them.
     */
    private static void decodeRecords(MemorySegment frame, long payloadAt, FrameHeader h, Map<String, String> f) {
        int records = PackedSends.count(frame, payloadAt, h.length());
        int rsn = new UntaggedExtension().wrap(frame, FrameHeader.LENGTH).rsn();
        long at = payloadAt;
        for (int k = 0; k < records; k++) {
            int descriptor = PackedSends.descriptor(frame, at);
            int length = PackedSends.messageLength(descriptor);
            long bytesAt = at + PackedSends.headerBytes(descriptor);
            f.put(record(k, "msn"), Integer.toString(Msn.add(h.msn(), k)));
            f.put(record(k, "rsn"), Integer.toUnsignedString(rsn + k));
            f.put(record(k, "immediate_present"), Boolean.toString(PackedSends.hasImmediate(descriptor)));
            f.put(record(k, "message_length"), Integer.toString(length));
            if (PackedSends.hasImmediate(descriptor)) {
                f.put(record(k, "imm_data"), Integer.toUnsignedString(PackedSends.immediate(frame, at)));
            }
            f.put(record(k, "payload"), HexFormat.of().formatHex(frame.asSlice(bytesAt, length).toArray(ValueLayout.JAVA_BYTE)));
            at = bytesAt + length;
        }
    }

    /** The frame the fields describe, written with the flyweights' setters. */
    static byte[] encode(Map<String, String> f) {
        int opcode = Opcode.valueOf(f.get("opcode"));
        byte[] payload = HexFormat.of().parseHex(f.get("payload"));
        int ext = (int) SpecVectors.bits(f.get("ext_length"));
        byte[] bytes = new byte[FrameHeader.LENGTH + ext + payload.length];
        MemorySegment frame = MemorySegment.ofArray(bytes);
        new FrameHeader().wrap(frame, 0)
                .version((int) SpecVectors.bits(f.get("ver")))
                .timestampPresent(Boolean.parseBoolean(f.get("timestamp_present")))
                .moreSegments(Boolean.parseBoolean(f.get("more_segments")))
                .rtr(Boolean.parseBoolean(f.get("rtr")))
                .rtrAck(Boolean.parseBoolean(f.get("rtr_ack")))
                .ackRequest(Boolean.parseBoolean(f.get("ack_request")))
                .quiet(Boolean.parseBoolean(f.get("quiet")))
                .opcode(opcode)
                .msn((int) SpecVectors.bits(f.get("msn")))
                .messageOffsetAndSegment((int) SpecVectors.bits(f.get("offset")), (int) SpecVectors.bits(f.get("seg")))
                .icrc((int) SpecVectors.bits(f.get("icrc")))
                .timestamp((int) SpecVectors.bits(f.get("timestamp")))
                .timestampEcho((int) SpecVectors.bits(f.get("timestamp_echo")))
                .immData((int) SpecVectors.bits(f.get("imm_data")))
                .length(SpecVectors.bits(f.get("length")))
                .extLength(ext)
                .subflow((int) SpecVectors.bits(f.get("subflow")));
        if (opcode == Opcode.RDMA_READ_REQUEST) {
            new ReadRequestExtension().wrap(frame, FrameHeader.LENGTH)
                    .rkey((int) SpecVectors.bits(f.get("rkey")))
                    .regionOffset(SpecVectors.bits(f.get("region_offset")))
                    .readLength(SpecVectors.bits(f.get("read_length")))
                    .sinkRkey((int) SpecVectors.bits(f.get("sink_rkey")))
                    .sinkOffset(SpecVectors.bits(f.get("sink_offset")));
        } else if (Opcode.isTagged(opcode)) {
            TaggedExtension t = new TaggedExtension().wrap(frame, FrameHeader.LENGTH)
                    .rkey((int) SpecVectors.bits(f.get("rkey")))
                    .regionOffset(SpecVectors.bits(f.get("region_offset")));
            if (f.containsKey("rsn")) {
                t.rsn((int) SpecVectors.bits(f.get("rsn")));
            }
        } else if (f.containsKey("rsn")) {
            new UntaggedExtension().wrap(frame, FrameHeader.LENGTH).rsn((int) SpecVectors.bits(f.get("rsn")));
        }
        System.arraycopy(payload, 0, bytes, FrameHeader.LENGTH + ext, payload.length);
        return bytes;
    }
}
