package io.zcnet.framing;

/**
 * Posted receives in posting order, a bounded ring indexed by the absolute count of receives ever posted, so
 * "the frame whose RSN is n takes receive n" is an array lookup. Each entry is what a verbs receive's scatter
 * list names (ibv_post_recv(3), {@code sg_list} of {@code struct ibv_sge}): up to {@code maxSge} pieces of
 * registered regions, already resolved from their local keys and checked for LOCAL_WRITE, each an offset and
 * length inside its region; a SEND fills them in order. The ring starts at {@link #INITIAL_CAPACITY} entries
 * and doubles when a claim finds it full, up to its capacity, so a queue pair with a few receives posted costs a
 * few lists, not its receive queue's depth of them; it never shrinks. Each entry keeps its list (the same
 * object) across a growth, and posting fills or copies into it: only growth allocates. Owned by one
 * {@link MessageAssembler}; not thread-safe.
 */
final class ReceiveQueue {

    /** Entries a queue starts with. */
    static final int INITIAL_CAPACITY = 16;

    private final int capacity;
    private final int maxSge;
    private int mask;
    private SgeList[] pieces;
    private long[] workRequestIds;
    private long consumed;
    private long posted;
    /** Whether {@link #claim()} handed out the list at {@link #posted} and it is not posted yet. */
    private boolean claimOpen;

    ReceiveQueue(int capacity, int maxSge) {
        if (capacity < 1 || capacity > 1 << 24 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("receive queue capacity " + capacity + " must be a power of two in 1..2^24");
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        int size = Math.min(INITIAL_CAPACITY, capacity);
        mask = size - 1;
        pieces = SgeList.table(size, maxSge);
        workRequestIds = new long[size];
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
            if (mask + 1 >= capacity) {
                return null;
            }
            grow();
        }
        claimOpen = true;
        return pieces[(int) posted & mask].clear();
    }

    /** Doubles the ring; called only when every entry is posted, so each moves to its index's new place. */
    private void grow() {
        int size = 2 * (mask + 1);
        pieces = RingArrays.grownLists(pieces, size, consumed, posted, maxSge);
        workRequestIds = RingArrays.grown(workRequestIds, size, consumed, posted);
        mask = size - 1;
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

    /** {@return the most receives the queue may hold} */
    int capacity() {
        return capacity;
    }

    /** {@return how many entries the ring holds now} */
    int allocated() {
        return mask + 1;
    }
}
