package io.zcnet.framing;

/**
 * The negative ACKNOWLEDGE: how one side tells the other that it moved the queue pair to ERROR, and why, as
 * an InfiniBand responder's NAK does with the syndrome of its AETH. It is an {@link Opcode#ACKNOWLEDGE} frame
 * whose {@code segment} byte (bits 7-0 of the word at offset 4, always zero in a plain ACKNOWLEDGE) is a
 * non-zero syndrome:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |ver|0|0|0|0|0 0|  0x11 (ACK)   |   msn: last MSN completed     |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          message byte offset: 0               |   syndrome    |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   ...                                                                 icrc, timestamps as any frame
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  imm_data: the failed MSN (0..0xFFFF), or 0xFFFFFFFF for none  | 20
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <ul>
 *   <li>{@code syndrome} is a {@link FrameError} code negated: the violation the sender of the NAK found
 *   ({@link FrameError#BAD_VERSION} .. {@link FrameError#BAD_RECEIVE_SEQUENCE}), or
 *   {@link FrameError#QUEUE_PAIR_IN_ERROR} when it ended the queue pair for a reason of its own (it was
 *   closed, or failed locally). {@link #isValidSyndrome} says which values a frame may carry.</li>
 *   <li>{@code msn} is cumulative, as in a plain ACKNOWLEDGE: every message up to it was completed, so
 *   the receiver of the NAK completes those work requests successfully before it flushes the rest. There
 *   is no credit limit in a NAK: nothing more will be received.</li>
 *   <li>{@code imm_data} names the message (an MSN of the NAK receiver's own send direction) whose frame
 *   was refused, so that work request can fail with the matching status; a violation not tied to one
 *   message (a malformed header) names none.</li>
 * </ul>
 *
 * <p>A NAK is the last frame its sender sends on every subflow; it needs no answer. Stateless, thread-safe.
 */
public final class NegativeAcknowledge {

    /** {@code imm_data} of a NAK that names no message. */
    public static final int NO_MESSAGE = -1;

    private NegativeAcknowledge() {
    }

    /**
     * {@return whether {@code frameError} may travel as a syndrome: every violation code, and
     * {@link FrameError#QUEUE_PAIR_IN_ERROR}; not {@link FrameError#OK}, not {@link FrameError#TRUNCATED}
     * (never a violation), not {@link FrameError#TERMINATED_BY_PEER} (a NAK is never answered by one)}
     *
     * @param frameError any int
     */
    public static boolean isValidSyndrome(int frameError) {
        return frameError < FrameError.TRUNCATED && frameError > -FrameError.COUNT
                && frameError != FrameError.TERMINATED_BY_PEER;
    }

    /**
     * {@return whether the ACKNOWLEDGE under {@code header} is a NAK (checks nothing else)}
     *
     * @param header a flyweight over an ACKNOWLEDGE
     */
    public static boolean isNegative(FrameHeader header) {
        return header.opcode() == Opcode.ACKNOWLEDGE && header.segmentNumber() != 0;
    }

    /**
     * {@return the {@link FrameError} a NAK reports}
     *
     * @param header a flyweight over a NAK
     */
    public static int frameError(FrameHeader header) {
        return -header.segmentNumber();
    }

    /**
     * {@return the MSN a NAK names (0..0xFFFF), or {@link #NO_MESSAGE}}
     *
     * @param header a flyweight over a NAK
     */
    public static int failedMsn(FrameHeader header) {
        return header.immData();
    }

    /** Whether {@code imm_data} of a NAK is an MSN or {@link #NO_MESSAGE}: anything else is malformed. */
    static boolean isValidFailedMsn(int immData) {
        return immData == NO_MESSAGE || (immData & ~Msn.MASK) == 0;
    }

    /**
     * Writes a NAK header (no extension, no payload) at the flyweight's position; the ICRC, timestamps and
     * subflow are the caller's.
     *
     * @param ackMsn     the last MSN this side completed in order
     * @param frameError what ended the queue pair ({@link #isValidSyndrome})
     * @param failedMsn  the refused message's MSN, or {@link #NO_MESSAGE}
     * @param header a flyweight wrapped where the frame goes
     * @throws IllegalArgumentException if the header is not wrapped, the syndrome cannot travel or the MSN
     *                                  is neither 16 bits nor {@link #NO_MESSAGE}
     */
    public static void write(FrameHeader header, int ackMsn, int frameError, int failedMsn) {
        if (header == null || header.segment() == null) {
            throw new IllegalArgumentException("header is not wrapped");
        }
        if (!isValidSyndrome(frameError)) {
            throw new IllegalArgumentException(FrameError.name(frameError) + " cannot be a syndrome");
        }
        if (!isValidFailedMsn(failedMsn)) {
            throw new IllegalArgumentException("failed MSN " + failedMsn + " is neither 16 bits nor NO_MESSAGE");
        }
        header.clear()
                .version(FrameHeader.VERSION)
                .opcode(Opcode.ACKNOWLEDGE)
                .msn(ackMsn)
                .messageOffsetAndSegment(0, -frameError)
                .immData(failedMsn);
    }
}
