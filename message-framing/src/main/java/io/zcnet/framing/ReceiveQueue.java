package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * Posted receive buffers in posting order, a bounded ring indexed by the absolute count of receives
 * ever posted, so "the n-th receive-consuming message takes receive n" is an array lookup. Owned by one
 * {@link MessageAssembler}; not thread-safe.
 */
final class ReceiveQueue {

    private final int mask;
    private final MemorySegment[] buffers;
    private final long[] workRequestIds;
    private long consumed;
    private long posted;

    ReceiveQueue(int capacity) {
        if (capacity < 1 || capacity > 1 << 24 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("receive queue capacity " + capacity + " must be a power of two in 1..2^24");
        }
        mask = capacity - 1;
        buffers = new MemorySegment[capacity];
        workRequestIds = new long[capacity];
    }

    boolean offer(long workRequestId, MemorySegment buffer) {
        if (posted - consumed > mask) {
            return false;
        }
        int i = (int) posted & mask;
        buffers[i] = buffer;
        workRequestIds[i] = workRequestId;
        posted++;
        return true;
    }

    /** Receives ever posted. */
    long posted() {
        return posted;
    }

    /** Receives ever taken by completed messages (or flushed). */
    long consumed() {
        return consumed;
    }

    /** Whether receive {@code index} (absolute) is posted and not yet consumed. */
    boolean isPosted(long index) {
        return index >= consumed && index < posted;
    }

    MemorySegment buffer(long index) {
        return buffers[(int) index & mask];
    }

    long workRequestId(long index) {
        return workRequestIds[(int) index & mask];
    }

    /** Drops the oldest receive, returning its index. */
    long consume() {
        buffers[(int) consumed & mask] = null;
        return consumed++;
    }

    int size() {
        return (int) (posted - consumed);
    }

    int capacity() {
        return mask + 1;
    }
}
