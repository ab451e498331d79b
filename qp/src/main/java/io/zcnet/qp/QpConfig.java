package io.zcnet.qp;

import java.time.Duration;
import java.util.Arrays;

/**
 * What one side of a queue pair asks for; immutable, thread-safe. The handshake agrees the wire parameters
 * with the peer: the smaller segment size, window, subflow limit and silence timeout of the two, and the ICRC
 * if either side asks for it.
 *
 * @param segmentSize        payload bytes per frame (64 .. 2^24-1)
 * @param icrc               whether frames carry a CRC32C the receiver checks
 * @param messageWindow      messages in flight per direction, a power of two up to 2^15
 * @param sendQueueDepth     send work requests outstanding at most, a power of two
 * @param receiveQueueDepth  posted receives outstanding at most, a power of two
 * @param maxSubflows        TCP connections one queue pair may span (1 .. 64)
 * @param subflows           connections a connector opens at once (1 .. maxSubflows)
 * @param handshakeTimeout   how long a connection may take to finish its handshake before it is dropped
 * @param silenceTimeout     how long a subflow may stay silent before it is declared dead (a heartbeat is
 *                           sent on idle subflows four times per period); negotiated, in whole milliseconds
 *                           ({@value #MIN_SILENCE_MILLIS} .. 2^32-1): both sides use the smaller of their
 *                           two, so each hears the other's heartbeats often enough
 * @param preSharedKey       when not null (16 .. 64 bytes), both ends prove they hold it on the first
 *                           subflow too, and the queue pair's join secret is derived from it instead of
 *                           being sent in the clear
 * @param maxSendSge         scatter/gather elements a send work request may have (1 .. {@link #MAX_SGE}),
 *                           the {@code max_send_sge} of ibv_create_qp(3); each costs 16 bytes in every send
 *                           queue entry. Local: not agreed with the peer
 * @param maxReceiveSge      elements a posted receive may be scattered over (1 .. {@link #MAX_SGE}), the
 *                           {@code max_recv_sge}; each costs 16 bytes in every receive queue entry
 * @param maxInlineData      bytes a SEND or WRITE may carry inline (0 .. {@link #MAX_INLINE_DATA}), the
 *                           {@code max_inline_data} of ibv_create_qp(3): copied when the work request is
 *                           posted, from any memory ({@link WorkRequest#inline}). Every send queue entry holds
 *                           that many bytes (where it holds its elements), and so does the queue pair's record
 *                           of each outstanding work request, which resends are made from. Local: not agreed
 *                           with the peer
 * @param sendTimeout        how long outstanding work may go without progress (no acknowledgement, no byte of
 *                           its frames taken by the kernel, no READ response landing) while the subflows stay up
 *                           before the queue pair fails with {@link WorkCompletion#RETRY_EXCEEDED_ERROR}: a peer
 *                           that sends heartbeats but stopped reading, as verbs' {@code timeout} and
 *                           {@code retry_cnt} catch. At least the silence timeout; local: not agreed with the peer
 */
public record QpConfig(int segmentSize, boolean icrc, int messageWindow, int sendQueueDepth, int receiveQueueDepth,
        int maxSubflows, int subflows, Duration handshakeTimeout, Duration silenceTimeout, byte[] preSharedKey,
        int maxSendSge, int maxReceiveSge, int maxInlineData, Duration sendTimeout) {

    /** Most TCP connections one queue pair may span. */
    public static final int MAX_SUBFLOWS = 64;
    /** The shortest silence timeout, in milliseconds: a heartbeat goes out every quarter of it. */
    public static final int MIN_SILENCE_MILLIS = 20;
    /** The largest silence timeout the handshake's 32-bit {@code silence_ms} can carry. */
    public static final long MAX_SILENCE_MILLIS = 0xFFFF_FFFFL;
    /** Most scatter/gather elements one work request or receive may have. */
    public static final int MAX_SGE = 32;
    /** Most bytes a work request may carry inline ({@link #maxInlineData}). */
    public static final int MAX_INLINE_DATA = 4096;
    /**
     * The default {@link #sendTimeout}: long enough for one message of the largest size (16 MiB, acknowledged
     * when whole) to land over a slow path, short enough that a stuck peer is found before a user gives up.
     */
    public static final Duration DEFAULT_SEND_TIMEOUT = Duration.ofSeconds(10);

    /** Checks every component's range. */
    public QpConfig {
        if (segmentSize < 64 || segmentSize > (1 << 24) - 1) {
            throw new IllegalArgumentException("segmentSize " + segmentSize + " outside 64..16777215");
        }
        if (messageWindow < 1 || messageWindow > 1 << 15 || Integer.bitCount(messageWindow) != 1) {
            throw new IllegalArgumentException("messageWindow " + messageWindow + " must be a power of two in 1..32768");
        }
        checkDepth(sendQueueDepth, "sendQueueDepth");
        checkDepth(receiveQueueDepth, "receiveQueueDepth");
        if (maxSubflows < 1 || maxSubflows > MAX_SUBFLOWS) {
            throw new IllegalArgumentException("maxSubflows " + maxSubflows + " outside 1.." + MAX_SUBFLOWS);
        }
        if (subflows < 1 || subflows > maxSubflows) {
            throw new IllegalArgumentException("subflows " + subflows + " outside 1..maxSubflows (" + maxSubflows + ")");
        }
        if (handshakeTimeout == null || handshakeTimeout.isNegative() || handshakeTimeout.isZero()) {
            throw new IllegalArgumentException("handshakeTimeout must be positive: " + handshakeTimeout);
        }
        if (silenceTimeout == null || silenceTimeout.toMillis() < MIN_SILENCE_MILLIS
                || silenceTimeout.toMillis() > MAX_SILENCE_MILLIS) {
            throw new IllegalArgumentException("silenceTimeout must be " + MIN_SILENCE_MILLIS + " .. " + MAX_SILENCE_MILLIS
                    + " ms: " + silenceTimeout);
        }
        if (preSharedKey != null) {
            if (preSharedKey.length < 16 || preSharedKey.length > 64) {
                throw new IllegalArgumentException("preSharedKey must be 16..64 bytes, got " + preSharedKey.length);
            }
            preSharedKey = preSharedKey.clone();
        }
        checkSge(maxSendSge, "maxSendSge");
        checkSge(maxReceiveSge, "maxReceiveSge");
        if (maxInlineData < 0 || maxInlineData > MAX_INLINE_DATA) {
            throw new IllegalArgumentException("maxInlineData " + maxInlineData + " outside 0.." + MAX_INLINE_DATA);
        }
        if (sendTimeout == null || sendTimeout.compareTo(silenceTimeout) < 0) {
            throw new IllegalArgumentException("sendTimeout " + sendTimeout + " must be at least the silence timeout ("
                    + silenceTimeout + ")");
        }
    }

    private static void checkSge(int sge, String what) {
        if (sge < 1 || sge > MAX_SGE) {
            throw new IllegalArgumentException(what + " " + sge + " outside 1.." + MAX_SGE);
        }
    }

    private static void checkDepth(int depth, String what) {
        if (depth < 1 || depth > 1 << 16 || Integer.bitCount(depth) != 1) {
            throw new IllegalArgumentException(what + " " + depth + " must be a power of two in 1..65536");
        }
    }

    /**
     * {@return 64 KiB segments, ICRC on, 64 messages in flight, queues of 256, up to 8 subflows, one at connect,
     * 5 s handshake, 2 s silence, two scatter/gather elements per work request and one per receive (send
     * queue entries of 64 bytes, receive queue entries of 32), no inline data}
     */
    public static QpConfig defaults() {
        return new QpConfig(64 * 1024, true, 64, 256, 256, 8, 1, Duration.ofSeconds(5), Duration.ofSeconds(2), null,
                2, 1, 0, DEFAULT_SEND_TIMEOUT);
    }

    /**
     * {@return this configuration with another segment size}
     *
     * @param bytes payload bytes per frame (64 .. 2^24-1)
     */
    public QpConfig withSegmentSize(int bytes) {
        return new QpConfig(bytes, icrc, messageWindow, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge, maxReceiveSge, maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration with the ICRC asked for or not}
     *
     * @param on whether frames should carry a CRC32C
     */
    public QpConfig withIcrc(boolean on) {
        return new QpConfig(segmentSize, on, messageWindow, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge, maxReceiveSge, maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration with another message window}
     *
     * @param messages messages in flight per direction, a power of two up to 2^15
     */
    public QpConfig withMessageWindow(int messages) {
        return new QpConfig(segmentSize, icrc, messages, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge, maxReceiveSge, maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration with other queue depths}
     *
     * @param send send work requests outstanding at most, a power of two
     * @param receive posted receives outstanding at most, a power of two
     */
    public QpConfig withQueueDepths(int send, int receive) {
        return new QpConfig(segmentSize, icrc, messageWindow, send, receive, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge, maxReceiveSge, maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration opening {@code atConnect} subflows at once} (raising the subflow limit to it if
     * needed)
     *
     * @param atConnect connections a connector opens at once
     */
    public QpConfig withSubflows(int atConnect) {
        return new QpConfig(segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth,
                Math.max(maxSubflows, atConnect), atConnect, handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge,
                maxReceiveSge, maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration with another subflow limit} (lowering the subflows opened at once to it if
     * needed)
     *
     * @param limit TCP connections one queue pair may span (1 .. {@link #MAX_SUBFLOWS})
     */
    public QpConfig withMaxSubflows(int limit) {
        return new QpConfig(segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth, limit,
                Math.min(subflows, limit), handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge, maxReceiveSge,
                maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration with other timeouts}
     *
     * @param handshake how long a connection may take to finish its handshake
     * @param silence how long a subflow may stay silent before it is declared dead
     */
    public QpConfig withTimeouts(Duration handshake, Duration silence) {
        Duration send = silence != null && sendTimeout.compareTo(silence) < 0 ? silence : sendTimeout;
        return new QpConfig(segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshake, silence, preSharedKey, maxSendSge, maxReceiveSge, maxInlineData, send);
    }

    /**
     * {@return this configuration with another send progress timeout ({@link #sendTimeout})}
     *
     * @param timeout how long outstanding work may make no progress; at least the silence timeout
     */
    public QpConfig withSendTimeout(Duration timeout) {
        return new QpConfig(segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge, maxReceiveSge, maxInlineData, timeout);
    }

    /**
     * {@return this configuration with a pre-shared key, or without one}
     *
     * @param key 16 to 64 bytes both ends hold, or null
     */
    public QpConfig withPreSharedKey(byte[] key) {
        return new QpConfig(segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, key, maxSendSge, maxReceiveSge, maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration with at most {@code send} scatter/gather elements per work request and
     * {@code receive} per posted receive}
     *
     * @param send elements per work request (1 .. {@link #MAX_SGE})
     * @param receive elements per posted receive (1 .. {@link #MAX_SGE})
     */
    public QpConfig withMaxSge(int send, int receive) {
        return new QpConfig(segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, preSharedKey, send, receive, maxInlineData, sendTimeout);
    }

    /**
     * {@return this configuration with up to {@code bytes} of inline data per SEND or WRITE}
     *
     * @param bytes 0 .. {@link #MAX_INLINE_DATA}; 0 allows none
     */
    public QpConfig withMaxInlineData(int bytes) {
        return new QpConfig(segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth, maxSubflows, subflows,
                handshakeTimeout, silenceTimeout, preSharedKey, maxSendSge, maxReceiveSge, bytes, sendTimeout);
    }

    /** {@return a copy of the pre-shared key, or null} */
    @Override
    public byte[] preSharedKey() {
        return preSharedKey == null ? null : preSharedKey.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QpConfig c && segmentSize == c.segmentSize && icrc == c.icrc
                && messageWindow == c.messageWindow && sendQueueDepth == c.sendQueueDepth
                && receiveQueueDepth == c.receiveQueueDepth && maxSubflows == c.maxSubflows && subflows == c.subflows
                && handshakeTimeout.equals(c.handshakeTimeout) && silenceTimeout.equals(c.silenceTimeout)
                && Arrays.equals(preSharedKey, c.preSharedKey) && maxSendSge == c.maxSendSge
                && maxReceiveSge == c.maxReceiveSge && maxInlineData == c.maxInlineData
                && sendTimeout.equals(c.sendTimeout);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(new Object[] {segmentSize, icrc, messageWindow, sendQueueDepth, receiveQueueDepth,
                maxSubflows, subflows, handshakeTimeout, silenceTimeout, maxSendSge, maxReceiveSge, maxInlineData, sendTimeout}) * 31
                + Arrays.hashCode(preSharedKey);
    }

    @Override
    public String toString() {
        return "QpConfig[segment=" + segmentSize + " icrc=" + icrc + " window=" + messageWindow + " sq="
                + sendQueueDepth + " rq=" + receiveQueueDepth + " subflows=" + subflows + "/" + maxSubflows
                + " handshake=" + handshakeTimeout + " silence=" + silenceTimeout + " send=" + sendTimeout
                + " sge=" + maxSendSge + "/"
                + maxReceiveSge + " inline=" + maxInlineData + (preSharedKey == null ? "" : " psk") + "]";
    }
}
