package io.zcnet.framing;

/**
 * READ requests that arrived, were validated and completed in MSN order, and wait for this side's responder
 * ({@link MessageAssembler#pollReadRequest}): a bounded ring of parallel arrays, so queueing one allocates nothing
 * once the arrays are as long as the requests waiting need; they start at {@link #INITIAL_CAPACITY} and double
 * when full, up to the capacity ({@link RingArrays}). When it is full at its capacity the assembler holds the next
 * request back unretired (and unacknowledged), which stops the peer through its MSN window. Not thread-safe: owned
 * by one {@link MessageAssembler}.
 */
final class ReadRequestQueue {

    /** Requests a queue has room for at first. */
    static final int INITIAL_CAPACITY = 4;

    private final int capacity;
    private int mask;
    private int[] msn;
    private int[] rkey;
    private long[] regionOffset;
    private int[] length;
    private int[] sinkRkey;
    private long[] sinkOffset;
    private long head;
    private long tail;

    /** @param capacity a power of two: the message window, as no more requests can be outstanding */
    ReadRequestQueue(int capacity) {
        this.capacity = capacity;
        int size = Math.min(INITIAL_CAPACITY, capacity);
        mask = size - 1;
        msn = new int[size];
        rkey = new int[size];
        regionOffset = new long[size];
        length = new int[size];
        sinkRkey = new int[size];
        sinkOffset = new long[size];
    }

    boolean isFull() {
        return tail - head >= capacity;
    }

    /** Queues the request of message {@code slot} in {@code slots}, MSN {@code msn}; the caller checked {@link #isFull}. */
    void add(int msn, MessageSlots slots, int slot) {
        if (tail - head > mask) {
            grow();
        }
        int i = (int) tail++ & mask;
        this.msn[i] = msn;
        rkey[i] = slots.readRkey(slot);
        regionOffset[i] = slots.readOffset(slot);
        length[i] = slots.readLength(slot);
        sinkRkey[i] = slots.readSinkRkey(slot);
        sinkOffset[i] = slots.readSinkOffset(slot);
    }

    /** Doubles the arrays; called only when every entry is taken, so each moves to its sequence's new place. */
    private void grow() {
        int size = 2 * (mask + 1);
        msn = RingArrays.grown(msn, size, head, tail);
        rkey = RingArrays.grown(rkey, size, head, tail);
        regionOffset = RingArrays.grown(regionOffset, size, head, tail);
        length = RingArrays.grown(length, size, head, tail);
        sinkRkey = RingArrays.grown(sinkRkey, size, head, tail);
        sinkOffset = RingArrays.grown(sinkOffset, size, head, tail);
        mask = size - 1;
    }

    /** Copies the oldest request into {@code into} and drops it; false when none is waiting. */
    boolean poll(ReadRequest into) {
        if (head == tail) {
            return false;
        }
        int i = (int) head++ & mask;
        into.msn = msn[i];
        into.rkey = rkey[i];
        into.regionOffset = regionOffset[i];
        into.length = length[i];
        into.sinkRkey = sinkRkey[i];
        into.sinkOffset = sinkOffset[i];
        return true;
    }
}
