package io.zcnet.framing;

import static io.zcnet.framing.WireLayouts.U16;
import static io.zcnet.framing.WireLayouts.U32;
import static io.zcnet.framing.WireLayouts.U8;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * Flyweight over the 32-byte base header of a wire format v1 frame (DESIGN.md, "message-framing").
 * All integers are big-endian; bytes 0-23 are the {@code tcp_bth} option body.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |ver|T|M|R|A|0 0|    opcode     |              msn              |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          message byte offset (24 bits)        |  segment (8)  |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                             icrc                              |  8
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           timestamp                           | 12
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        timestamp_echo                         | 16
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           imm_data                            | 20
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        length (payload)                       | 24
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          ext_length           |            subflow            | 28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   T = timestamp_present, M = more_segments, R = rtr, A = rtr_ack
 * </pre>
 *
 * <p>The header is followed by {@code ext_length} bytes of extension, a length the opcode alone decides
 * ({@link Opcode#extensionLength}): none on ACKNOWLEDGE, the RSN on SEND frames ({@link UntaggedExtension},
 * 4 bytes), a {@link TaggedExtension} on WRITE and READ RESPONSE frames (12 bytes, 16 with the RSN on the
 * last frame of a WRITE with immediate), a {@link ReadRequestExtension} on READ REQUEST (28 bytes).
 *
 * <p>The flyweight only reads and writes bytes: it validates nothing on the wire (see
 * {@link FrameValidator}) but its setters reject values that do not fit their field. Not thread-safe:
 * one instance per thread, re-pointed with {@link #wrap}; it holds no state besides the position.
 */
public final class FrameHeader {

    /** The base header as a struct, from which every offset below is derived. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U8.withName("flags"),
            U8.withName("opcode"),
            U16.withName("msn"),
            U32.withName("mbo_seg"),
            U32.withName("icrc"),
            U32.withName("timestamp"),
            U32.withName("timestamp_echo"),
            U32.withName("imm_data"),
            U32.withName("length"),
            U16.withName("ext_length"),
            U16.withName("subflow"));

    /** Size of the base header in bytes. */
    public static final int LENGTH = (int) LAYOUT.byteSize();

    public static final long FLAGS_OFFSET = offset("flags");
    public static final long OPCODE_OFFSET = offset("opcode");
    public static final long MSN_OFFSET = offset("msn");
    public static final long MBO_SEG_OFFSET = offset("mbo_seg");
    public static final long ICRC_OFFSET = offset("icrc");
    public static final long TIMESTAMP_OFFSET = offset("timestamp");
    public static final long TIMESTAMP_ECHO_OFFSET = offset("timestamp_echo");
    public static final long IMM_DATA_OFFSET = offset("imm_data");
    public static final long LENGTH_OFFSET = offset("length");
    public static final long EXT_LENGTH_OFFSET = offset("ext_length");
    public static final long SUBFLOW_OFFSET = offset("subflow");

    /** Protocol version carried in bits 7-6 of {@code flags}. */
    public static final int VERSION = 1;
    static final int VERSION_SHIFT = 6;
    public static final int FLAG_TIMESTAMP_PRESENT = 1 << 5;
    public static final int FLAG_MORE_SEGMENTS = 1 << 4;
    public static final int FLAG_RTR = 1 << 3;
    public static final int FLAG_RTR_ACK = 1 << 2;
    /** Bits 1-0 of {@code flags}: must be zero. */
    public static final int FLAGS_RESERVED = 0b11;

    /** Largest byte offset inside a message (24 bits); a message holds at most this many bytes. */
    public static final int MAX_MESSAGE_OFFSET = (1 << 24) - 1;
    static final int OFFSET_SHIFT = 8;
    static final int SEGMENT_MASK = 0xFF;

    private MemorySegment segment;
    private long base;

    private static long offset(String field) {
        return LAYOUT.byteOffset(groupElement(field));
    }

    /**
     * Points this flyweight at {@code segment} from {@code offset}.
     *
     * @throws IllegalArgumentException if fewer than {@link #LENGTH} bytes remain there
     */
    public FrameHeader wrap(MemorySegment segment, long offset) {
        if (segment == null) {
            throw new IllegalArgumentException("segment is null");
        }
        if (offset < 0 || offset > segment.byteSize() - LENGTH) {
            throw new IllegalArgumentException("a " + LENGTH + "-byte header does not fit at offset " + offset
                    + " of a " + segment.byteSize() + "-byte segment");
        }
        this.segment = segment;
        this.base = offset;
        return this;
    }

    public MemorySegment segment() {
        return segment;
    }

    /** Offset of the header inside {@link #segment()}. */
    public long offset() {
        return base;
    }

    /** Zeroes all 32 bytes. */
    public FrameHeader clear() {
        // Four stores rather than a slice to fill: a slice is an object, and this runs for every frame.
        for (long at = 0; at < LENGTH; at += Long.BYTES) {
            segment.set(WireLayouts.U64, base + at, 0L);
        }
        return this;
    }

    public int flags() {
        return segment.get(U8, base + FLAGS_OFFSET) & 0xFF;
    }

    public FrameHeader flags(int flags) {
        checkUnsigned(flags, 0xFF, "flags");
        segment.set(U8, base + FLAGS_OFFSET, (byte) flags);
        return this;
    }

    /** Bits 7-6 of {@code flags}. */
    public int version() {
        return flags() >>> VERSION_SHIFT;
    }

    public FrameHeader version(int version) {
        checkUnsigned(version, 3, "version");
        return flags((flags() & ~(3 << VERSION_SHIFT)) | version << VERSION_SHIFT);
    }

    public boolean timestampPresent() {
        return (flags() & FLAG_TIMESTAMP_PRESENT) != 0;
    }

    public FrameHeader timestampPresent(boolean on) {
        return flag(FLAG_TIMESTAMP_PRESENT, on);
    }

    public boolean moreSegments() {
        return (flags() & FLAG_MORE_SEGMENTS) != 0;
    }

    public FrameHeader moreSegments(boolean on) {
        return flag(FLAG_MORE_SEGMENTS, on);
    }

    public boolean rtr() {
        return (flags() & FLAG_RTR) != 0;
    }

    public FrameHeader rtr(boolean on) {
        return flag(FLAG_RTR, on);
    }

    public boolean rtrAck() {
        return (flags() & FLAG_RTR_ACK) != 0;
    }

    public FrameHeader rtrAck(boolean on) {
        return flag(FLAG_RTR_ACK, on);
    }

    private FrameHeader flag(int bit, boolean on) {
        int f = flags();
        return flags(on ? f | bit : f & ~bit);
    }

    public int opcode() {
        return segment.get(U8, base + OPCODE_OFFSET) & 0xFF;
    }

    public FrameHeader opcode(int opcode) {
        checkUnsigned(opcode, 0xFF, "opcode");
        segment.set(U8, base + OPCODE_OFFSET, (byte) opcode);
        return this;
    }

    /** Message sequence number, 0 .. 65535. */
    public int msn() {
        return segment.get(U16, base + MSN_OFFSET) & 0xFFFF;
    }

    public FrameHeader msn(int msn) {
        checkUnsigned(msn, 0xFFFF, "msn");
        segment.set(U16, base + MSN_OFFSET, (short) msn);
        return this;
    }

    /** The raw {@code mbo_seg} word. */
    public int mboSeg() {
        return segment.get(U32, base + MBO_SEG_OFFSET);
    }

    /** Byte offset of this payload inside its message, 0 .. 2^24-1 (bits 31-8 of {@code mbo_seg}). */
    public int messageOffset() {
        return mboSeg() >>> OFFSET_SHIFT;
    }

    /** Segment number inside the message, mod 256 (bits 7-0 of {@code mbo_seg}). */
    public int segmentNumber() {
        return mboSeg() & SEGMENT_MASK;
    }

    public FrameHeader messageOffsetAndSegment(int messageOffset, int segmentNumber) {
        checkUnsigned(messageOffset, MAX_MESSAGE_OFFSET, "message offset");
        checkUnsigned(segmentNumber, SEGMENT_MASK, "segment number");
        segment.set(U32, base + MBO_SEG_OFFSET, messageOffset << OFFSET_SHIFT | segmentNumber);
        return this;
    }

    public int icrc() {
        return segment.get(U32, base + ICRC_OFFSET);
    }

    public FrameHeader icrc(int icrc) {
        segment.set(U32, base + ICRC_OFFSET, icrc);
        return this;
    }

    public int timestamp() {
        return segment.get(U32, base + TIMESTAMP_OFFSET);
    }

    public FrameHeader timestamp(int micros) {
        segment.set(U32, base + TIMESTAMP_OFFSET, micros);
        return this;
    }

    public int timestampEcho() {
        return segment.get(U32, base + TIMESTAMP_ECHO_OFFSET);
    }

    public FrameHeader timestampEcho(int micros) {
        segment.set(U32, base + TIMESTAMP_ECHO_OFFSET, micros);
        return this;
    }

    public int immData() {
        return segment.get(U32, base + IMM_DATA_OFFSET);
    }

    public FrameHeader immData(int imm) {
        segment.set(U32, base + IMM_DATA_OFFSET, imm);
        return this;
    }

    /** Payload bytes after the extension, as an unsigned 32-bit value. */
    public long length() {
        return segment.get(U32, base + LENGTH_OFFSET) & 0xFFFF_FFFFL;
    }

    public FrameHeader length(long length) {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("length " + length + " does not fit 32 unsigned bits");
        }
        segment.set(U32, base + LENGTH_OFFSET, (int) length);
        return this;
    }

    public int extLength() {
        return segment.get(U16, base + EXT_LENGTH_OFFSET) & 0xFFFF;
    }

    public FrameHeader extLength(int extLength) {
        checkUnsigned(extLength, 0xFFFF, "ext_length");
        segment.set(U16, base + EXT_LENGTH_OFFSET, (short) extLength);
        return this;
    }

    public int subflow() {
        return segment.get(U16, base + SUBFLOW_OFFSET) & 0xFFFF;
    }

    public FrameHeader subflow(int subflow) {
        checkUnsigned(subflow, 0xFFFF, "subflow");
        segment.set(U16, base + SUBFLOW_OFFSET, (short) subflow);
        return this;
    }

    /** Header, extension and payload bytes: {@code 32 + ext_length + length}. */
    public long frameLength() {
        return LENGTH + extLength() + length();
    }

    private static void checkUnsigned(int value, int max, String field) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(field + " " + value + " outside 0.." + max);
        }
    }

    @Override
    public String toString() {
        if (segment == null) {
            return "FrameHeader[unwrapped]";
        }
        return "FrameHeader[ver=" + version() + " opcode=" + Opcode.name(opcode()) + " msn=" + msn()
                + " offset=" + messageOffset() + " seg=" + segmentNumber() + " more=" + moreSegments()
                + " length=" + length() + " ext=" + extLength() + " subflow=" + subflow() + "]";
    }
}
