package io.zcnet.framing;

/**
 * READ requests that arrived, were validated and completed in MSN order, and wait for this side's responder
 * ({@link MessageAssembler#pollReadRequest}): a bounded ring of preallocated {@link ReadRequest} holders, so
 * queueing one allocates nothing. When it is full the assembler holds the next request back unretired (and
 * unacknowledged), which stops the peer through its MSN window. Not thread-safe: owned by one
 * {@link MessageAssembler}.
 */
final class ReadRequestQueue {

    private final int mask;
    private final ReadRequest[] requests;
    private long head;
    private long tail;

    /** @param capacity a power of two: the message window, as no more requests can be outstanding */
    ReadRequestQueue(int capacity) {
        mask = capacity - 1;
        requests = new ReadRequest[capacity];
        for (int i = 0; i < capacity; i++) {
            requests[i] = new ReadRequest();
        }
    }

    boolean isFull() {
        return tail - head > mask;
    }

    /** Queues the request of message {@code slot} in {@code slots}, MSN {@code msn}; the caller checked {@link #isFull}. */
    void add(int msn, MessageSlots slots, int slot) {
        ReadRequest r = requests[(int) tail++ & mask];
        r.msn = msn;
        r.rkey = slots.readRkey(slot);
        r.regionOffset = slots.readOffset(slot);
        r.length = slots.readLength(slot);
        r.sinkRkey = slots.readSinkRkey(slot);
        r.sinkOffset = slots.readSinkOffset(slot);
    }

    /** Copies the oldest request into {@code into} and drops it; false when none is waiting. */
    boolean poll(ReadRequest into) {
        if (head == tail) {
            return false;
        }
        ReadRequest r = requests[(int) head++ & mask];
        into.msn = r.msn;
        into.rkey = r.rkey;
        into.regionOffset = r.regionOffset;
        into.length = r.length;
        into.sinkRkey = r.sinkRkey;
        into.sinkOffset = r.sinkOffset;
        return true;
    }
}
