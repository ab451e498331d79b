package io.zcnet.framing;

/**
 * The READs this side issued and whose responses it expects ({@link MessageAssembler#expectReadResponse}),
 * in request order: a bounded ring of (work request id, sink remote key, sink offset, length). A READ
 * RESPONSE frame is placed only inside one of them, which is what authorises writing into a sink that
 * grants LOCAL_WRITE only; response messages complete the reads in the order they were expected, as
 * verbs completes RDMA READs in posting order. Not thread-safe: owned by one {@link MessageAssembler}.
 */
final class ExpectedReads {

    private final int mask;
    private final long[] workRequestIds;
    private final int[] sinkKeys;
    private final long[] sinkOffsets;
    private final int[] lengths;
    private long head;
    private long tail;

    /** @param capacity a power of two: the message window, as no more responses can be outstanding */
    ExpectedReads(int capacity) {
        mask = capacity - 1;
        workRequestIds = new long[capacity];
        sinkKeys = new int[capacity];
        sinkOffsets = new long[capacity];
        lengths = new int[capacity];
    }

    int size() {
        return (int) (tail - head);
    }

    boolean isFull() {
        return tail - head > mask;
    }

    /** Adds a read; the caller checked {@link #isFull}. */
    void add(long workRequestId, int sinkKey, long sinkOffset, int length) {
        int i = (int) tail++ & mask;
        workRequestIds[i] = workRequestId;
        sinkKeys[i] = sinkKey;
        sinkOffsets[i] = sinkOffset;
        lengths[i] = length;
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
