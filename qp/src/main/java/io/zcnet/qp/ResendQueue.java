package io.zcnet.qp;

import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.RingArrays;

/**
 * Which subflow carried each frame in flight, and the frames to send again, oldest first, after the subflow
 * that carried them failed: rxe's requester resends from its send queue the same way, from the oldest
 * unacknowledged packet on; the receiver places every segment once, whichever copy arrives first. Frames are
 * numbered from the queue pair's start; a frame's record sits at its number modulo {@link #capacity()}. The
 * records start small and double as the frames in flight need ({@link #fits}), up to the most the queue pair may
 * have in flight ({@link #capacityFor}), which {@link Requester} never passes: a queue pair of small messages costs
 * a few hundred bytes here, not the 16,384 records a window of the largest messages takes. They never shrink, so a
 * queue pair allocates only while it ramps up to its working depth. Owner thread of the loop.
 */
final class ResendQueue {
    /** A frame's subflow record while it waits to be sent again. */
    private static final byte NOT_CARRIED = -1;

    private final int maxCapacity;
    private int mask;
    private byte[] frameSubflow;
    // Frames to send again, as (ledger sequence, frame index) pairs in a FIFO.
    private long[] entry;
    private long[] frame;
    private long head;
    private long tail;
    private long framesResent;
    private long bytesResent;

    /** Bounds of {@link #capacityFor}: a floor that costs nothing, and the frame numbers the fixed ring had. */
    static final int MIN_CAPACITY = 1 << 10;
    static final int MAX_CAPACITY = 1 << 16;
    /** Records a new queue pair starts with: a handful of small messages in flight. */
    static final int INITIAL_CAPACITY = 64;

    /**
     * {@return the frames in flight {@code framing} needs at most}: the smallest power of two holding a full message
     * window of the largest messages, within {@link #MIN_CAPACITY} and {@link #MAX_CAPACITY}
     */
    static int capacityFor(FramingConfig framing) {
        long framesPerMessage = ((long) FramingConfig.MAX_MESSAGE_SIZE + framing.segmentSize() - 1) / framing.segmentSize();
        long needed = (long) framing.messageWindow() * framesPerMessage;
        long capacity = needed <= 1 ? 1 : Long.highestOneBit(needed - 1) << 1;
        return Math.clamp(capacity, MIN_CAPACITY, MAX_CAPACITY);
    }

    /** @param maxCapacity the most frames the queue pair may have in flight, a power of two ({@link #capacityFor}) */
    ResendQueue(int maxCapacity) {
        if (Integer.bitCount(maxCapacity) != 1) {
            throw new IllegalArgumentException("resend queue capacity " + maxCapacity + " must be a power of two");
        }
        this.maxCapacity = maxCapacity;
        int initial = Math.min(INITIAL_CAPACITY, maxCapacity);
        mask = initial - 1;
        frameSubflow = new byte[initial];
        entry = new long[initial];
        frame = new long[initial];
    }

    /** {@return how many frames the records hold now} */
    int capacity() {
        return mask + 1;
    }

    /** {@return the most frames the queue pair may have in flight} */
    int maxCapacity() {
        return maxCapacity;
    }

    /**
     * Makes room for the records of frames {@code [oldest, end)}, the ones up to {@code handedEnd} already carried:
     * false, changing nothing, when that is more than the queue pair may have in flight.
     */
    boolean fits(long oldest, long handedEnd, long end) {
        long needed = end - oldest;
        if (needed <= mask + 1) {
            return true;
        }
        if (needed > maxCapacity) {
            return false;
        }
        int capacity = (int) Math.min(maxCapacity, Long.highestOneBit(needed - 1) << 1);
        frameSubflow = RingArrays.grown(frameSubflow, capacity, oldest, handedEnd);
        entry = RingArrays.grown(entry, capacity, head, tail);
        frame = RingArrays.grown(frame, capacity, head, tail);
        mask = capacity - 1;
        return true;
    }

    /** Frame {@code globalFrame} left on subflow {@code subflow}. */
    void carried(long globalFrame, int subflow) {
        frameSubflow[(int) globalFrame & mask] = (byte) subflow;
    }

    /**
     * Queues for resending every frame of {@code ledger} that went out on subflow {@code index} and is not
     * acknowledged, with {@code acknowledged} MSNs acknowledged.
     */
    void queue(int index, SendLedger ledger, long acknowledged) {
        for (long seq = ledger.head; seq < ledger.tail; seq++) {
            int i = ledger.slot(seq);
            if (!ledger.begun[i] || ledger.isAcknowledged(i, acknowledged)) {
                continue;
            }
            long first = ledger.firstFrame[i];
            for (long f = 0; f < ledger.handed[i]; f++) {
                int at = (int) (first + f) & mask;
                if (frameSubflow[at] == index) {
                    // Marked as carried by no subflow until resent: a frame waits in the queue at most once,
                    // so the queue never holds more than the frames in flight (at most its capacity).
                    frameSubflow[at] = NOT_CARRIED;
                    entry[(int) tail & mask] = seq;
                    frame[(int) tail & mask] = f;
                    tail++;
                }
            }
        }
    }

    /** Whether a frame waits to be sent again. */
    boolean hasResends() {
        return head < tail;
    }

    /** {@return the ledger sequence of the oldest frame waiting} */
    long headEntry() {
        return entry[(int) head & mask];
    }

    /** {@return the index, within its ledger entry, of the oldest frame waiting} */
    long headFrame() {
        return frame[(int) head & mask];
    }

    /** The oldest frame waiting needs no resend (acknowledged since, or its entry retired). */
    void skip() {
        head++;
    }

    /** The oldest frame waiting, of {@code payloadBytes}, was sent again. */
    void resent(int payloadBytes) {
        head++;
        framesResent++;
        bytesResent += payloadBytes;
    }

    long framesResent() {
        return framesResent;
    }

    long bytesResent() {
        return bytesResent;
    }
}
