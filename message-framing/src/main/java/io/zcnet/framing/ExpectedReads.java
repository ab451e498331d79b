package io.zcnet.framing;

/**
 * The READs this side issued and whose responses it expects ({@link MessageAssembler#expectReadResponse}),
 * in request order: a bounded ring of (work request id, sink remote key, sink offset, length). A READ
 * RESPONSE frame is placed only inside one of them, which is what authorises writing into a sink that
 * grants LOCAL_WRITE only; response messages complete the reads in the order they were expected, as
 * verbs completes RDMA READs in posting order. The arrays start at {@link #INITIAL_CAPACITY} entries and double
 * when full, up to the capacity ({@link RingArrays}): only growth allocates. Not thread-safe: owned by one
 * {@link MessageAssembler}.
 */
final class ExpectedReads {

    /** Reads a table has room for at first. */
    static final int INITIAL_CAPACITY = 4;

    private final int capacity;
    private int mask;
    private long[] workRequestIds;
    private int[] sinkKeys;
    private long[] sinkOffsets;
    private int[] lengths;
    private long head;
    private long tail;

    /** @param capacity a power of two: the message window, as no more responses can be outstanding */
    ExpectedReads(int capacity) {
        this.capacity = capacity;
        int size = Math.min(INITIAL_CAPACITY, capacity);
        mask = size - 1;
        workRequestIds = new long[size];
        sinkKeys = new int[size];
        sinkOffsets = new long[size];
        lengths = new int[size];
    }

    int size() {
        return (int) (tail - head);
    }

    boolean isFull() {
        return tail - head >= capacity;
    }

    /** Adds a read; the caller checked {@link #isFull}. */
    void add(long workRequestId, int sinkKey, long sinkOffset, int length) {
        if (tail - head > mask) {
            grow();
        }
        int i = (int) tail++ & mask;
        workRequestIds[i] = workRequestId;
        sinkKeys[i] = sinkKey;
        sinkOffsets[i] = sinkOffset;
        lengths[i] = length;
    }

    /** Doubles the arrays; called only when every entry is taken, so each moves to its sequence's new place. */
    private void grow() {
        int size = 2 * (mask + 1);
        workRequestIds = RingArrays.grown(workRequestIds, size, head, tail);
        sinkKeys = RingArrays.grown(sinkKeys, size, head, tail);
        sinkOffsets = RingArrays.grown(sinkOffsets, size, head, tail);
        lengths = RingArrays.grown(lengths, size, head, tail);
        mask = size - 1;
    }

    /**
     * Whether {@code length} bytes at {@code offset} of the sink {@code key} lie inside a read still
     * expected. Linear in the reads outstanding, which this side posted itself (at most a window).
     */
    boolean covers(int key, long offset, int length) {
        for (long i = head; i < tail; i++) {
            int s = (int) i & mask;
            long start = sinkOffsets[s];
            if (sinkKeys[s] == key && offset >= start && offset - start <= lengths[s] - (long) length) {
                return true;
            }
        }
        return false;
    }

    /** Whether the oldest read expected is exactly {@code length} bytes at {@code offset} of sink {@code key}. */
    boolean oldestIs(int key, long offset, int length) {
        int s = (int) head & mask;
        return head != tail && sinkKeys[s] == key && sinkOffsets[s] == offset && lengths[s] == length;
    }

    /** Drops the oldest read and returns its work request id; the caller checked there is one. */
    long takeOldest() {
        return workRequestIds[(int) head++ & mask];
    }
}
