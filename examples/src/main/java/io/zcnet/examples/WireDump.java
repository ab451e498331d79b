package io.zcnet.examples;

import io.zcnet.collective.NacaHeader;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FrameValidator;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Icrc;
import io.zcnet.framing.Msn;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.framing.Opcode;
import io.zcnet.framing.PackedSends;
import io.zcnet.framing.ReadRequestExtension;
import io.zcnet.framing.TaggedExtension;
import io.zcnet.framing.UntaggedExtension;

import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The wire-dump tool behind {@code ./zcnet dump} ({@link DumpCommand}): prints a raw wire format v1 frame
 * stream one line per frame (or one JSON object per line with {@code --json}, fields named as in
 * docs/wire-format.md, extension fields after the header's: {@code rkey} and {@code region_offset} of tagged frames,
 * the read request's five, and {@code rsn}, the receive a frame consumes, on every SEND frame and the last
 * frame of a WRITE with immediate; a SEND_PACKED frame's {@code records}, an array of one object per message
 * with its {@code msn}, {@code rsn}, {@code immediate_present}, {@code message_length} and {@code imm_data}; the
 * NACA header of an aggregation message, {@code naca}, where {@link NacaDump} finds one), and
 * with {@code --encode} turns such JSON lines back into frames so frames can be crafted by hand ({@code records}
 * is derived: a packed frame's bytes are its {@code payload_hex}). It lives here, not in message-framing,
 * because it does I/O: message-framing stays pure logic. A diagnostic tool, not a fast path: it allocates freely, but never in
 * proportion to a length it reads (a frame's bytes are bounded by the segment size given with
 * {@code --mss}).
 *
 * <pre>
 * dump   [--json [--payload]] [--mss N] [FILE|-]   frames in, lines out (--payload adds payload_hex)
 * encode  --encode [--icrc] [FILE|-]            JSON lines in, frames out
 * </pre>
 *
 * A byte stream cannot be resynchronised after a bad header, so dumping stops at the first rejected
 * frame with its {@link FrameError} and byte position; so it does at a frame {@link FrameValidator#validateFrame}
 * refuses whole (a read request's length, a packed frame's records), naming what is wrong with it. An ICRC
 * mismatch is reported per frame ({@code icrc_ok: false}) and does not stop the dump. Exit codes: 0 success, 1 rejected input, 2 usage
 * or I/O error. Stateless apart from its arguments; each call is independent.
 */
final class WireDump {

    private static final String USAGE = "usage: dump [--json [--payload]] [--mss N] [FILE|-]\n"
            + "       dump --encode [--icrc] [FILE|-]   (JSON lines in, raw frames out)";

    private WireDump() {
    }

    /** Runs the tool; {@code out} receives lines (dump) or frame bytes ({@code --encode}); returns the exit code. */
    static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
        if (args == null || in == null || out == null || err == null) {
            throw new IllegalArgumentException("args and streams are required");
        }
        boolean json = false;
        boolean encode = false;
        boolean computeIcrc = false;
        boolean payload = false;
        int mss = FramingConfig.defaults().segmentSize();
        String file = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--json" -> json = true;
                case "--encode" -> encode = true;
                case "--icrc" -> computeIcrc = true;
                case "--payload" -> payload = true;
                case "--mss" -> {
                    if (i + 1 == args.length) {
                        err.println("--mss needs a value\n" + USAGE);
                        return 2;
                    }
                    try {
                        mss = Integer.parseInt(args[++i]);
                        new FramingConfig(mss, false, 1);
                    } catch (IllegalArgumentException e) {
                        err.println("bad --mss: " + e.getMessage());
                        return 2;
                    }
                }
                case "-h", "--help" -> {
                    out.println(USAGE);
                    return 0;
                }
                default -> {
                    if (args[i].startsWith("--") || file != null) {
                        err.println("unexpected argument " + args[i] + "\n" + USAGE);
                        return 2;
                    }
                    file = args[i];
                }
            }
        }
        try (InputStream source = file == null || file.equals("-") ? nonClosing(in) : new FileInputStream(file)) {
            return encode ? encode(source, out, err, computeIcrc) : dump(source, out, json, payload, mss);
        } catch (IOException e) {
            err.println("I/O error: " + e.getMessage());
            return 2;
        }
    }

    // ---------------------------------------------------------------- dump

    private static int dump(InputStream in, PrintStream out, boolean json, boolean withPayload, int mss) throws IOException {
        byte[] frame = new byte[FrameHeader.LENGTH + ReadRequestExtension.LENGTH + mss];
        MemorySegment segment = MemorySegment.ofArray(frame);
        FrameHeader header = new FrameHeader().wrap(segment, 0);
        ReadRequestExtension readRequest = new ReadRequestExtension();
        Icrc icrc = new Icrc();
        long position = 0;
        long index = 0;
        while (true) {
            int got = in.readNBytes(frame, 0, FrameHeader.LENGTH);
            if (got == 0) {
                return 0;
            }
            if (got < FrameHeader.LENGTH) {
                return reject(out, json, index, position, FrameError.TRUNCATED, "stream ends inside a header");
            }
            int error = FrameValidator.validateHeader(header, mss);
            if (error != FrameError.OK) {
                return reject(out, json, index, position, error, header.toString());
            }
            int rest = header.extLength() + (int) header.length();
            if (in.readNBytes(frame, FrameHeader.LENGTH, rest) < rest) {
                return reject(out, json, index, position, FrameError.TRUNCATED, "stream ends inside the frame");
            }
            error = FrameValidator.validateFrame(segment, 0, FrameHeader.LENGTH + rest, mss, header, readRequest);
            Packed packed = Opcode.isPacked(header.opcode()) ? Packed.of(segment, header) : null;
            if (error != FrameError.OK) {
                String detail = packed != null && packed.problem != null ? packed.problem
                        : header.opcode() == Opcode.RDMA_READ_REQUEST ? "read request length" : header.toString();
                return reject(out, json, index, position, error, detail);
            }
            Boolean icrcOk = header.icrc() == 0 ? null : icrc.compute(segment, 0) == header.icrc();
            out.println(json ? toJson(segment, header, icrcOk, withPayload, packed)
                    : toText(index, position, segment, header, icrcOk, packed));
            position += FrameHeader.LENGTH + rest;
            index++;
        }
    }

    private static int reject(PrintStream out, boolean json, long index, long position, int error, String detail) {
        if (json) {
            out.println("{\"error\":\"" + FrameError.name(error) + "\",\"frame\":" + index + ",\"position\":" + position
                    + ",\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}");
        } else {
            out.println("error: frame " + index + " at byte " + position + ": " + FrameError.name(error) + " (" + detail
                    + "); cannot resynchronise, stopping");
        }
        return 1;
    }

    private static String toJson(MemorySegment segment, FrameHeader h, Boolean icrcOk, boolean withPayload, Packed packed) {
        StringBuilder sb = new StringBuilder(256).append('{');
        field(sb, "ver", h.version());
        field(sb, "timestamp_present", h.timestampPresent());
        field(sb, "more_segments", h.moreSegments());
        field(sb, "rtr", h.rtr());
        field(sb, "rtr_ack", h.rtrAck());
        field(sb, "ack_request", h.ackRequest());
        field(sb, "quiet", h.quiet());
        name(sb, "opcode").append('"').append(Opcode.name(h.opcode())).append('"');
        field(sb, "msn", h.msn());
        field(sb, "offset", h.messageOffset());
        field(sb, "seg", h.segmentNumber());
        field(sb, "icrc", Integer.toUnsignedLong(h.icrc()));
        name(sb, "icrc_ok").append(icrcOk);
        field(sb, "timestamp", Integer.toUnsignedLong(h.timestamp()));
        field(sb, "timestamp_echo", Integer.toUnsignedLong(h.timestampEcho()));
        field(sb, "imm_data", Integer.toUnsignedLong(h.immData()));
        field(sb, "length", h.length());
        field(sb, "ext_length", h.extLength());
        field(sb, "subflow", h.subflow());
        if (Opcode.isTagged(h.opcode())) {
            TaggedExtension t = new TaggedExtension().wrap(segment, FrameHeader.LENGTH);
            field(sb, "rkey", Integer.toUnsignedLong(t.rkey()));
            name(sb, "region_offset").append(Long.toUnsignedString(t.regionOffset()));
        }
        if (Opcode.rsnOffset(h.opcode()) >= 0) {
            field(sb, "rsn", rsn(segment, h.opcode()));
        } else if (h.opcode() == Opcode.RDMA_READ_REQUEST) {
            ReadRequestExtension r = new ReadRequestExtension().wrap(segment, FrameHeader.LENGTH);
            field(sb, "rkey", Integer.toUnsignedLong(r.rkey()));
            name(sb, "region_offset").append(Long.toUnsignedString(r.regionOffset()));
            field(sb, "read_length", r.readLength());
            field(sb, "sink_rkey", Integer.toUnsignedLong(r.sinkRkey()));
            name(sb, "sink_offset").append(Long.toUnsignedString(r.sinkOffset()));
        }
        if (packed != null) {
            name(sb, "records").append('[');
            for (PackedRecord r : packed.records) {
                StringBuilder o = new StringBuilder(96).append('{');
                field(o, "msn", r.msn);
                field(o, "rsn", r.rsn);
                field(o, "immediate_present", r.immediate);
                field(o, "message_length", r.length);
                if (r.immediate) {
                    field(o, "imm_data", r.imm);
                }
                if (withPayload) {
                    payloadHex(o, segment, r.at, r.length);
                }
                sb.append(sb.charAt(sb.length() - 1) == '[' ? "" : ",").append(o).append('}');
            }
            sb.append(']');
        }
        NacaHeader naca = NacaDump.find(segment, h);
        if (naca != null) {
            NacaDump.json(sb, naca, h);
        }
        if (withPayload) {
            payloadHex(sb, segment, FrameHeader.LENGTH + h.extLength(), h.length());
        }
        return sb.append('}').toString();
    }

    private static void payloadHex(StringBuilder sb, MemorySegment segment, long from, long length) {
        name(sb, "payload_hex").append('"')
                .append(HexFormat.of().formatHex(segment.asSlice(from, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)))
                .append('"');
    }

    private static void field(StringBuilder sb, String name, long value) {
        name(sb, name).append(value);
    }

    private static void field(StringBuilder sb, String name, boolean value) {
        name(sb, name).append(value);
    }

    private static StringBuilder name(StringBuilder sb, String name) {
        return sb.append(sb.length() > 1 ? ",\"" : "\"").append(name).append("\":");
    }

    private static String toText(long index, long position, MemorySegment segment, FrameHeader h, Boolean icrcOk,
                                 Packed packed) {
        StringBuilder sb = new StringBuilder(160);
        sb.append('#').append(index).append(" @").append(position).append(' ').append(Opcode.name(h.opcode()))
                .append(" msn=").append(h.msn()).append(" offset=").append(h.messageOffset())
                .append(" seg=").append(h.segmentNumber()).append(" len=").append(h.length())
                .append(" subflow=").append(h.subflow());
        if (h.moreSegments()) {
            sb.append(" more");
        }
        if (h.rtr()) {
            sb.append(" rtr");
        }
        if (h.rtrAck()) {
            sb.append(" rtr_ack");
        }
        if (h.ackRequest()) {
            sb.append(" ack_request");
        }
        if (h.quiet()) {
            sb.append(" quiet");
        }
        if (h.timestampPresent()) {
            sb.append(" ts=").append(Integer.toUnsignedLong(h.timestamp()));
        }
        if (h.timestampEcho() != 0) {
            sb.append(" ts_echo=").append(Integer.toUnsignedLong(h.timestampEcho()));
        }
        if (NegativeAcknowledge.isNegative(h)) {
            int failed = NegativeAcknowledge.failedMsn(h);
            sb.append(" nak=").append(FrameError.name(NegativeAcknowledge.frameError(h))).append(" failed_msn=")
                    .append(failed == NegativeAcknowledge.NO_MESSAGE ? "none" : Integer.toUnsignedString(failed));
        } else if (h.immData() != 0 || Opcode.hasImmediate(h.opcode())) {
            sb.append(" imm=").append(Integer.toUnsignedLong(h.immData()));
        }
        sb.append(" icrc=").append(icrcOk == null ? "none" : String.format("0x%08x(%s)", h.icrc(), icrcOk ? "ok" : "BAD"));
        if (Opcode.isTagged(h.opcode())) {
            TaggedExtension t = new TaggedExtension().wrap(segment, FrameHeader.LENGTH);
            sb.append(" rkey=0x").append(Integer.toHexString(t.rkey())).append(" region_offset=")
                    .append(Long.toUnsignedString(t.regionOffset()));
        }
        if (Opcode.rsnOffset(h.opcode()) >= 0) {
            sb.append(" rsn=").append(rsn(segment, h.opcode()));
        } else if (h.opcode() == Opcode.RDMA_READ_REQUEST) {
            ReadRequestExtension r = new ReadRequestExtension().wrap(segment, FrameHeader.LENGTH);
            sb.append(" rkey=0x").append(Integer.toHexString(r.rkey())).append(" region_offset=")
                    .append(Long.toUnsignedString(r.regionOffset())).append(" read_length=").append(r.readLength())
                    .append(" sink_rkey=0x").append(Integer.toHexString(r.sinkRkey())).append(" sink_offset=")
                    .append(Long.toUnsignedString(r.sinkOffset()));
        }
        if (packed != null) {
            sb.append(" records=").append(packed.records.size());
            for (PackedRecord r : packed.records) {
                sb.append(" [msn=").append(r.msn).append(" rsn=").append(r.rsn).append(" len=").append(r.length);
                if (r.immediate) {
                    sb.append(" imm=").append(r.imm);
                }
                sb.append(']');
            }
        }
        NacaHeader naca = NacaDump.find(segment, h);
        if (naca != null) {
            NacaDump.text(sb, naca, h);
        }
        return sb.toString();
    }

    /** One message of a SEND_PACKED frame: its numbers, immediate data, and where its bytes are in the frame. */
    private record PackedRecord(int msn, long rsn, boolean immediate, long imm, long at, int length) {
    }

    /**
     * The records of a SEND_PACKED frame (docs/wire-format.md, section 6.1) up to the first that breaks the
     * rules, and what is wrong with that one ({@code problem}), or null when they fill the payload exactly.
     */
    private record Packed(List<PackedRecord> records, String problem) {

        /** Reads the records of the packed frame at the start of {@code frame}, whose header {@code h} wraps. */
        static Packed of(MemorySegment frame, FrameHeader h) {
            int rsn = new UntaggedExtension().wrap(frame, FrameHeader.LENGTH).rsn();
            long start = FrameHeader.LENGTH + h.extLength();
            long end = start + h.length();
            List<PackedRecord> records = new ArrayList<>();
            for (long at = start; at < end; ) {
                int k = records.size();
                String where = "record " + k + " at payload byte " + (at - start) + ": ";
                if (end - at < PackedSends.RECORD_HEADER) {
                    return new Packed(records, where + (end - at) + " bytes left, fewer than a record header");
                }
                int descriptor = PackedSends.descriptor(frame, at);
                boolean immediate = PackedSends.hasImmediate(descriptor);
                int length = PackedSends.messageLength(descriptor);
                if (descriptor != (length | (immediate ? 1 << 31 : 0))) {
                    return new Packed(records, where + "reserved bits set in descriptor 0x" + HexFormat.of().toHexDigits(descriptor));
                }
                long bytesAt = at + PackedSends.headerBytes(descriptor);
                if (bytesAt + length > end) {
                    return new Packed(records, where + "its " + (bytesAt - at + length) + " bytes run past the "
                            + h.length() + "-byte payload");
                }
                records.add(new PackedRecord(Msn.add(h.msn(), k), Integer.toUnsignedLong(rsn + k), immediate,
                        immediate ? Integer.toUnsignedLong(PackedSends.immediate(frame, at)) : 0, bytesAt, length));
                at = bytesAt + length;
            }
            return new Packed(records, records.isEmpty() ? "no record" : null);
        }
    }

    /**
     * The RSN of a frame whose opcode names the receive it consumes (every SEND frame, the last frame of a
     * WRITE with immediate), unsigned; its extension follows the header in {@code frame}.
     */
    private static long rsn(MemorySegment frame, int opcode) {
        int rsn = Opcode.isTagged(opcode) ? new TaggedExtension().wrap(frame, FrameHeader.LENGTH).rsn()
                : new UntaggedExtension().wrap(frame, FrameHeader.LENGTH).rsn();
        return Integer.toUnsignedLong(rsn);
    }

    // ---------------------------------------------------------------- encode

    private static int encode(InputStream in, PrintStream out, PrintStream err, boolean computeIcrc) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String line;
        int lineNumber = 0;
        while ((line = reader.readLine()) != null) {
            lineNumber++;
            if (line.isBlank()) {
                continue;
            }
            byte[] frame;
            try {
                frame = frameOf(FlatJson.parse(line), computeIcrc);
            } catch (IllegalArgumentException e) {
                err.println("line " + lineNumber + ": " + e.getMessage());
                out.flush();
                return 1;
            }
            out.write(frame);
        }
        out.flush();
        return 0;
    }

    /** The frame a JSON object describes; unknown fields and out-of-range values are rejected. */
    static byte[] frameOf(Map<String, Object> object, boolean computeIcrc) {
        Map<String, Object> fields = new LinkedHashMap<>(object);
        Object opcodeValue = fields.remove("opcode");
        int opcode;
        if (opcodeValue instanceof String name) {
            opcode = Opcode.valueOf(name);
            if (opcode < 0) {
                throw new IllegalArgumentException("unknown opcode name " + name);
            }
        } else if (opcodeValue instanceof Long number && number >= 0 && number <= 0xFF) {
            opcode = number.intValue();
        } else {
            throw new IllegalArgumentException("opcode (a name or 0..255) is required");
        }
        fields.remove("icrc_ok"); // derived by the dump, meaningless as input
        if (Opcode.isPacked(opcode)) {
            fields.remove("records"); // derived from the payload too
        }
        byte[] payload = null;
        Object hex = fields.remove("payload_hex");
        if (hex != null) {
            if (!(hex instanceof String s)) {
                throw new IllegalArgumentException("payload_hex must be a string");
            }
            try {
                payload = HexFormat.of().parseHex(s);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("payload_hex: " + e.getMessage());
            }
        }
        int ext = (int) number(fields, "ext_length", Math.max(0, Opcode.extensionLength(opcode)), 0xFFFF);
        long length = number(fields, "length", payload == null ? 0 : payload.length, 0xFFFF_FFFFL);
        if (payload == null) {
            if (length > FramingConfig.MAX_MESSAGE_SIZE) {
                throw new IllegalArgumentException("length " + length + " without payload_hex: give the payload bytes");
            }
            payload = new byte[(int) length];
        }
        byte[] frame = new byte[FrameHeader.LENGTH + ext + payload.length];
        MemorySegment segment = MemorySegment.ofArray(frame);
        FrameHeader h = new FrameHeader().wrap(segment, 0);
        h.version((int) number(fields, "ver", FrameHeader.VERSION, 3))
                .timestampPresent(bool(fields, "timestamp_present"))
                .moreSegments(bool(fields, "more_segments"))
                .rtr(bool(fields, "rtr"))
                .rtrAck(bool(fields, "rtr_ack"))
                .ackRequest(bool(fields, "ack_request"))
                .quiet(bool(fields, "quiet"))
                .opcode(opcode)
                .msn((int) number(fields, "msn", 0, 0xFFFF))
                .messageOffsetAndSegment((int) number(fields, "offset", 0, FrameHeader.MAX_MESSAGE_OFFSET),
                        (int) number(fields, "seg", 0, 0xFF))
                .timestamp((int) number(fields, "timestamp", 0, 0xFFFF_FFFFL))
                .timestampEcho((int) number(fields, "timestamp_echo", 0, 0xFFFF_FFFFL))
                .immData((int) number(fields, "imm_data", 0, 0xFFFF_FFFFL))
                .length(length)
                .extLength(ext)
                .subflow((int) number(fields, "subflow", 0, 0xFFFF));
        boolean icrcGiven = fields.containsKey("icrc");
        int icrc = (int) number(fields, "icrc", 0, 0xFFFF_FFFFL);
        byte[] extension = new byte[ReadRequestExtension.LENGTH];
        MemorySegment e = MemorySegment.ofArray(extension);
        int rsnAt = Opcode.rsnOffset(opcode);
        // A SEND's extension is its RSN alone: rkey and region_offset there would be misplaced.
        if (rsnAt < 0 || Opcode.isTagged(opcode)) {
            ReadRequestExtension r = new ReadRequestExtension().wrap(e, 0);
            r.rkey((int) number(fields, "rkey", 0, 0xFFFF_FFFFL));
            r.regionOffset(unsigned64(fields, "region_offset"));
            if (rsnAt < 0 && (ext >= ReadRequestExtension.LENGTH || fields.containsKey("read_length"))) {
                r.readLength(number(fields, "read_length", 0, 0xFFFF_FFFFL))
                        .sinkRkey((int) number(fields, "sink_rkey", 0, 0xFFFF_FFFFL))
                        .sinkOffset(unsigned64(fields, "sink_offset"));
            }
        }
        if (rsnAt >= 0) {
            int rsn = (int) number(fields, "rsn", 0, 0xFFFF_FFFFL);
            if (Opcode.isTagged(opcode)) {
                new TaggedExtension().wrap(e, 0).rsn(rsn);
            } else {
                new UntaggedExtension().wrap(e, 0).rsn(rsn);
            }
        }
        if (!fields.isEmpty()) {
            throw new IllegalArgumentException("unknown or misplaced fields " + fields.keySet());
        }
        System.arraycopy(extension, 0, frame, FrameHeader.LENGTH, Math.min(ext, extension.length));
        System.arraycopy(payload, 0, frame, FrameHeader.LENGTH + ext, payload.length);
        if (icrcGiven) {
            h.icrc(icrc);
        } else if (computeIcrc) {
            if (ext > ReadRequestExtension.LENGTH || length != payload.length) {
                throw new IllegalArgumentException("--icrc needs a frame whose length field matches its payload");
            }
            h.icrc(new Icrc().compute(segment, 0));
        }
        return frame;
    }

    private static long number(Map<String, Object> fields, String name, long otherwise, long max) {
        Object v = fields.remove(name);
        if (v == null) {
            return otherwise;
        }
        if (!(v instanceof Long n) || n < 0 || n > max) {
            throw new IllegalArgumentException(name + " must be an integer in 0.." + max + ", not " + v);
        }
        return n;
    }

    private static long unsigned64(Map<String, Object> fields, String name) {
        Object v = fields.remove(name);
        if (v == null) {
            return 0;
        }
        if (v instanceof Long n && n >= 0) {
            return n;
        }
        if (v instanceof FlatJson.Unsigned64 u) {
            return u.bits();
        }
        throw new IllegalArgumentException(name + " must be an integer in 0..2^64-1, not " + v);
    }

    private static boolean bool(Map<String, Object> fields, String name) {
        Object v = fields.remove(name);
        if (v == null) {
            return false;
        }
        if (!(v instanceof Boolean b)) {
            throw new IllegalArgumentException(name + " must be true or false, not " + v);
        }
        return b;
    }

    private static InputStream nonClosing(InputStream in) {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return in.read(b, off, len);
            }
        };
    }
}
