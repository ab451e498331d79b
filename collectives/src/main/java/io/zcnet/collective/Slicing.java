package io.zcnet.collective;

/**
 * How a ring cuts N blocks into messages: every block is walked in loops, and each loop sends {@code pieces}
 * slices of the block per step, each at most a slot. All blocks use the same geometry (from the largest
 * one), so every rank sends the same number of messages per step; the slices of a short block are shorter,
 * or empty. A loop's slices in flight at once per link ({@code pieces}) are at most the links' slots, below
 * twice them, which is what keeps the ring free of deadlock ({@link Ring}).
 *
 * <p>Slices are at least {@value #MIN_SLICE_BYTES} bytes where the block allows, so a small operation is one
 * message per step rather than many tiny ones. Mutable, reused by one thread for one operation at a time.
 */
final class Slicing {
    /** Below this, more messages per step cost more in headers and wake-ups than the overlap gains. */
    static final int MIN_SLICE_BYTES = 32 * 1024;

    /** Block starts in elements, {@code starts[b]} to {@code starts[b + 1]}. */
    final long[] starts;
    long sliceElements;
    int pieces;
    long loops;

    Slicing(int size) {
        this.starts = new long[size + 1];
    }

    /** Blocks as even as the count allows: sizes differ by at most one element. */
    void even(long count) {
        int n = starts.length - 1;
        for (int b = 0; b <= n; b++) {
            starts[b] = count * b / n;
        }
    }

    /** Blocks of {@code counts[b]} elements, one after another. */
    void counted(long[] counts) {
        starts[0] = 0;
        for (int b = 0; b < counts.length; b++) {
            starts[b + 1] = starts[b] + counts[b];
        }
    }

    /** Blocks of {@code count} elements each. */
    void uniform(long count) {
        for (int b = 0; b < starts.length; b++) {
            starts[b] = count * b;
        }
    }

    /**
     * Picks the geometry for elements of {@code elementBytes} through links of at least {@code depth} slots of
     * {@code slotBytes}: slices as large as spreading the largest block over {@code slots} slots makes them
     * (at least {@link #MIN_SLICE_BYTES}, at most a slot), and as many of them per loop as the block has, up to
     * {@code depth}. A block that fills {@code slots} slots is cut exactly as with links of {@code slots}; only a
     * larger one has more slices in flight, as deep as its links are.
     */
    void plan(int elementBytes, int slots, int depth, int slotBytes) {
        long largest = 0;
        for (int b = 0; b + 1 < starts.length; b++) {
            largest = Math.max(largest, starts[b + 1] - starts[b]);
        }
        long perSlot = slotBytes / elementBytes;
        long smallest = Math.max(1, MIN_SLICE_BYTES / elementBytes);
        sliceElements = Math.min(perSlot, Math.max(ceilDiv(largest, slots), smallest));
        pieces = (int) Math.max(1, Math.min(depth, ceilDiv(largest, sliceElements)));
        loops = Math.max(1, ceilDiv(largest, pieces * sliceElements));
    }

    /** First element of slice {@code piece} of block {@code block} in loop {@code loop}. */
    long first(int block, long loop, int piece) {
        return Math.min(starts[block + 1], starts[block] + (loop * pieces + piece) * sliceElements);
    }

    /** Elements of that slice (0 past the block's end). */
    int length(int block, long loop, int piece) {
        long first = first(block, loop, piece);
        return (int) Math.min(sliceElements, starts[block + 1] - first);
    }

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
