package io.zcnet.framing;

/**
 * A bounded ring of completions, parallel arrays of fixed-size entries (the shape of a CQ ring: one producer slot
 * per completion, nothing allocated per entry). The arrays start at {@link #INITIAL_CAPACITY} entries and double
 * when an offer finds them full, up to the capacity: a queue pair with a few completions pending at a time costs a
 * few entries; only growth allocates.
 *
 * <p>Completions leave in the order they were added; {@link MessageAssembler} adds them in posting (MSN)
 * order. Not thread-safe: producer and consumer are the same thread (the queue pair's owner); a
 * cross-thread CQ belongs to the qp layer.
 */
public final class CompletionQueue {

    /** Entries a queue starts with. */
    public static final int INITIAL_CAPACITY = 16;

    private final int capacity;
    private int mask;
    private long[] workRequestIds;
    private int[] statuses;
    private int[] opcodes;
    private int[] byteCounts;
    private int[] immediates;
    private int[] msns;
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
        this.capacity = capacity;
        int size = Math.min(INITIAL_CAPACITY, capacity);
        mask = size - 1;
        workRequestIds = new long[size];
        statuses = new int[size];
        opcodes = new int[size];
        byteCounts = new int[size];
        immediates = new int[size];
        msns = new int[size];
    }

    /** {@return how many completions the queue holds at most} */
    public int capacity() {
        return capacity;
    }

    /** {@return how many entries its arrays hold now} */
    public int allocated() {
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
            if (mask + 1 >= capacity) {
                return false;
            }
            grow();
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

    /** Doubles the arrays; called only when every entry is taken, so each moves to its sequence's new place. */
    private void grow() {
        int size = 2 * (mask + 1);
        workRequestIds = RingArrays.grown(workRequestIds, size, head, tail);
        statuses = RingArrays.grown(statuses, size, head, tail);
        opcodes = RingArrays.grown(opcodes, size, head, tail);
        byteCounts = RingArrays.grown(byteCounts, size, head, tail);
        immediates = RingArrays.grown(immediates, size, head, tail);
        msns = RingArrays.grown(msns, size, head, tail);
        mask = size - 1;
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
        return "CompletionQueue[" + size() + "/" + capacity() + ", " + allocated() + " allocated]";
    }
}
