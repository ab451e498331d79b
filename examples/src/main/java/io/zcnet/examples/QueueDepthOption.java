package io.zcnet.examples;

import io.zcnet.qp.QpConfig;

/**
 * {@code --queue-depth} of {@code qp-server} and {@code qp-load}: deeper queues and a window as wide, so one queue pair
 * may keep as much in flight as many queue pairs do together (the comparison of {@code bench/qp-many.sh}).
 */
final class QueueDepthOption {
    private QueueDepthOption() {
    }

    /** {@return the defaults for 0, else queues {@code depth} deep with a message window of {@code depth}} */
    static QpConfig config(int depth) {
        if (depth == 0) {
            return QpConfig.defaults();
        }
        if (depth < 1 || depth > 1 << 15 || Integer.bitCount(depth) != 1) {
            throw new IllegalArgumentException("--queue-depth must be 0 or a power of two up to 32768, got " + depth);
        }
        return QpConfig.defaults().withQueueDepths(depth, depth).withMessageWindow(depth);
    }
}
