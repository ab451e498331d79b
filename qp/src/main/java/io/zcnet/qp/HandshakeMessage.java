package io.zcnet.qp;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Flyweight over one handshake message: the fixed 96 bytes each side sends before a subflow carries
 * frames. Big-endian, like the frames.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                       magic "ZQP1"                            |  0
 * +---------------+---------------+-------------------------------+
 * |     type      |    version    |            flags              |  4
 * +---------------+---------------+-------------------------------+
 * |                         segment_size                          |  8
 * +---------------------------------------------------------------+
 * |                        message_window                         | 12
 * +-------------------------------+-------------------------------+
 * |          max_subflows         |            subflow            | 16
 * +-------------------------------+-------------------------------+
 * |                            reason                             | 20
 * +---------------------------------------------------------------+
 * |                          token (u64)                          | 24
 * +---------------------------------------------------------------+
 * |                         nonce (16 bytes)                      | 32
 * +---------------------------------------------------------------+
 * |                mac (32 bytes: HMAC-SHA256, or the secret)     | 48
 * +---------------------------------------------------------------+
 * |                          silence_ms                           | 80
 * +---------------------------------------------------------------+
 * |                      reserved (12 bytes, 0)                   | 84
 * +---------------------------------------------------------------+
 * </pre>
 *
 * <p>{@code type}: {@link #OPEN} (first subflow: the initiator's proposal), {@link #JOIN} (another subflow
 * of the queue pair named by {@code token}), {@link #CHALLENGE} (the acceptor's answer: agreed parameters,
 * token, subflow index, its nonce and proof), {@link #PROOF} (the initiator's proof), {@link #REFUSE}
 * ({@code reason} says why). {@code flags}: bit 0 ICRC, bit 1 pre-shared key in use. {@code silence_ms}: the
 * silence timeout in milliseconds, the initiator's proposal in an OPEN and the agreed one in the CHALLENGE to
 * it, 0 in every other message.
 */
final class HandshakeMessage {
    static final int MAGIC = 0x5A515031; // "ZQP1"
    static final int VERSION = 1;

    static final int OPEN = 1;
    static final int JOIN = 2;
    static final int CHALLENGE = 3;
    static final int PROOF = 4;
    static final int REFUSE = 5;

    static final int FLAG_ICRC = 1;
    static final int FLAG_PSK = 1 << 1;

    static final int NONCE_LENGTH = 16;
    static final int MAC_LENGTH = 32;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U32.withName("magic"),
            ValueLayout.JAVA_BYTE.withName("type"),
            ValueLayout.JAVA_BYTE.withName("version"),
            U16.withName("flags"),
            U32.withName("segment_size"),
            U32.withName("message_window"),
            U16.withName("max_subflows"),
            U16.withName("subflow"),
            U32.withName("reason"),
            U64.withName("token"),
            MemoryLayout.sequenceLayout(NONCE_LENGTH, ValueLayout.JAVA_BYTE).withName("nonce"),
            MemoryLayout.sequenceLayout(MAC_LENGTH, ValueLayout.JAVA_BYTE).withName("mac"),
            U32.withName("silence_ms"),
            MemoryLayout.sequenceLayout(12, ValueLayout.JAVA_BYTE).withName("reserved"));

    static final int LENGTH = (int) LAYOUT.byteSize();
    private static final long TYPE = offset("type");
    private static final long VERSION_AT = offset("version");
    private static final long FLAGS = offset("flags");
    private static final long SEGMENT_SIZE = offset("segment_size");
    private static final long WINDOW = offset("message_window");
    private static final long MAX_SUBFLOWS = offset("max_subflows");
    private static final long SUBFLOW = offset("subflow");
    private static final long REASON = offset("reason");
    private static final long TOKEN = offset("token");
    static final long NONCE = offset("nonce");
    static final long MAC = offset("mac");
    private static final long SILENCE = offset("silence_ms");
    private static final long RESERVED = offset("reserved");

    // Why a subflow was refused, in REFUSE's reason field.
    static final int REASON_MALFORMED = 1;
    static final int REASON_UNKNOWN_TOKEN = 2;
    static final int REASON_BAD_PROOF = 3;
    static final int REASON_SUBFLOW_LIMIT = 4;
    static final int REASON_KEY_REQUIRED = 5;
    static final int REASON_QUEUE_PAIR_GONE = 6;
    static final int REASON_BUSY = 7;
    static final int REASON_NOT_ADMITTED = 8;

    private MemorySegment segment;
    private long base;

    private static long offset(String field) {
        return LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    HandshakeMessage wrap(MemorySegment segment, long offset) {
        this.segment = segment;
        this.base = offset;
        return this;
    }

    HandshakeMessage clear(int type) {
        segment.asSlice(base, LENGTH).fill((byte) 0);
        segment.set(U32, base, MAGIC);
        segment.set(ValueLayout.JAVA_BYTE, base + TYPE, (byte) type);
        segment.set(ValueLayout.JAVA_BYTE, base + VERSION_AT, (byte) VERSION);
        return this;
    }

    /** Null if the bytes are a well-formed message of version 1, else what is wrong. */
    String malformed() {
        if (segment.get(U32, base) != MAGIC) {
            return "not a zcnet handshake (magic 0x" + Integer.toHexString(segment.get(U32, base)) + ")";
        }
        if (version() != VERSION) {
            return "handshake version " + version() + ", this side speaks " + VERSION;
        }
        if (type() < OPEN || type() > REFUSE) {
            return "handshake type " + type() + " unknown";
        }
        for (long i = RESERVED; i < LENGTH; i++) {
            if (segment.get(ValueLayout.JAVA_BYTE, base + i) != 0) {
                return "reserved handshake bytes are not zero";
            }
        }
        return null;
    }

    int type() {
        return segment.get(ValueLayout.JAVA_BYTE, base + TYPE) & 0xFF;
    }

    int version() {
        return segment.get(ValueLayout.JAVA_BYTE, base + VERSION_AT) & 0xFF;
    }

    int flags() {
        return segment.get(U16, base + FLAGS) & 0xFFFF;
    }

    HandshakeMessage flags(int flags) {
        segment.set(U16, base + FLAGS, (short) flags);
        return this;
    }

    int segmentSize() {
        return segment.get(U32, base + SEGMENT_SIZE);
    }

    HandshakeMessage segmentSize(int bytes) {
        segment.set(U32, base + SEGMENT_SIZE, bytes);
        return this;
    }

    int messageWindow() {
        return segment.get(U32, base + WINDOW);
    }

    HandshakeMessage messageWindow(int messages) {
        segment.set(U32, base + WINDOW, messages);
        return this;
    }

    int maxSubflows() {
        return segment.get(U16, base + MAX_SUBFLOWS) & 0xFFFF;
    }

    HandshakeMessage maxSubflows(int n) {
        segment.set(U16, base + MAX_SUBFLOWS, (short) n);
        return this;
    }

    int subflow() {
        return segment.get(U16, base + SUBFLOW) & 0xFFFF;
    }

    HandshakeMessage subflow(int index) {
        segment.set(U16, base + SUBFLOW, (short) index);
        return this;
    }

    int reason() {
        return segment.get(U32, base + REASON);
    }

    HandshakeMessage reason(int code) {
        segment.set(U32, base + REASON, code);
        return this;
    }

    long token() {
        return segment.get(U64, base + TOKEN);
    }

    HandshakeMessage token(long token) {
        segment.set(U64, base + TOKEN, token);
        return this;
    }

    /** Unsigned: 0 .. 2^32-1 milliseconds. */
    long silenceMillis() {
        return Integer.toUnsignedLong(segment.get(U32, base + SILENCE));
    }

    HandshakeMessage silenceMillis(long millis) {
        segment.set(U32, base + SILENCE, (int) millis);
        return this;
    }

    byte[] nonce() {
        return segment.asSlice(base + NONCE, NONCE_LENGTH).toArray(ValueLayout.JAVA_BYTE);
    }

    HandshakeMessage nonce(byte[] nonce) {
        MemorySegment.copy(nonce, 0, segment, ValueLayout.JAVA_BYTE, base + NONCE, NONCE_LENGTH);
        return this;
    }

    byte[] mac() {
        return segment.asSlice(base + MAC, MAC_LENGTH).toArray(ValueLayout.JAVA_BYTE);
    }

    HandshakeMessage mac(byte[] mac) {
        MemorySegment.copy(mac, 0, segment, ValueLayout.JAVA_BYTE, base + MAC, MAC_LENGTH);
        return this;
    }

    /**
     * {@return the message's bytes with the {@code mac} field zero: what the proofs cover of it} ({@link
     * JoinSecret#acceptorProof}); a CHALLENGE's own proof, or the secret it may carry, is left out.
     */
    byte[] transcript() {
        byte[] bytes = segment.asSlice(base, LENGTH).toArray(ValueLayout.JAVA_BYTE);
        Arrays.fill(bytes, (int) MAC, (int) MAC + MAC_LENGTH, (byte) 0);
        return bytes;
    }

    static String reasonName(int reason) {
        return switch (reason) {
            case REASON_MALFORMED -> "malformed handshake";
            case REASON_UNKNOWN_TOKEN -> "no queue pair with that token";
            case REASON_BAD_PROOF -> "proof of the queue pair's secret did not verify";
            case REASON_SUBFLOW_LIMIT -> "the queue pair has as many subflows as it may";
            case REASON_KEY_REQUIRED -> "the listener requires the pre-shared key";
            case REASON_QUEUE_PAIR_GONE -> "the queue pair is in ERROR or closed";
            case REASON_BUSY -> "the listener has as many queue pairs waiting to be accepted as it holds";
            case REASON_NOT_ADMITTED -> "the listener's admission policy refused the queue pair";
            default -> "reason " + reason;
        };
    }
}
