package io.zcnet.qp;

import io.zcnet.framing.FramingConfig;

/**
 * The wire parameters both ends of a queue pair agreed on its first subflow: the smaller segment size,
 * window and subflow limit of the two proposals (the window no larger than the agreed segment size allows), and the ICRC if either side asked for it (the side that
 * wants end-to-end checking gets it).
 */
record Agreement(int segmentSize, boolean icrc, int messageWindow, int maxSubflows) {

    /** What {@code local} and the peer's proposal agree on; throws if the proposal is not a valid one. */
    static Agreement of(QpConfig local, int segmentSize, boolean icrc, int window, int maxSubflows) {
        if (segmentSize < FramingConfig.MIN_SEGMENT_SIZE || segmentSize > FramingConfig.MAX_MESSAGE_SIZE
                || window < 1 || window > FramingConfig.MAX_MESSAGE_WINDOW || Integer.bitCount(window) != 1
                || maxSubflows < 1 || maxSubflows > QpConfig.MAX_SUBFLOWS) {
            throw new IllegalArgumentException("proposal out of range: segment " + segmentSize + ", window " + window
                    + ", subflows " + maxSubflows);
        }
        int segment = Math.min(segmentSize, local.segmentSize());
        // Two windows each valid with its own segment size may not be with the smaller one: clamp, never refuse.
        int agreedWindow = Math.min(Math.min(window, local.messageWindow()), FramingConfig.largestWindow(segment));
        return new Agreement(segment, icrc || local.icrc(), agreedWindow, Math.min(maxSubflows, local.maxSubflows()));
    }

    FramingConfig framing() {
        return new FramingConfig(segmentSize, icrc, messageWindow);
    }

    /** The local configuration with these parameters in it. */
    QpConfig applyTo(QpConfig local) {
        return local.withSegmentSize(segmentSize).withIcrc(icrc).withMessageWindow(messageWindow)
                .withMaxSubflows(maxSubflows);
    }
}
