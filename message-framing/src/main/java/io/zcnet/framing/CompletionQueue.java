package io.zcnet.framing;

/**
 * A bounded ring of completions, preallocated as parallel arrays of fixed-size entries (the shape of a
 * CQ ring: one producer slot per completion, nothing allocated per entry).
 *
 * <p>Completions leave in the order they were added; {@link MessageAssembler} adds them in posting (MSN)
 * order. Not thread-safe: producer and consumer are the same thread (the queue pair's owner); a
 * cross-thread CQ belongs to the qp layer.
 */
public final class CompletionQueue {

    private final int mask;
    private final long[] workRequestIds;
    private final int[] statuses;
    private final int[] opcodes;
    private final int[] byteCounts;
    private final int[] immediates;
    private final int[] msns;
    private long head;
    private long tail;

    /**
     * An empty queue.
     *
     * @param capacity entries, a power of two from 1 to 2^24
     */
    public CompletionQueue(int capacity) {
        if (capacity < 1 || capacity > 1 << 24 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("capacity " + capacity + " must be a power of two in 1..2^24");
        }
        mask = capacity - 1;
        workRequestIds = new long[capacity];
        statuses = new int[capacity];
        opcodes = new int[capacity];
        byteCounts = new int[capacity];
        immediates = new int[capacity];
        msns = new int[capacity];
    }

    /** {@return how many completions the queue holds at most} */
    public int capacity() {
        return mask + 1;
    }

    /** {@return how many completions wait to be polled} */
    public int size() {
        return (int) (tail - head);
    }

    /** {@return whether no completion waits} */
    public boolean isEmpty() {
        return tail == head;
    }

    /** {@return how many more completions fit} */
    public int remaining() {
        return capacity() - size();
    }

    /** Adds a completion; false (nothing added) when full. */
    boolean offer(long workRequestId, int status, int opcode, int byteCount, int immediate, int msn) {
        if (tail - head > mask) {
            return false;
        }
        int i = (int) tail & mask;
        workRequestIds[i] = workRequestId;
        statuses[i] = status;
        opcodes[i] = opcode;
        byteCounts[i] = byteCount;
        immediates[i] = immediate;
        msns[i] = msn;
        tail++;
        return true;
    }

    /**
     * Moves the oldest completion into {@code into}.
     *
     * @return false, leaving {@code into} untouched, when the queue is empty
     * @param into the holder to fill
     */
    public boolean poll(Completion into) {
        if (into == null) {
            throw new IllegalArgumentException("into is null");
        }
        if (head == tail) {
            return false;
        }
        int i = (int) head & mask;
        into.workRequestId = workRequestIds[i];
        into.status = statuses[i];
        into.opcode = opcodes[i];
        into.byteCount = byteCounts[i];
        into.immediate = immediates[i];
        into.msn = msns[i];
        head++;
        return true;
    }

    @Override
    public String toString() {
        return "CompletionQueue[" + size() + "/" + capacity() + "]";
    }
}
