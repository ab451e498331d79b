package io.zcnet.examples;

import io.zcnet.framing.FramingConfig;
import io.zcnet.qp.QpConfig;

/**
 * What a bulk run moves, as the client chose it and its HELLO tells the server; immutable. The limits are
 * checked here, once, for the command line and for a HELLO from the network alike.
 *
 * @param op          the work request that carries the data
 * @param messageSize bytes per work request (1 .. 16 MiB - 1: one message)
 * @param window      work requests in flight at most (1 .. {@link #MAX_WINDOW})
 * @param totalBytes  bytes to move, or 0 for a run bounded by {@code nanos}
 * @param nanos       how long to run when {@code totalBytes} is 0
 * @param verify      whether every message carries {@link MessagePattern}'s bytes and the destination checks them
 */
record BulkPlan(BulkOp op, int messageSize, int window, long totalBytes, long nanos, boolean verify) {
    static final int MAX_MESSAGE = FramingConfig.MAX_MESSAGE_SIZE;
    static final int MAX_WINDOW = 1024;
    /** The ring of message slots on either side stays below this. */
    static final long MAX_RING_BYTES = 1L << 30;

    BulkPlan {
        if (op == null) {
            throw new IllegalArgumentException("--op is required: write, send or read");
        }
        if (messageSize < 1 || messageSize > MAX_MESSAGE) {
            throw new IllegalArgumentException("--message must be 1.." + MAX_MESSAGE + " bytes (one message), got "
                    + messageSize);
        }
        if (window < 1 || window > MAX_WINDOW) {
            throw new IllegalArgumentException("--window must be 1.." + MAX_WINDOW + ", got " + window);
        }
        if ((long) messageSize * (window + 1) > MAX_RING_BYTES) {
            throw new IllegalArgumentException("--window " + window + " of --message " + messageSize
                    + " needs more than 1 GiB of message slots: make one of them smaller");
        }
        if (totalBytes < 0 || totalBytes == 0 && nanos <= 0 || totalBytes > 0 && nanos != 0) {
            throw new IllegalArgumentException("give a positive --bytes or a positive --seconds, not both");
        }
    }

    /**
     * What the client's queue pair asks for: a message window of {@link #window()} rounded up to the power of
     * two queue pairs take, and queues deep enough for it. The server offers {@link #MAX_WINDOW} and the
     * handshake agrees on the smaller, this one.
     */
    QpConfig queuePairConfig() {
        int messages = window == 1 ? 1 : Integer.highestOneBit(window - 1) << 1;
        int depth = Math.max(QpConfig.defaults().sendQueueDepth(), messages);
        return QpConfig.defaults().withMessageWindow(messages).withQueueDepths(depth, depth);
    }

    boolean timed() {
        return totalBytes == 0;
    }

    /** Messages the run moves when bounded by bytes; unbounded (Long.MAX_VALUE) when timed. */
    long messages() {
        return timed() ? Long.MAX_VALUE : (totalBytes + messageSize - 1) / messageSize;
    }

    /** Bytes of message {@code seq}: the message size, less for the last one of a byte-bounded run. */
    int lengthOf(long seq) {
        return timed() ? messageSize : (int) Math.min(messageSize, totalBytes - seq * messageSize);
    }

    /**
     * Slots of the server's region: one per message in flight, and one more for READ so that two READs in a
     * row into the same local slot never fetch the same pattern (a READ that placed nothing would pass).
     */
    int serverSlots() {
        return op == BulkOp.READ ? window + 1 : window;
    }

    /** Whether the server posts a receive per message: SENDs consume one, and so do verified WRITEs. */
    boolean serverReceivesData() {
        return op == BulkOp.SEND || op == BulkOp.WRITE && verify;
    }
}
