package io.zcnet.framing;

import static io.zcnet.framing.WireLayouts.U16;
import static io.zcnet.framing.WireLayouts.U32;
import static io.zcnet.framing.WireLayouts.U8;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * Flyweight over the 32-byte base header of a wire format v1 frame (docs/wire-format.md, section 3).
 * All integers are big-endian; bytes 0-23 are the {@code tcp_bth} option body.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |ver|T|M|R|A|K|Q|    opcode     |              msn              |  0
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
 *   T = timestamp_present, M = more_segments, R = rtr, A = rtr_ack, K = ack_request, Q = quiet
 * </pre>
 *
 * <p>The header is followed by {@code ext_length} bytes of extension, a length the opcode alone decides
 * ({@link Opcode#extensionLength}): none on ACKNOWLEDGE, the RSN on SEND frames ({@link UntaggedExtension},
 * 4 bytes), a {@link TaggedExtension} on WRITE and READ RESPONSE frames (12 bytes, 16 with the RSN on the
 * last frame of a WRITE with immediate), a {@link ReadRequestExtension} on READ REQUEST (28 bytes).
 *
 * <p>The flyweight only reads and writes bytes: it validates nothing on the wire (see
 * {@link FrameValidator}) but its setters reject values that do not fit their field. Not thread-safe:
 * one instance per thread, re-pointed with {@link #wrap}; it holds no state besides the position and, once
 * {@link #load loaded}, a copy of the header.
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

    /** Offset of {@code flags} (u8). */
    public static final long FLAGS_OFFSET = offset("flags");
    /** Offset of {@code opcode} (u8). */
    public static final long OPCODE_OFFSET = offset("opcode");
    /** Offset of {@code msn} (u16). */
    public static final long MSN_OFFSET = offset("msn");
    /** Offset of {@code mbo_seg} (u32: message offset, segment number). */
    public static final long MBO_SEG_OFFSET = offset("mbo_seg");
    /** Offset of {@code icrc} (u32). */
    public static final long ICRC_OFFSET = offset("icrc");
    /** Offset of {@code timestamp} (u32, microseconds). */
    public static final long TIMESTAMP_OFFSET = offset("timestamp");
    /** Offset of {@code timestamp_echo} (u32, microseconds). */
    public static final long TIMESTAMP_ECHO_OFFSET = offset("timestamp_echo");
    /** Offset of {@code imm_data} (u32). */
    public static final long IMM_DATA_OFFSET = offset("imm_data");
    /** Offset of {@code length} (u32: payload bytes). */
    public static final long LENGTH_OFFSET = offset("length");
    /** Offset of {@code ext_length} (u16: extension bytes). */
    public static final long EXT_LENGTH_OFFSET = offset("ext_length");
    /** Offset of {@code subflow} (u16). */
    public static final long SUBFLOW_OFFSET = offset("subflow");

    /** Protocol version carried in bits 7-6 of {@code flags}. */
    public static final int VERSION = 1;
    static final int VERSION_SHIFT = 6;
    /** {@code flags} bit 5: {@code timestamp} and {@code timestamp_echo} are set. */
    public static final int FLAG_TIMESTAMP_PRESENT = 1 << 5;
    /** {@code flags} bit 4: further segments of this message follow. */
    public static final int FLAG_MORE_SEGMENTS = 1 << 4;
    /** {@code flags} bit 3: on an ACKNOWLEDGE of a new subflow, this side is ready to receive on it. */
    public static final int FLAG_RTR = 1 << 3;
    /** {@code flags} bit 2: on an ACKNOWLEDGE of a new subflow, the peer's RTR was seen. */
    public static final int FLAG_RTR_ACK = 1 << 2;
    /**
     * {@code flags} bit 1: on the last frame of a message, the sender asks for an ACKNOWLEDGE that covers the
     * message as soon as it is complete (a signaled work request waits for it); without it the receiver may
     * let the acknowledgement ride on its next frame (docs/wire-format.md, section 10).
     */
    public static final int FLAG_ACK_REQUEST = 1 << 1;
    /**
     * {@code flags} bit 0: on an ACKNOWLEDGE (not a NAK), its sender has nothing in flight and nothing to send, and
     * sends no heartbeats on this subflow until it has (docs/wire-format.md, section 10).
     */
    public static final int FLAG_QUIET = 1;

    /** Largest byte offset inside a message (24 bits); a message holds at most this many bytes. */
    public static final int MAX_MESSAGE_OFFSET = (1 << 24) - 1;
    static final int OFFSET_SHIFT = 8;
    static final int SEGMENT_MASK = 0xFF;

    private MemorySegment segment;
    private long base;
    // The header's four big-endian words as load() read them; the getters use them while loaded is set.
    private long word0;
    private long word1;
    private long word2;
    private long word3;
    private boolean loaded;

    /** A flyweight pointing nowhere yet: {@link #wrap} it before use. */
    public FrameHeader() {
    }

    private static long offset(String field) {
        return LAYOUT.byteOffset(groupElement(field));
    }

    /**
     * Points this flyweight at {@code segment} from {@code offset}.
     *
     * @param segment the memory holding the header
     * @param offset where the header starts
     * @return this flyweight
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
        this.loaded = false;
        return this;
    }

    /**
     * Reads the whole header at once, so the getters that follow take their fields from four words instead of
     * a checked memory access each: for a receiver, which reads a dozen fields of every frame, some of them
     * several times. Any setter, and {@link #wrap}, return the getters to reading memory; bytes changed other
     * than through this flyweight are not seen until the next {@code load}.
     *
     * @return this flyweight
     */
    public FrameHeader load() {
        word0 = segment.get(WireLayouts.U64, base);
        word1 = segment.get(WireLayouts.U64, base + ICRC_OFFSET);
        word2 = segment.get(WireLayouts.U64, base + TIMESTAMP_ECHO_OFFSET);
        word3 = segment.get(WireLayouts.U64, base + LENGTH_OFFSET);
        loaded = true;
        return this;
    }

    /** {@return the memory this flyweight is wrapped over} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return the offset of the header inside {@link #segment()}} */
    public long offset() {
        return base;
    }

    /**
     * Zeroes all 32 bytes.
     *
     * @return this flyweight
     */
    public FrameHeader clear() {
        // Four stores rather than a slice to fill: a slice is an object, and this runs for every frame.
        loaded = false;
        for (long at = 0; at < LENGTH; at += Long.BYTES) {
            segment.set(WireLayouts.U64, base + at, 0L);
        }
        return this;
    }

    /** {@return the raw {@code flags} byte} */
    public int flags() {
        return loaded ? (int) (word0 >>> 56) : segment.get(U8, base + FLAGS_OFFSET) & 0xFF;
    }

    /**
     * Sets the raw {@code flags} byte.
     *
     * @param flags the byte, 0 to 255
     * @return this flyweight
     */
    public FrameHeader flags(int flags) {
        checkUnsigned(flags, 0xFF, "flags");
        loaded = false;
        segment.set(U8, base + FLAGS_OFFSET, (byte) flags);
        return this;
    }

    /** {@return the protocol version: bits 7-6 of {@code flags}} */
    public int version() {
        return flags() >>> VERSION_SHIFT;
    }

    /**
     * Sets the protocol version in bits 7-6 of {@code flags}.
     *
     * @param version 0 to 3; {@link #VERSION} on every frame sent
     * @return this flyweight
     */
    public FrameHeader version(int version) {
        checkUnsigned(version, 3, "version");
        return flags((flags() & ~(3 << VERSION_SHIFT)) | version << VERSION_SHIFT);
    }

    /** {@return whether {@link #FLAG_TIMESTAMP_PRESENT} is set} */
    public boolean timestampPresent() {
        return (flags() & FLAG_TIMESTAMP_PRESENT) != 0;
    }

    /**
     * Sets or clears {@link #FLAG_TIMESTAMP_PRESENT}.
     *
     * @param on whether to set it
     * @return this flyweight
     */
    public FrameHeader timestampPresent(boolean on) {
        return flag(FLAG_TIMESTAMP_PRESENT, on);
    }

    /** {@return whether {@link #FLAG_MORE_SEGMENTS} is set} */
    public boolean moreSegments() {
        return (flags() & FLAG_MORE_SEGMENTS) != 0;
    }

    /**
     * Sets or clears {@link #FLAG_MORE_SEGMENTS}.
     *
     * @param on whether to set it
     * @return this flyweight
     */
    public FrameHeader moreSegments(boolean on) {
        return flag(FLAG_MORE_SEGMENTS, on);
    }

    /** {@return whether {@link #FLAG_RTR} is set} */
    public boolean rtr() {
        return (flags() & FLAG_RTR) != 0;
    }

    /**
     * Sets or clears {@link #FLAG_RTR}.
     *
     * @param on whether to set it
     * @return this flyweight
     */
    public FrameHeader rtr(boolean on) {
        return flag(FLAG_RTR, on);
    }

    /** {@return whether {@link #FLAG_RTR_ACK} is set} */
    public boolean rtrAck() {
        return (flags() & FLAG_RTR_ACK) != 0;
    }

    /**
     * Sets or clears {@link #FLAG_RTR_ACK}.
     *
     * @param on whether to set it
     * @return this flyweight
     */
    public FrameHeader rtrAck(boolean on) {
        return flag(FLAG_RTR_ACK, on);
    }

    /** {@return whether {@link #FLAG_QUIET} is set} */
    public boolean quiet() {
        return (flags() & FLAG_QUIET) != 0;
    }

    /**
     * Sets or clears {@link #FLAG_QUIET}.
     *
     * @param on whether to set it
     * @return this flyweight
     */
    public FrameHeader quiet(boolean on) {
        return flag(FLAG_QUIET, on);
    }

    /** {@return whether {@link #FLAG_ACK_REQUEST} is set} */
    public boolean ackRequest() {
        return (flags() & FLAG_ACK_REQUEST) != 0;
    }

    /**
     * Sets or clears {@link #FLAG_ACK_REQUEST}.
     *
     * @param on whether to set it
     * @return this flyweight
     */
    public FrameHeader ackRequest(boolean on) {
        return flag(FLAG_ACK_REQUEST, on);
    }

    private FrameHeader flag(int bit, boolean on) {
        int f = flags();
        return flags(on ? f | bit : f & ~bit);
    }

    /** {@return the raw {@code opcode} byte: an {@link Opcode}, or garbage from a hostile peer} */
    public int opcode() {
        return loaded ? (int) (word0 >>> 48) & 0xFF : segment.get(U8, base + OPCODE_OFFSET) & 0xFF;
    }

    /**
     * Sets {@code opcode}.
     *
     * @param opcode an {@link Opcode}
     * @return this flyweight
     */
    public FrameHeader opcode(int opcode) {
        checkUnsigned(opcode, 0xFF, "opcode");
        loaded = false;
        segment.set(U8, base + OPCODE_OFFSET, (byte) opcode);
        return this;
    }

    /** {@return the message sequence number, 0 .. 65535} */
    public int msn() {
        return loaded ? (int) (word0 >>> 32) & 0xFFFF : segment.get(U16, base + MSN_OFFSET) & 0xFFFF;
    }

    /**
     * Sets {@code msn}.
     *
     * @param msn 0 to 65535
     * @return this flyweight
     */
    public FrameHeader msn(int msn) {
        checkUnsigned(msn, 0xFFFF, "msn");
        loaded = false;
        segment.set(U16, base + MSN_OFFSET, (short) msn);
        return this;
    }

    /** {@return the raw {@code mbo_seg} word} */
    public int mboSeg() {
        return loaded ? (int) word0 : segment.get(U32, base + MBO_SEG_OFFSET);
    }

    /** {@return the byte offset of this payload inside its message, 0 .. 2^24-1} (bits 31-8 of {@code mbo_seg}). */
    public int messageOffset() {
        return mboSeg() >>> OFFSET_SHIFT;
    }

    /** {@return the segment number inside the message, mod 256} (bits 7-0 of {@code mbo_seg}). */
    public int segmentNumber() {
        return mboSeg() & SEGMENT_MASK;
    }

    /**
     * Sets {@code mbo_seg}.
     *
     * @param messageOffset the payload's byte offset in its message, 0 to 2^24-1
     * @param segmentNumber the segment's number in its message, mod 256
     * @return this flyweight
     */
    public FrameHeader messageOffsetAndSegment(int messageOffset, int segmentNumber) {
        checkUnsigned(messageOffset, MAX_MESSAGE_OFFSET, "message offset");
        checkUnsigned(segmentNumber, SEGMENT_MASK, "segment number");
        loaded = false;
        segment.set(U32, base + MBO_SEG_OFFSET, messageOffset << OFFSET_SHIFT | segmentNumber);
        return this;
    }

    /** {@return the {@code icrc} field} */
    public int icrc() {
        return loaded ? (int) (word1 >>> 32) : segment.get(U32, base + ICRC_OFFSET);
    }

    /**
     * Sets {@code icrc}.
     *
     * @param icrc the frame's ICRC ({@link Icrc})
     * @return this flyweight
     */
    public FrameHeader icrc(int icrc) {
        loaded = false;
        segment.set(U32, base + ICRC_OFFSET, icrc);
        return this;
    }

    /**
     * {@return the sender's clock in microseconds when the frame left (valid with {@link
     * #FLAG_TIMESTAMP_PRESENT})}
     */
    public int timestamp() {
        return loaded ? (int) word1 : segment.get(U32, base + TIMESTAMP_OFFSET);
    }

    /**
     * Sets {@code timestamp}.
     *
     * @param micros the sender's clock in microseconds, mod 2^32
     * @return this flyweight
     */
    public FrameHeader timestamp(int micros) {
        loaded = false;
        segment.set(U32, base + TIMESTAMP_OFFSET, micros);
        return this;
    }

    /** {@return the last {@code timestamp} the sender received from its peer, for the peer's round trip} */
    public int timestampEcho() {
        return loaded ? (int) (word2 >>> 32) : segment.get(U32, base + TIMESTAMP_ECHO_OFFSET);
    }

    /**
     * Sets {@code timestamp_echo}.
     *
     * @param micros the last timestamp received from the peer
     * @return this flyweight
     */
    public FrameHeader timestampEcho(int micros) {
        loaded = false;
        segment.set(U32, base + TIMESTAMP_ECHO_OFFSET, micros);
        return this;
    }

    /** {@return the {@code imm_data} field: immediate data, or an ACKNOWLEDGE's credit limit} */
    public int immData() {
        return loaded ? (int) word2 : segment.get(U32, base + IMM_DATA_OFFSET);
    }

    /**
     * Sets {@code imm_data}.
     *
     * @param imm the value
     * @return this flyweight
     */
    public FrameHeader immData(int imm) {
        loaded = false;
        segment.set(U32, base + IMM_DATA_OFFSET, imm);
        return this;
    }

    /** {@return the payload bytes after the extension, as an unsigned 32-bit value} */
    public long length() {
        return loaded ? word3 >>> 32 : segment.get(U32, base + LENGTH_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * Sets {@code length}.
     *
     * @param length payload bytes, 0 to 2^32-1
     * @return this flyweight
     */
    public FrameHeader length(long length) {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("length " + length + " does not fit 32 unsigned bits");
        }
        loaded = false;
        segment.set(U32, base + LENGTH_OFFSET, (int) length);
        return this;
    }

    /** {@return the extension bytes after the base header} */
    public int extLength() {
        return loaded ? (int) (word3 >>> 16) & 0xFFFF : segment.get(U16, base + EXT_LENGTH_OFFSET) & 0xFFFF;
    }

    /**
     * Sets {@code ext_length}.
     *
     * @param extLength extension bytes, 0 to 65535
     * @return this flyweight
     */
    public FrameHeader extLength(int extLength) {
        checkUnsigned(extLength, 0xFFFF, "ext_length");
        loaded = false;
        segment.set(U16, base + EXT_LENGTH_OFFSET, (short) extLength);
        return this;
    }

    /** {@return the subflow the frame was sent on} */
    public int subflow() {
        return loaded ? (int) word3 & 0xFFFF : segment.get(U16, base + SUBFLOW_OFFSET) & 0xFFFF;
    }

    /**
     * Sets {@code subflow}.
     *
     * @param subflow 0 to 65535
     * @return this flyweight
     */
    public FrameHeader subflow(int subflow) {
        checkUnsigned(subflow, 0xFFFF, "subflow");
        loaded = false;
        segment.set(U16, base + SUBFLOW_OFFSET, (short) subflow);
        return this;
    }

    /**
     * Writes every field at once, {@code icrc} and the per-subflow fields zero, as four 64-bit stores rather
     * than a checked store per field: what a sender does for every frame.
     *
     * @param flags the {@code flags} byte
     * @param opcode the opcode
     * @param msn the message sequence number
     * @param messageOffset the payload's byte offset in its message
     * @param segmentNumber the segment number
     * @param immData the immediate data, 0 where the opcode carries none
     * @param length payload bytes
     * @param extLength extension bytes
     * @return this flyweight
     * @throws IllegalArgumentException if a value does not fit its field, as the setters say
     */
    public FrameHeader fill(int flags, int opcode, int msn, int messageOffset, int segmentNumber, int immData,
                            long length, int extLength) {
        checkUnsigned(flags, 0xFF, "flags");
        checkUnsigned(opcode, 0xFF, "opcode");
        checkUnsigned(msn, 0xFFFF, "msn");
        checkUnsigned(messageOffset, MAX_MESSAGE_OFFSET, "message offset");
        checkUnsigned(segmentNumber, SEGMENT_MASK, "segment number");
        checkUnsigned(extLength, 0xFFFF, "ext_length");
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("length " + length + " does not fit 32 unsigned bits");
        }
        long mboSeg = (long) (messageOffset << OFFSET_SHIFT | segmentNumber) & 0xFFFF_FFFFL;
        loaded = false;
        segment.set(WireLayouts.U64, base, (long) flags << 56 | (long) opcode << 48 | (long) msn << 32 | mboSeg);
        segment.set(WireLayouts.U64, base + ICRC_OFFSET, 0L);
        segment.set(WireLayouts.U64, base + TIMESTAMP_ECHO_OFFSET, immData & 0xFFFF_FFFFL);
        segment.set(WireLayouts.U64, base + LENGTH_OFFSET, length << 32 | (long) extLength << 16);
        return this;
    }

    /**
     * Sets the fields that belong to the subflow a frame leaves on: {@code timestamp_present}, the two
     * timestamps (adjacent, so one store) and {@code subflow}.
     *
     * @param subflow the subflow's index
     * @param timestamp this side's clock in microseconds
     * @param timestampEcho the peer's latest timestamp, aged by the time since it arrived
     * @return this flyweight
     * @throws IllegalArgumentException if {@code subflow} does not fit 16 unsigned bits
     */
    public FrameHeader stamp(int subflow, int timestamp, int timestampEcho) {
        checkUnsigned(subflow, 0xFFFF, "subflow");
        int flags = flags();
        loaded = false;
        segment.set(U8, base + FLAGS_OFFSET, (byte) (flags | FLAG_TIMESTAMP_PRESENT));
        segment.set(WireLayouts.U64, base + TIMESTAMP_OFFSET, (long) timestamp << 32 | timestampEcho & 0xFFFF_FFFFL);
        segment.set(U16, base + SUBFLOW_OFFSET, (short) subflow);
        return this;
    }

    /** {@return the header, extension and payload bytes: {@code 32 + ext_length + length}} */
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
