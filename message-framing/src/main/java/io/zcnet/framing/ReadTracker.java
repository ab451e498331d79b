package io.zcnet.framing;

/**
 * Both directions of RDMA READ at the receiver, each a ring of {@code window} entries: the READs this side
 * requested and expects responses to ({@link #expect}, completed oldest first), and the READ requests the
 * peer sent that this side must answer ({@link #pendingFull}, {@link #nextPending}, {@link #poll}), in MSN
 * order. Allocation-free after construction. Owned by one {@link MessageAssembler}; not thread-safe.
 */
final class ReadTracker {
    private final int mask;
    private final ReadRequest[] pending;
    private long pendingHead;
    private long pendingTail;
    private final long[] expectedIds;
    private final int[] expectedKeys;
    private final long[] expectedOffsets;
    private final int[] expectedLengths;
    private long expectedHead;
    private long expectedTail;

    ReadTracker(int window) {
        this.mask = window - 1;
        pending = new ReadRequest[window];
        for (int i = 0; i < window; i++) {
            pending[i] = new ReadRequest();
        }
        expectedIds = new long[window];
        expectedKeys = new int[window];
        expectedOffsets = new long[window];
        expectedLengths = new int[window];
    }

    /** READs expected and not yet completed or flushed. */
    long expected() {
        return expectedTail - expectedHead;
    }

    /** Records a READ this side requested; false when a window of them is outstanding. */
    boolean expect(long workRequestId, int sinkRkey, long sinkOffset, int length) {
        if (expected() > mask) {
            return false;
        }
        int i = (int) expectedTail & mask;
        expectedIds[i] = workRequestId;
        expectedKeys[i] = sinkRkey;
        expectedOffsets[i] = sinkOffset;
        expectedLengths[i] = length;
        expectedTail++;
        return true;
    }

    /** Whether {@code [offset, offset + length)} of {@code key} lies inside a READ expected. */
    boolean covers(int key, long offset, int length) {
        for (long i = expectedHead; i < expectedTail; i++) {
            int s = (int) i & mask;
            long start = expectedOffsets[s];
            if (expectedKeys[s] == key && offset >= start && offset - start <= expectedLengths[s] - (long) length) {
                return true;
            }
        }
        return false;
    }

    /** Whether the oldest READ expected is exactly the response {@code (key, sinkOffset, length)}. */
    boolean oldestIs(int key, long sinkOffset, int length) {
        int s = (int) expectedHead & mask;
        return expectedHead != expectedTail && expectedKeys[s] == key && expectedOffsets[s] == sinkOffset
                && expectedLengths[s] == length;
    }

    /** Ends the oldest READ expected (completed or flushed) and returns its work request id. */
    long takeOldest() {
        return expectedIds[(int) expectedHead++ & mask];
    }

    /** Whether a window of the peer's READ requests waits to be answered. */
    boolean pendingFull() {
        return pendingTail - pendingHead > mask;
    }

    /** The entry the next READ request to answer is written into. */
    ReadRequest nextPending() {
        return pending[(int) pendingTail++ & mask];
    }

    /** Copies the oldest READ request to answer into {@code into}; false when none waits. */
    boolean poll(ReadRequest into) {
        if (pendingHead == pendingTail) {
            return false;
        }
        ReadRequest r = pending[(int) pendingHead++ & mask];
        into.msn = r.msn;
        into.rkey = r.rkey;
        into.regionOffset = r.regionOffset;
        into.length = r.length;
        into.sinkRkey = r.sinkRkey;
        into.sinkOffset = r.sinkOffset;
        return true;
    }
}
