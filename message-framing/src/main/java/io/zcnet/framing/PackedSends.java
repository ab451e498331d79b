package io.zcnet.framing;

import static io.zcnet.framing.WireLayouts.U32;

import java.lang.foreign.MemorySegment;

/**
 * The payload of a {@link Opcode#SEND_PACKED} frame: several whole SEND messages back to back, each behind a
 * record header, so a stream of small SENDs pays one frame header, one stamp and one pass of the receiver's
 * frame cutting per frame instead of per message. Big-endian, no padding:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |I|  reserved   |              message length (24)              |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                imm_data (only when I is set)                  |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                message bytes ...                              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   I = immediate_present: the message is a SEND with immediate data
 * </pre>
 *
 * <p>Record {@code k} (from 0) is the message whose MSN is the frame's {@code msn} plus {@code k} and which
 * consumes the receive whose RSN is the extension's {@code rsn} plus {@code k}: each is placed and completed
 * exactly as a SEND_ONLY (or SEND_ONLY_WITH_IMMEDIATE) frame with those numbers would be, so a sender may
 * resend the messages of a packed frame in frames of their own. The records fill the payload exactly; one
 * that runs past it, or a reserved bit set, refuses the whole frame before any of it is used. A packed frame
 * carries at most {@link #MAX_LENGTH} payload bytes (and never more than the segment size), so it is always
 * cut from the stream whole, never placed directly. Stateless, thread-safe.
 */
public final class PackedSends {

    /** Most payload bytes of one SEND_PACKED frame. */
    public static final int MAX_LENGTH = 4096;
    /** Bytes of a record's header without immediate data. */
    public static final int RECORD_HEADER = 4;
    /** Bytes of the immediate data that follows a record header whose {@code immediate_present} bit is set. */
    public static final int IMMEDIATE_BYTES = 4;

    private static final int IMMEDIATE_PRESENT = 1 << 31;
    private static final int RESERVED = 0x7F00_0000;
    private static final int LENGTH_MASK = 0x00FF_FFFF;

    private PackedSends() {
    }

    /**
     * {@return the bytes a record of a message of {@code length} bytes takes}
     *
     * @param length the message's bytes
     * @param immediate whether it carries immediate data
     */
    public static int recordBytes(int length, boolean immediate) {
        return RECORD_HEADER + (immediate ? IMMEDIATE_BYTES : 0) + length;
    }

    /**
     * Writes one record at {@code at} of {@code out}: the header, the immediate data if any, then a copy of the
     * message's bytes.
     *
     * @param out where the frame is written
     * @param at where the record goes
     * @param message the memory holding the message
     * @param messageOffset where the message starts
     * @param length the message's bytes, at most {@link #MAX_LENGTH} minus the record header
     * @param immediate whether it is a SEND with immediate data
     * @param imm the immediate data (ignored without {@code immediate})
     * @return where the next record goes
     * @throws IllegalArgumentException if the length is out of range
     */
    public static long writeRecord(MemorySegment out, long at, MemorySegment message, long messageOffset, int length,
                                   boolean immediate, int imm) {
        if (length < 0 || length > MAX_LENGTH - RECORD_HEADER) {
            throw new IllegalArgumentException("a packed message of " + length + " bytes; at most "
                    + (MAX_LENGTH - RECORD_HEADER));
        }
        long bytesAt = at + RECORD_HEADER;
        out.set(U32, at, length | (immediate ? IMMEDIATE_PRESENT : 0));
        if (immediate) {
            out.set(U32, bytesAt, imm);
            bytesAt += IMMEDIATE_BYTES;
        }
        MemorySegment.copy(message, messageOffset, out, bytesAt, length);
        return bytesAt + length;
    }

    /**
     * Checks the records of a packed payload of {@code length} bytes at {@code offset}: every header has its
     * reserved bits clear and every record ends inside the payload, the last exactly at its end.
     *
     * @param payload the memory holding the payload
     * @param offset where it starts
     * @param length its bytes, all present
     * @return the number of records (at least 1 for a payload of at least {@link #RECORD_HEADER} bytes), or
     *         {@link FrameError#RESERVED_BITS} or {@link FrameError#INCONSISTENT_MESSAGE}
     */
    public static int count(MemorySegment payload, long offset, long length) {
        int records = 0;
        long at = offset;
        long end = offset + length;
        while (at < end) {
            if (end - at < RECORD_HEADER) {
                return FrameError.INCONSISTENT_MESSAGE;
            }
            int descriptor = payload.get(U32, at);
            if ((descriptor & RESERVED) != 0) {
                return FrameError.RESERVED_BITS;
            }
            long next = at + headerBytes(descriptor) + messageLength(descriptor);
            if (next > end) {
                return FrameError.INCONSISTENT_MESSAGE;
            }
            at = next;
            records++;
        }
        return records == 0 ? FrameError.INCONSISTENT_MESSAGE : records;
    }

    /**
     * {@return the record header at {@code at}: what {@link #hasImmediate}, {@link #messageLength} and
     * {@link #headerBytes} read}
     *
     * @param payload the memory holding the payload
     * @param at where the record starts
     */
    public static int descriptor(MemorySegment payload, long at) {
        return payload.get(U32, at);
    }

    /**
     * {@return the immediate data of the record at {@code at}, whose header says it has some}
     *
     * @param payload the memory holding the payload
     * @param at where the record starts
     */
    public static int immediate(MemorySegment payload, long at) {
        return payload.get(U32, at + RECORD_HEADER);
    }

    /**
     * {@return whether the record is a SEND with immediate data}
     *
     * @param descriptor a record header
     */
    public static boolean hasImmediate(int descriptor) {
        return (descriptor & IMMEDIATE_PRESENT) != 0;
    }

    /**
     * {@return the bytes of the record's message}
     *
     * @param descriptor a record header
     */
    public static int messageLength(int descriptor) {
        return descriptor & LENGTH_MASK;
    }

    /**
     * {@return the bytes from the record's start to its message's: the header and any immediate data}
     *
     * @param descriptor a record header
     */
    public static int headerBytes(int descriptor) {
        return hasImmediate(descriptor) ? RECORD_HEADER + IMMEDIATE_BYTES : RECORD_HEADER;
    }
}
