package io.zcnet.ring.nio;

import java.util.Arrays;

/**
 * The NIO engine's CQ: completions ({@code user_data}, result, flags, as in an {@code io_uring_cqe})
 * appended in the order they happen and dispatched in that order at the end of each poll. Three
 * parallel arrays that grow when a burst needs it, so steady traffic allocates nothing. Owner-thread only.
 */
final class CompletionQueue {
    private long[] userData;
    private int[] result;
    private int[] flags;
    private int count;
    private int dispatched;

    CompletionQueue(int capacity) {
        userData = new long[capacity];
        result = new int[capacity];
        flags = new int[capacity];
    }

    /** Appends one completion and returns its index. */
    int post(long userData, int result, int flags) {
        if (count == this.userData.length) {
            int capacity = count * 2;
            this.userData = Arrays.copyOf(this.userData, capacity);
            this.result = Arrays.copyOf(this.result, capacity);
            this.flags = Arrays.copyOf(this.flags, capacity);
        }
        int index = count++;
        this.userData[index] = userData;
        this.result[index] = result;
        this.flags[index] = flags;
        return index;
    }

    /** Adds flag bits to completion {@code index}, posted and not yet dispatched. */
    void addFlags(int index, int bits) {
        flags[index] |= bits;
    }

    /** Completions posted and not yet dispatched. */
    int undispatched() {
        return count - dispatched;
    }

    /** Index of the next completion to dispatch, counting it dispatched; only while {@link #undispatched()} > 0. */
    int next() {
        return dispatched++;
    }

    long userData(int index) {
        return userData[index];
    }

    int result(int index) {
        return result[index];
    }

    int flags(int index) {
        return flags[index];
    }

    /** Forgets every dispatched completion: the next one posted goes to index 0. */
    void clear() {
        count = 0;
        dispatched = 0;
    }
}
