package io.zcnet.qp;

import io.zcnet.framing.FramingConfig;

import java.time.Duration;

/**
 * The wire parameters both ends of a queue pair agreed on its first subflow: the smaller segment size,
 * window, subflow limit and silence timeout of the two proposals (the window no larger than the agreed
 * segment size allows), and the ICRC if either side asked for it (the side that wants end-to-end checking
 * gets it). The silence timeout is agreed because each side heartbeats every quarter of its own: a side
 * waiting less than the peer's would declare idle subflows dead.
 */
record Agreement(int segmentSize, boolean icrc, int messageWindow, int maxSubflows, long silenceMillis) {

    /** What {@code local} and the peer's proposal agree on; throws if the proposal is not a valid one. */
    static Agreement of(QpConfig local, int segmentSize, boolean icrc, int window, int maxSubflows, long silenceMillis) {
        if (segmentSize < FramingConfig.MIN_SEGMENT_SIZE || segmentSize > FramingConfig.MAX_MESSAGE_SIZE
                || window < 1 || window > FramingConfig.MAX_MESSAGE_WINDOW || Integer.bitCount(window) != 1
                || maxSubflows < 1 || maxSubflows > QpConfig.MAX_SUBFLOWS
                || silenceMillis < QpConfig.MIN_SILENCE_MILLIS || silenceMillis > QpConfig.MAX_SILENCE_MILLIS) {
            throw new IllegalArgumentException("proposal out of range: segment " + segmentSize + ", window " + window
                    + ", subflows " + maxSubflows + ", silence " + silenceMillis + " ms");
        }
        int segment = Math.min(segmentSize, local.segmentSize());
        // Two windows each valid with its own segment size may not be with the smaller one: clamp, never refuse.
        int agreedWindow = Math.min(Math.min(window, local.messageWindow()), FramingConfig.largestWindow(segment));
        return new Agreement(segment, icrc || local.icrc(), agreedWindow, Math.min(maxSubflows, local.maxSubflows()),
                Math.min(silenceMillis, local.silenceTimeout().toMillis()));
    }

    FramingConfig framing() {
        return new FramingConfig(segmentSize, icrc, messageWindow);
    }

    /** The local configuration with these parameters in it. */
    QpConfig applyTo(QpConfig local) {
        return local.withSegmentSize(segmentSize).withIcrc(icrc).withMessageWindow(messageWindow)
                .withMaxSubflows(maxSubflows).withTimeouts(local.handshakeTimeout(), Duration.ofMillis(silenceMillis));
    }
}
