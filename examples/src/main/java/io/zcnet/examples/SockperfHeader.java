package io.zcnet.examples;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * The 14-byte header that starts every sockperf message on a TCP stream, all fields in network byte
 * order (sockperf 3.7 {@code src/message.h}, {@code MsgHeader}: packed, {@code EFFECTIVE_SIZE} 14):
 * <pre>
 * byte 0                               8           10                        14
 *      +-------------------------------+-----------+-------------------------+
 *      | sequence number (u64)         | flags u16 | length u32: whole       |
 *      |                               |           | message, header included|
 *      +-------------------------------+-----------+-------------------------+
 * </pre>
 * Flag bits: {@link #CLIENT} (set by the client, cleared in a server's reply), {@link #PONG_REQUEST}
 * (the client wants this message back) and {@link #WARMUP} (never answered). sockperf's server answers
 * a message only if it has CLIENT and PONG_REQUEST and not WARMUP, with the same bytes and CLIENT
 * cleared; it drops everything else (checked against sockperf 3.7's server on loopback).
 *
 * <p>Stateless static accessors over any segment; thread-safe as far as the segment is.
 */
final class SockperfHeader {
    /** {@code MsgHeader::MASK_CLIENT}. */
    static final int CLIENT = 1;
    /** {@code MsgHeader::MASK_PONG}. */
    static final int PONG_REQUEST = 1 << 1;
    /** {@code MsgHeader::MASK_WARMUP_MSG}. */
    static final int WARMUP = 1 << 2;

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U64.withName("sequence_number"),
            U16.withName("flags"),
            U32.withName("length"));

    static final int SIZE = (int) LAYOUT.byteSize();
    static final int SEQUENCE_OFFSET = (int) LAYOUT.byteOffset(groupElement("sequence_number"));
    static final int FLAGS_OFFSET = (int) LAYOUT.byteOffset(groupElement("flags"));
    static final int LENGTH_OFFSET = (int) LAYOUT.byteOffset(groupElement("length"));
    /** The flags are big-endian, so CLIENT lives in their second (low-order) byte. */
    static final int CLIENT_BYTE_OFFSET = FLAGS_OFFSET + 1;

    private SockperfHeader() {
    }

    static long sequence(MemorySegment segment, long offset) {
        return segment.get(U64, offset + SEQUENCE_OFFSET);
    }

    static int flags(MemorySegment segment, long offset) {
        return Short.toUnsignedInt(segment.get(U16, offset + FLAGS_OFFSET));
    }

    /** The whole message length, header included, as sent (unsigned; may exceed an int: then negative). */
    static int length(MemorySegment segment, long offset) {
        return segment.get(U32, offset + LENGTH_OFFSET);
    }

    /** Whether sockperf's server would answer a message with these flags. */
    static boolean wantsReply(int flags) {
        return (flags & (CLIENT | PONG_REQUEST | WARMUP)) == (CLIENT | PONG_REQUEST);
    }

    /** Turns a client's message into the server's reply in place: clears CLIENT, touching one byte. */
    static void markReply(MemorySegment segment, long offset) {
        long at = offset + CLIENT_BYTE_OFFSET;
        segment.set(ValueLayout.JAVA_BYTE, at, (byte) (segment.get(ValueLayout.JAVA_BYTE, at) & ~CLIENT));
    }

    /** Writes a header (for tests and clients). */
    static void write(MemorySegment segment, long offset, long sequence, int flags, int length) {
        segment.set(U64, offset + SEQUENCE_OFFSET, sequence);
        segment.set(U16, offset + FLAGS_OFFSET, (short) flags);
        segment.set(U32, offset + LENGTH_OFFSET, length);
    }
}
