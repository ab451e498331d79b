package io.zcnet.ring.nio;

import java.util.Arrays;

/**
 * A binary min-heap of deadlines ({@link System#nanoTime()} values) keyed by small non-negative ids,
 * kept in parallel arrays so that adding, removing and polling a timer allocates nothing once the arrays
 * have grown to the number of live timers.
 *
 * <p>Each id is in the heap at most once; {@code position[id]} remembers where, so a timer can be
 * removed in O(log n) when its operation completes or is cancelled before it fires. Deadlines are
 * compared by subtraction ({@code a - b < 0}), as {@code System.nanoTime} requires, so they may wrap.
 * Equal deadlines come out in no particular order.
 *
 * <p>Not thread-safe: used by one event loop's owner thread.
 */
final class TimerHeap {
    private static final int ABSENT = -1;

    private long[] deadlines;
    private int[] ids;
    private int[] position;
    private int size;

    TimerHeap(int initialCapacity) {
        if (initialCapacity < 1) {
            throw new IllegalArgumentException("initialCapacity must be >= 1, got " + initialCapacity);
        }
        deadlines = new long[initialCapacity];
        ids = new int[initialCapacity];
        position = new int[initialCapacity];
        Arrays.fill(position, ABSENT);
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    boolean contains(int id) {
        return id >= 0 && id < position.length && position[id] != ABSENT;
    }

    /** Adds a timer; {@code id} must not be in the heap already. */
    void add(int id, long deadline) {
        if (id < 0) {
            throw new IllegalArgumentException("timer id must be >= 0, got " + id);
        }
        if (id >= position.length) {
            int old = position.length;
            position = Arrays.copyOf(position, Math.max(old * 2, id + 1));
            Arrays.fill(position, old, position.length, ABSENT);
        }
        if (position[id] != ABSENT) {
            throw new IllegalStateException("timer " + id + " is already scheduled");
        }
        if (size == ids.length) {
            ids = Arrays.copyOf(ids, size * 2);
            deadlines = Arrays.copyOf(deadlines, size * 2);
        }
        place(size, id, deadline);
        siftUp(size++);
    }

    /** The earliest deadline; only when not {@link #isEmpty()}. */
    long peekDeadline() {
        return deadlines[0];
    }

    /** Removes the timer with the earliest deadline and returns its id; only when not {@link #isEmpty()}. */
    int poll() {
        int id = ids[0];
        removeAt(0);
        return id;
    }

    /** Removes timer {@code id} if it is scheduled; returns whether it was. */
    boolean remove(int id) {
        if (!contains(id)) {
            return false;
        }
        removeAt(position[id]);
        return true;
    }

    private void removeAt(int index) {
        position[ids[index]] = ABSENT;
        int last = --size;
        if (index == last) {
            return;
        }
        place(index, ids[last], deadlines[last]);
        // The moved entry may belong above or below its new place; at most one of these moves it.
        siftDown(index);
        siftUp(index);
    }

    private void siftUp(int index) {
        int id = ids[index];
        long deadline = deadlines[index];
        while (index > 0) {
            int parent = (index - 1) >>> 1;
            if (deadlines[parent] - deadline <= 0) {
                break;
            }
            place(index, ids[parent], deadlines[parent]);
            index = parent;
        }
        place(index, id, deadline);
    }

    private void siftDown(int index) {
        int id = ids[index];
        long deadline = deadlines[index];
        int half = size >>> 1;
        while (index < half) {
            int child = 2 * index + 1;
            int right = child + 1;
            if (right < size && deadlines[right] - deadlines[child] < 0) {
                child = right;
            }
            if (deadline - deadlines[child] <= 0) {
                break;
            }
            place(index, ids[child], deadlines[child]);
            index = child;
        }
        place(index, id, deadline);
    }

    private void place(int index, int id, long deadline) {
        ids[index] = id;
        deadlines[index] = deadline;
        position[id] = index;
    }

    @Override
    public String toString() {
        return "TimerHeap[size=" + size + (size > 0 ? ", next=" + deadlines[0] : "") + "]";
    }
}
