package io.zcnet.qp;

import io.zcnet.framing.RingArrays;
import io.zcnet.framing.SgeList;

/**
 * Send work requests taken from the send queue and not yet completed, in posting order: what each one is,
 * which MSNs and frames it took, and how far it got. A work request stays here until the peer has
 * acknowledged all its messages (and, for a READ, all its responses have landed), because a subflow that
 * fails may force any of its frames to be sent again. READ responses this side owes the peer live here
 * too, as internal entries that complete without a completion. Parallel arrays indexed by sequence number
 * modulo a power of two, each entry with a scatter/gather list of its own (made once, refilled per entry,
 * the lists' pieces side by side as the other columns). The arrays start small and double when the ledger is
 * full, up to the most entries the queue pair may hold: a queue pair with a few requests outstanding costs a few
 * rows, not the send queue's and window's depth of them; they never shrink. An entry's slot changes when the
 * arrays grow, so a slot is good only until the next {@link #hasRoom()}. Owner thread of the loop.
 */
final class SendLedger {
    /** An internal entry: the response to one READ request of the peer. */
    static final int READ_RESPONSE = 5;

    /** Rows a new queue pair starts with. */
    static final int INITIAL_CAPACITY = 16;

    private final int maxCapacity;
    private final int maxSge;
    int mask;
    long[] workRequestId;
    int[] kind;
    boolean[] signaled;
    /** Signaled, but with its acknowledgement left to the peer's next frame ({@link WorkRequest#signaledLazily()}). */
    boolean[] lazy;
    int[] immediate;
    /**
     * The local elements: the source of a SEND or WRITE, the sinks of a READ (named by their remote keys once
     * checked), or the one piece of memory a READ response is sent from.
     */
    SgeList[] local;
    /** Bytes of all local elements together. */
    int[] length;
    int[] rkey;
    long[] remoteOffset;
    int[] sinkRkey;
    long[] sinkOffset;
    /** Status decided before the work request went out (a refused local key), or -1. */
    int[] earlyStatus;

    // Set when the entry is begun (its MSNs claimed).
    boolean[] begun;
    /** Whether its last frame asks the peer for a prompt acknowledgement (FrameHeader.FLAG_ACK_REQUEST). */
    boolean[] ackRequest;
    int[] firstMsn;
    /** The receive sequence number a receive-consuming entry names (SEND, WRITE with immediate). */
    int[] rsn;
    int[] messages;
    /** MSNs claimed up to and including this entry's, counted from the start: acknowledged once the
     *  peer's cumulative acknowledgement reaches it. */
    long[] msnEnd;
    long[] firstFrame;
    long[] frameCount;
    /** Frames handed to a subflow at least once. */
    long[] handed;
    /** READ: pieces registered with the assembler, and responses that landed. */
    int[] readsExpected;
    int[] readsDone;
    /** READ: the first response error, or -1. */
    int[] readStatus;

    long head;
    long tail;
    int userEntries;

    /**
     * @param maxCapacity the most entries, a power of two
     * @param maxSge      local elements an entry may have
     */
    SendLedger(int maxCapacity, int maxSge) {
        if (Integer.bitCount(maxCapacity) != 1) {
            throw new IllegalArgumentException("ledger capacity " + maxCapacity + " must be a power of two");
        }
        this.maxCapacity = maxCapacity;
        this.maxSge = maxSge;
        int capacity = Math.min(INITIAL_CAPACITY, maxCapacity);
        mask = capacity - 1;
        workRequestId = new long[capacity];
        kind = new int[capacity];
        signaled = new boolean[capacity];
        lazy = new boolean[capacity];
        immediate = new int[capacity];
        local = SgeList.table(capacity, maxSge);
        length = new int[capacity];
        rkey = new int[capacity];
        remoteOffset = new long[capacity];
        sinkRkey = new int[capacity];
        sinkOffset = new long[capacity];
        earlyStatus = new int[capacity];
        begun = new boolean[capacity];
        ackRequest = new boolean[capacity];
        firstMsn = new int[capacity];
        rsn = new int[capacity];
        messages = new int[capacity];
        msnEnd = new long[capacity];
        firstFrame = new long[capacity];
        frameCount = new long[capacity];
        handed = new long[capacity];
        readsExpected = new int[capacity];
        readsDone = new int[capacity];
        readStatus = new int[capacity];
    }

    /** {@return how many entries the ledger's arrays hold now} */
    int capacity() {
        return mask + 1;
    }

    /** {@return how many entries the ledger may ever hold} */
    int maxCapacity() {
        return maxCapacity;
    }

    /** Whether an entry may be appended: there is a free row, or the arrays could double to make one. */
    boolean hasRoom() {
        if (tail - head <= mask) {
            return true;
        }
        if (mask + 1 >= maxCapacity) {
            return false;
        }
        grow();
        return true;
    }

    /** Doubles the arrays; called only when every row is taken, so each moves to its sequence's new slot. */
    private void grow() {
        int size = 2 * (mask + 1);
        local = RingArrays.grownLists(local, size, head, tail, maxSge);
        workRequestId = RingArrays.grown(workRequestId, size, head, tail);
        kind = RingArrays.grown(kind, size, head, tail);
        signaled = RingArrays.grown(signaled, size, head, tail);
        lazy = RingArrays.grown(lazy, size, head, tail);
        immediate = RingArrays.grown(immediate, size, head, tail);
        length = RingArrays.grown(length, size, head, tail);
        rkey = RingArrays.grown(rkey, size, head, tail);
        remoteOffset = RingArrays.grown(remoteOffset, size, head, tail);
        sinkRkey = RingArrays.grown(sinkRkey, size, head, tail);
        sinkOffset = RingArrays.grown(sinkOffset, size, head, tail);
        earlyStatus = RingArrays.grown(earlyStatus, size, head, tail);
        begun = RingArrays.grown(begun, size, head, tail);
        ackRequest = RingArrays.grown(ackRequest, size, head, tail);
        firstMsn = RingArrays.grown(firstMsn, size, head, tail);
        rsn = RingArrays.grown(rsn, size, head, tail);
        messages = RingArrays.grown(messages, size, head, tail);
        msnEnd = RingArrays.grown(msnEnd, size, head, tail);
        firstFrame = RingArrays.grown(firstFrame, size, head, tail);
        frameCount = RingArrays.grown(frameCount, size, head, tail);
        handed = RingArrays.grown(handed, size, head, tail);
        readsExpected = RingArrays.grown(readsExpected, size, head, tail);
        readsDone = RingArrays.grown(readsDone, size, head, tail);
        readStatus = RingArrays.grown(readStatus, size, head, tail);
        mask = size - 1;
    }

    boolean isEmpty() {
        return tail == head;
    }

    int slot(long seq) {
        return (int) seq & mask;
    }

    /** The local elements of the entry {@link #append} adds next: filled before it is appended. */
    SgeList nextLocal() {
        return local[slot(tail)];
    }

    /**
     * Appends an entry, whose elements {@link #nextLocal()} holds, and returns its sequence number; the caller
     * checked {@link #hasRoom()} before it filled them.
     */
    long append(int entryKind, long id, boolean isSignaled, boolean isLazy, int imm, int key, long keyOffset, int sinkKey,
            long sinkAt) {
        long seq = tail++;
        int i = slot(seq);
        kind[i] = entryKind;
        workRequestId[i] = id;
        signaled[i] = isSignaled;
        lazy[i] = isLazy;
        immediate[i] = imm;
        // Cannot overflow: postSend refuses work requests past WorkRequest.MAX_LENGTH, and a READ response is
        // one piece of a READ request's int length.
        length[i] = (int) local[i].byteSize();
        rkey[i] = key;
        remoteOffset[i] = keyOffset;
        earlyStatus[i] = -1;
        begun[i] = false;
        handed[i] = 0;
        frameCount[i] = 0;
        // Fields only one kind reads are set for that kind alone: an entry is a row of a dozen arrays, and
        // every store is a line of each touched.
        if (entryKind == WorkRequest.RDMA_READ) {
            readsExpected[i] = 0;
            readsDone[i] = 0;
            readStatus[i] = -1;
        } else if (entryKind == READ_RESPONSE) {
            sinkRkey[i] = sinkKey;
            sinkOffset[i] = sinkAt;
        }
        if (entryKind != READ_RESPONSE) {
            userEntries++;
        }
        return seq;
    }

    /**
     * Numbers entry {@code i} as it would be numbered if begun now: set before the claim, since the segmenter
     * needs them to say how many messages and frames the entry has; a claim refused numbers it again next time.
     */
    void number(int i, int msn, int receiveSequence, boolean askAcknowledge) {
        firstMsn[i] = msn;
        rsn[i] = receiveSequence;
        ackRequest[i] = askAcknowledge;
    }

    /** Entry {@code i} claimed its {@code messageCount} MSNs, up to {@code claimedEnd}, and frames from {@code frame} on. */
    void begin(int i, int messageCount, long claimedEnd, long frame, long frames) {
        messages[i] = messageCount;
        msnEnd[i] = claimedEnd;
        begun[i] = true;
        frameCount[i] = frames;
        firstFrame[i] = frame;
    }

    /** One more frame of entry {@code i} went to a subflow for the first time. */
    void handedFrame(int i) {
        handed[i]++;
    }

    /** Whether every frame of entry {@code i} went to a subflow at least once. */
    boolean isAllHanded(int i) {
        return handed[i] == frameCount[i];
    }

    /** Whether the peer acknowledged every message of entry {@code i}, with {@code acknowledged} MSNs acknowledged. */
    boolean isAcknowledged(int i, long acknowledged) {
        return msnEnd[i] <= acknowledged;
    }

    /** Whether entry {@code i} is done: begun, every frame handed, acknowledged, and a READ's responses all landed. */
    boolean isDone(int i, long acknowledged) {
        return begun[i] && isAllHanded(i) && isAcknowledged(i, acknowledged)
                && (kind[i] != WorkRequest.RDMA_READ || readsDone[i] == messages[i]);
    }

    /**
     * Whether entry {@code i} is a READ some of whose expected responses have not landed (nor been flushed): in
     * ERROR it may complete only once they have, since until then a kernel receive may still write into its sinks.
     */
    boolean awaitsResponses(int i) {
        return kind[i] == WorkRequest.RDMA_READ && readsDone[i] < readsExpected[i];
    }

    /** Whether the oldest entry is begun: work the peer owes an answer. */
    boolean isHeadBegun() {
        return !isEmpty() && begun[slot(head)];
    }

    /** The first frame of the oldest entry, or {@code nextFrame} when none is begun: where the frames in flight start. */
    long oldestFrame(long nextFrame) {
        int h = slot(head);
        return begun[h] ? firstFrame[h] : nextFrame;
    }

    /** Decides entry {@code i}'s status before it goes out, or before it is done (the peer refused it). */
    void completeEarly(int i, int status) {
        earlyStatus[i] = status;
    }

    /** READ entry {@code i} registered one more response with the assembler. */
    void readExpected(int i) {
        readsExpected[i]++;
    }

    /** A response of READ entry {@code i} landed (or was flushed) with {@code status}; the first error is kept. */
    void readLanded(int i, int status) {
        readsDone[i]++;
        if (status != WorkCompletion.SUCCESS && readStatus[i] < 0) {
            readStatus[i] = status;
        }
    }

    /** Drops the oldest entry. */
    void retireHead() {
        int i = slot(head++);
        local[i].clear();
        if (kind[i] != READ_RESPONSE) {
            userEntries--;
        }
    }
}
