package io.zcnet.framing;

import io.zcnet.buffer.MemoryRegion;

/**
 * Posted receives in posting order, a bounded ring indexed by the absolute count of receives ever
 * posted, so "the frame whose RSN is n takes receive n" is an array lookup. Each entry is what
 * a verbs scatter element names (ibv_post_recv(3), {@code struct ibv_sge}): a registered region, already
 * resolved from its local key and checked for LOCAL_WRITE, and an offset and length inside it. Owned by
 * one {@link MessageAssembler}; not thread-safe.
 */
final class ReceiveQueue {

    private final int mask;
    private final MemoryRegion[] regions;
    private final long[] offsets;
    private final long[] lengths;
    private final long[] workRequestIds;
    private long consumed;
    private long posted;

    ReceiveQueue(int capacity) {
        if (capacity < 1 || capacity > 1 << 24 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("receive queue capacity " + capacity + " must be a power of two in 1..2^24");
        }
        mask = capacity - 1;
        regions = new MemoryRegion[capacity];
        offsets = new long[capacity];
        lengths = new long[capacity];
        workRequestIds = new long[capacity];
    }

    boolean offer(long workRequestId, MemoryRegion region, long offset, long length) {
        if (posted - consumed > mask) {
            return false;
        }
        int i = (int) posted & mask;
        regions[i] = region;
        offsets[i] = offset;
        lengths[i] = length;
        workRequestIds[i] = workRequestId;
        posted++;
        return true;
    }

    /** Receives ever posted. */
    long posted() {
        return posted;
    }

    /** Receives ever consumed: the index of the oldest one posted and not yet consumed. */
    long consumed() {
        return consumed;
    }

    /** Whether receive {@code index} (absolute) is posted and not yet consumed. */
    boolean isPosted(long index) {
        return index >= consumed && index < posted;
    }

    MemoryRegion region(long index) {
        return regions[(int) index & mask];
    }

    /** Where the receive starts inside its region. */
    long offset(long index) {
        return offsets[(int) index & mask];
    }

    long length(long index) {
        return lengths[(int) index & mask];
    }

    long workRequestId(long index) {
        return workRequestIds[(int) index & mask];
    }

    /** Drops the oldest receive, returning its index. */
    long consume() {
        regions[(int) consumed & mask] = null;
        return consumed++;
    }

    int size() {
        return (int) (posted - consumed);
    }

    int capacity() {
        return mask + 1;
    }
}
