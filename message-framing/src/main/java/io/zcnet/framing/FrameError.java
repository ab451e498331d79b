package io.zcnet.framing;

/**
 * Why a frame was rejected: {@link #OK} or a negative code, so decoding hostile input neither allocates
 * nor throws (the Aeron convention of negative status codes). Every code but {@link #TRUNCATED} is a
 * protocol or access violation that moves a queue pair to ERROR; {@link #completionStatus} maps it to the
 * verbs status that the failed work request carries. Stateless, thread-safe.
 */
public final class FrameError {

    /** Nothing wrong. */
    public static final int OK = 0;
    /** Fewer bytes were supplied than the header says the frame has; not a violation, supply the frame. */
    public static final int TRUNCATED = -1;
    /** Bits 7-6 of {@code flags} are not version 1. */
    public static final int BAD_VERSION = -2;
    /** The opcode is not one of {@link Opcode}'s. */
    public static final int BAD_OPCODE = -3;
    /** Bits 1-0 of {@code flags} are not zero. */
    public static final int RESERVED_BITS = -4;
    /** {@code ext_length} is not the length the opcode requires. */
    public static final int BAD_EXTENSION_LENGTH = -5;
    /** {@code length} exceeds the negotiated segment size. */
    public static final int PAYLOAD_TOO_LONG = -6;
    /** {@code offset + length} (or a read request's length) exceeds the 2^24-1 byte message limit. */
    public static final int MESSAGE_TOO_LONG = -7;
    /** Offset not segment-aligned, segment number not {@code offset / segment size mod 256}, a FIRST or ONLY
     *  frame not at offset 0, a MIDDLE or LAST frame at offset 0, a FIRST or MIDDLE frame shorter than a segment, or an empty LAST frame. */
    public static final int BAD_SEGMENT = -8;
    /** {@code more_segments} disagrees with the opcode, or {@code rtr}/{@code rtr_ack} outside ACKNOWLEDGE. */
    public static final int BAD_FLAGS = -9;
    /** A field the opcode does not use is not zero (immediate data, payload, offset, timestamp without its flag). */
    public static final int RESERVED_FIELD = -10;
    /** The MSN is neither in the receive window nor a recent duplicate. */
    public static final int MSN_OUT_OF_WINDOW = -11;
    /** The ICRC was negotiated and the frame's does not match its bytes. */
    public static final int ICRC_MISMATCH = -12;
    /** Frames of one message disagree (opcode family, where it ends, the receive their RSN names). */
    public static final int INCONSISTENT_MESSAGE = -13;
    /** A tagged frame or read request names a key, range or right the registry refuses. */
    public static final int REMOTE_ACCESS = -14;
    /** A SEND message does not fit its posted receive buffer. */
    public static final int LOCAL_LENGTH = -15;
    /** A frame's RSN names a receive not posted yet: the sender spent credits it was never granted. */
    public static final int RECEIVER_NOT_READY = -16;
    /** An ACKNOWLEDGE acknowledges messages that were never sent. */
    public static final int BAD_ACKNOWLEDGE = -17;
    /** The queue pair is already in ERROR; the frame was not looked at. */
    public static final int QUEUE_PAIR_IN_ERROR = -18;
    /** A READ RESPONSE matches no outstanding read request. */
    public static final int UNEXPECTED_READ_RESPONSE = -19;
    /** The region of the posted receive a SEND would land in was deregistered, or its memory freed. */
    public static final int LOCAL_PROTECTION = -20;
    /**
     * A frame's RSN contradicts the receives other messages take: it names a receive already consumed, or one
     * another message holds, or it breaks MSN order (a later message taking an earlier receive, more
     * receive-consuming messages before it than messages, or a receive left out when its message completes).
     */
    public static final int BAD_RECEIVE_SEQUENCE = -21;
    /**
     * The peer ended the queue pair with a {@link NegativeAcknowledge}: it found a violation in what this side
     * sent, or was closed; {@link MessageAssembler#peerError()} says which.
     */
    public static final int TERMINATED_BY_PEER = -22;

    private static final String[] NAMES = {
        "OK", "TRUNCATED", "BAD_VERSION", "BAD_OPCODE", "RESERVED_BITS", "BAD_EXTENSION_LENGTH",
        "PAYLOAD_TOO_LONG", "MESSAGE_TOO_LONG", "BAD_SEGMENT", "BAD_FLAGS", "RESERVED_FIELD",
        "MSN_OUT_OF_WINDOW", "ICRC_MISMATCH", "INCONSISTENT_MESSAGE", "REMOTE_ACCESS", "LOCAL_LENGTH",
        "RECEIVER_NOT_READY", "BAD_ACKNOWLEDGE", "QUEUE_PAIR_IN_ERROR", "UNEXPECTED_READ_RESPONSE",
        "LOCAL_PROTECTION", "BAD_RECEIVE_SEQUENCE", "TERMINATED_BY_PEER"
    };

    /** Number of codes, {@code OK} included; codes run from {@code 0} down to {@code 1 - COUNT}. */
    public static final int COUNT = NAMES.length;

    private FrameError() {
    }

    /**
     * {@return the constant's name, or {@code UNKNOWN(n)}}
     *
     * @param code one of this class's constants, or any int
     */
    public static String name(int code) {
        return code <= 0 && code > -COUNT ? NAMES[-code] : "UNKNOWN(" + code + ")";
    }

    /**
     * {@return the verbs completion status a work request failed by {@code code} carries}
     *
     * @param code a violation code
     */
    public static int completionStatus(int code) {
        return switch (code) {
            case OK -> CompletionStatus.SUCCESS;
            case LOCAL_LENGTH -> CompletionStatus.LOCAL_LENGTH_ERROR;
            case LOCAL_PROTECTION -> CompletionStatus.LOCAL_PROTECTION_ERROR;
            case REMOTE_ACCESS, UNEXPECTED_READ_RESPONSE -> CompletionStatus.REMOTE_ACCESS_ERROR;
            case RECEIVER_NOT_READY -> CompletionStatus.RNR_ERROR;
            case QUEUE_PAIR_IN_ERROR, TERMINATED_BY_PEER -> CompletionStatus.FLUSH_ERROR;
            default -> CompletionStatus.PROTOCOL_ERROR;
        };
    }
}
