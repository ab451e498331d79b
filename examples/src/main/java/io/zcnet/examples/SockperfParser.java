package io.zcnet.examples;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One TCP connection's sockperf byte stream, cut into the ranges a sockperf server sends back: every
 * message with CLIENT and PONG_REQUEST (and not WARMUP), CLIENT cleared, in stream order; all other
 * messages are consumed without a reply ({@link SockperfHeader}).
 *
 * <p>Replies are made in place: the flag byte is flipped in the received buffer and {@link #advance}
 * names a range of that buffer to send, so consecutive replies in one buffer leave as one send. Only a
 * header cut between two buffers is copied, into a 14-byte carry segment of this parser, and sent from
 * there; a message body that spans buffers is sent piecewise from each buffer, never copied.
 *
 * <p>Use: feed the connection's received buffers in order. For each, call {@link #advance} until it
 * returns {@link #BUFFER_DONE} (then the buffer may be reused and the next one starts at offset 0) or
 * {@link #BAD_LENGTH} (the stream is unusable: close the connection). {@link #REPLY} means: send
 * {@link #replySegment()} from {@link #replyOffset()} for {@link #replyLength()} bytes, and call again
 * only after that send completed, because the carry segment is reused and the buffer must stay put.
 * Allocation-free after construction.
 *
 * <p>Thread-safety: none; one connection's owner (the event loop thread) only.
 */
final class SockperfParser {
    /** Largest message accepted, header included: sockperf's own limit (65507 bytes of UDP payload) fits. */
    static final int MAX_LENGTH = 64 * 1024;

    /** {@link #advance} result: a reply range is ready. */
    static final int REPLY = 1;
    /** {@link #advance} result: the buffer is consumed and no reply range is left in it. */
    static final int BUFFER_DONE = 0;
    /** {@link #advance} result: a header carried a length outside [14, {@link #MAX_LENGTH}]. */
    static final int BAD_LENGTH = -1;

    private final MemorySegment carry;
    private int position;         // next unread byte of the current buffer
    private int headerCarried;    // bytes of a cut header already copied into carry
    private int bodyLeft;         // bytes of the current message's body not read yet
    private boolean bodyReplied;  // whether those bytes belong to a reply
    private int badLength;
    private long messages;
    private long replies;
    private MemorySegment replySegment;
    private long replyOffset;
    private int replyLength;

    /** A parser whose carry segment comes from {@code arena} (native, so io_uring may send from it). */
    SockperfParser(Arena arena) {
        if (arena == null) {
            throw new IllegalArgumentException("arena is null");
        }
        this.carry = arena.allocate(SockperfHeader.SIZE, Long.BYTES);
    }

    /** Forgets the stream: for a new connection. */
    void reset() {
        position = 0;
        headerCarried = 0;
        bodyLeft = 0;
        bodyReplied = false;
        badLength = 0;
        messages = 0;
        replies = 0;
        replySegment = null;
    }

    /**
     * Reads on in {@code buffer}, whose first {@code limit} bytes are the stream's next bytes, up to the
     * end of the next reply range or of the buffer.
     *
     * @return {@link #REPLY}, {@link #BUFFER_DONE} or {@link #BAD_LENGTH}
     */
    int advance(MemorySegment buffer, int limit) {
        int pos = position;
        int start = -1; // start of the reply range being built in buffer
        while (pos < limit) {
            if (bodyLeft > 0) {
                if (!bodyReplied && start >= 0) {
                    break; // send the range first; skipping resumes on the next call
                }
                int n = Math.min(bodyLeft, limit - pos);
                if (bodyReplied && start < 0) {
                    start = pos;
                }
                pos += n;
                bodyLeft -= n;
            } else if (headerCarried == 0 && limit - pos >= SockperfHeader.SIZE) {
                int length = SockperfHeader.length(buffer, pos);
                if (length < SockperfHeader.SIZE || length > MAX_LENGTH) {
                    if (start >= 0) {
                        break; // the replies before it still go out; the next call fails
                    }
                    return fail(length, pos);
                }
                boolean reply = SockperfHeader.wantsReply(SockperfHeader.flags(buffer, pos));
                if (!reply && start >= 0) {
                    break;
                }
                if (reply) {
                    SockperfHeader.markReply(buffer, pos);
                    if (start < 0) {
                        start = pos;
                    }
                }
                begin(length, reply);
                pos += SockperfHeader.SIZE;
            } else {
                if (start >= 0) {
                    break; // a header cut at the buffer's end: the range before it goes first
                }
                int n = Math.min(SockperfHeader.SIZE - headerCarried, limit - pos);
                MemorySegment.copy(buffer, pos, carry, headerCarried, n);
                headerCarried += n;
                pos += n;
                if (headerCarried == SockperfHeader.SIZE) {
                    headerCarried = 0;
                    int length = SockperfHeader.length(carry, 0);
                    if (length < SockperfHeader.SIZE || length > MAX_LENGTH) {
                        return fail(length, pos);
                    }
                    boolean reply = SockperfHeader.wantsReply(SockperfHeader.flags(carry, 0));
                    begin(length, reply);
                    if (reply) {
                        SockperfHeader.markReply(carry, 0);
                        position = pos;
                        return reply(carry, 0, SockperfHeader.SIZE);
                    }
                }
            }
        }
        if (start >= 0) {
            position = pos;
            return reply(buffer, start, pos - start);
        }
        position = 0;
        return BUFFER_DONE;
    }

    private void begin(int length, boolean reply) {
        bodyLeft = length - SockperfHeader.SIZE;
        bodyReplied = reply;
        messages++;
        if (reply) {
            replies++;
        }
    }

    private int reply(MemorySegment segment, long offset, int length) {
        replySegment = segment;
        replyOffset = offset;
        replyLength = length;
        return REPLY;
    }

    private int fail(int length, int pos) {
        badLength = length;
        position = pos;
        return BAD_LENGTH;
    }

    /** The segment of the range {@link #advance} returned {@link #REPLY} for: the buffer or the carry. */
    MemorySegment replySegment() {
        return replySegment;
    }

    long replyOffset() {
        return replyOffset;
    }

    int replyLength() {
        return replyLength;
    }

    /** The length field that made {@link #advance} return {@link #BAD_LENGTH}, unsigned. */
    long badLength() {
        return Integer.toUnsignedLong(badLength);
    }

    /** Messages whose header has been read since the last {@link #reset()}. */
    long messages() {
        return messages;
    }

    /** Of those, the ones answered. */
    long replies() {
        return replies;
    }
}
