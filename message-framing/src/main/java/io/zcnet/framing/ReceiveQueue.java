package io.zcnet.framing;

/**
 * Posted receives in posting order, a bounded ring indexed by the absolute count of receives ever posted, so
 * "the frame whose RSN is n takes receive n" is an array lookup. Each entry is what a verbs receive's scatter
 * list names (ibv_post_recv(3), {@code sg_list} of {@code struct ibv_sge}): up to {@code maxSge} pieces of
 * registered regions, already resolved from their local keys and checked for LOCAL_WRITE, each an offset and
 * length inside its region; a SEND fills them in order. Every entry has its list from construction (one
 * {@link SgeList#table}), so posting fills or copies into it and allocates nothing. Owned by one
 * {@link MessageAssembler}; not thread-safe.
 */
final class ReceiveQueue {

    private final int mask;
    private final SgeList[] pieces;
    private final long[] workRequestIds;
    private long consumed;
    private long posted;
    /** Whether {@link #claim()} handed out the list at {@link #posted} and it is not posted yet. */
    private boolean claimOpen;

    ReceiveQueue(int capacity, int maxSge) {
        if (capacity < 1 || capacity > 1 << 24 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("receive queue capacity " + capacity + " must be a power of two in 1..2^24");
        }
        mask = capacity - 1;
        pieces = SgeList.table(capacity, maxSge);
        workRequestIds = new long[capacity];
    }

    /** Posts a receive over {@code resolved}'s pieces (copied), whose regions the caller checked. */
    boolean offer(long workRequestId, SgeList resolved) {
        SgeList to = claim();
        if (to == null) {
            return false;
        }
        to.copyFrom(resolved);
        post(workRequestId);
        return true;
    }

    /**
     * {@return the emptied list of the next receive, for the caller to fill in place and then {@link #post}; null
     * when the queue is full} Claiming again before posting hands out the same list, emptied again.
     */
    SgeList claim() {
        if (posted - consumed > mask) {
            return null;
        }
        claimOpen = true;
        return pieces[(int) posted & mask].clear();
    }

    /** {@return the list the last {@link #claim()} handed out, as the caller filled it} */
    SgeList claimed() {
        if (!claimOpen) {
            throw new IllegalStateException("no receive claimed since the last one was posted");
        }
        return pieces[(int) posted & mask];
    }

    /** Posts the receive whose list {@link #claim()} handed out, its pieces checked by the caller. */
    void post(long workRequestId) {
        claimed();
        claimOpen = false;
        workRequestIds[(int) posted & mask] = workRequestId;
        posted++;
    }

    /** Gives back the list {@link #claim()} handed out, posting nothing. */
    void unclaim() {
        claimed().clear();
        claimOpen = false;
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

    /** The pieces receive {@code index} (absolute) is scattered over. */
    SgeList pieces(long index) {
        return pieces[(int) index & mask];
    }

    long workRequestId(long index) {
        return workRequestIds[(int) index & mask];
    }

    /** Drops the oldest receive, returning its index. */
    long consume() {
        pieces[(int) consumed & mask].clear();
        return consumed++;
    }

    int size() {
        return (int) (posted - consumed);
    }

    int capacity() {
        return mask + 1;
    }
}
