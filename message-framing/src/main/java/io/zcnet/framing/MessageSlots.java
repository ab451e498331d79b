package io.zcnet.framing;

/**
 * The state of every message in a receive window, one slot per message ({@code slot = msn & (window - 1)}),
 * as parallel arrays so that judging a frame touches no object per message and allocates nothing. A slot is
 * laid out here once and made empty in one place ({@link #reset}), when its message retires.
 *
 * <p>Per message: its family ({@link #kinds}, 0 = nothing seen yet), whether it consumes a posted receive
 * ({@link #consumers}: unknown until a frame says so; a WRITE says only in its last frame), segments placed
 * and expected, and two segment bitmaps of {@code wordsPerMessage} longs each: {@code placed}, and
 * {@code reserved} by a direct placement whose payload the kernel is still receiving. The rest is what the
 * message's frames said (total length, immediate, final opcode, the receive it holds, READ fields).
 *
 * <p>Owned by one {@link MessageAssembler}; not thread-safe.
 */
final class MessageSlots {
    static final byte CONSUMER_UNKNOWN = 0;
    static final byte CONSUMER_YES = 1;
    static final byte CONSUMER_NO = 2;

    final int wordsPerMessage;
    final byte[] kinds;
    final byte[] consumers;
    final boolean[] complete;
    final int[] segmentsPlaced;
    final int[] segmentsExpected;
    /** Highest segment placed or reserved: a LAST frame below it contradicts the message. */
    final int[] highestSegment;
    /** Direct placements in flight into the slot's message; it cannot complete while any is. */
    final int[] reservations;
    final int[] totalLengths;
    final int[] immediates;
    final int[] finalOpcodes;
    final long[] receiveIndexes;
    final int[] readRkeys;
    final long[] readOffsets;
    final int[] readLengths;
    final int[] readSinkRkeys;
    final long[] readSinkOffsets;
    /** The receive index a message would take, noted when the receive cursor passed it. */
    final long[] passedIndex;
    private final long[] placed;
    private final long[] reserved;

    MessageSlots(int window, int wordsPerMessage) {
        this.wordsPerMessage = wordsPerMessage;
        kinds = new byte[window];
        consumers = new byte[window];
        complete = new boolean[window];
        segmentsPlaced = new int[window];
        segmentsExpected = new int[window];
        highestSegment = new int[window];
        reservations = new int[window];
        totalLengths = new int[window];
        immediates = new int[window];
        finalOpcodes = new int[window];
        receiveIndexes = new long[window];
        readRkeys = new int[window];
        readOffsets = new long[window];
        readLengths = new int[window];
        readSinkRkeys = new int[window];
        readSinkOffsets = new long[window];
        passedIndex = new long[window];
        placed = new long[window * wordsPerMessage];
        reserved = new long[window * wordsPerMessage];
        for (int slot = 0; slot < window; slot++) {
            reset(slot);
        }
    }

    boolean isPlaced(int slot, int segment) {
        return (placed[slot * wordsPerMessage + (segment >>> 6)] & (1L << segment)) != 0;
    }

    boolean isReserved(int slot, int segment) {
        return (reserved[slot * wordsPerMessage + (segment >>> 6)] & (1L << segment)) != 0;
    }

    /** A direct placement of {@code segment} begins: the kernel will receive its payload. */
    void reserve(int slot, int segment) {
        reserved[slot * wordsPerMessage + (segment >>> 6)] |= 1L << segment;
        reservations[slot]++;
        seen(slot, segment);
    }

    /** That placement was committed or aborted. */
    void unreserve(int slot, int segment) {
        reserved[slot * wordsPerMessage + (segment >>> 6)] &= ~(1L << segment);
        reservations[slot]--;
    }

    /** {@code segment}'s payload is in place. */
    void place(int slot, int segment) {
        placed[slot * wordsPerMessage + (segment >>> 6)] |= 1L << segment;
        segmentsPlaced[slot]++;
        seen(slot, segment);
    }

    private void seen(int slot, int segment) {
        if (segment > highestSegment[slot]) {
            highestSegment[slot] = segment;
        }
    }

    /** Empties a slot for the message a window later. */
    void reset(int slot) {
        // Bits set lie at or below the highest segment placed or reserved (and below segmentsExpected).
        int segments = Math.max(segmentsExpected[slot], highestSegment[slot] + 1);
        int words = segments > 0 ? Math.min((segments + 63) >>> 6, wordsPerMessage) : wordsPerMessage;
        int base = slot * wordsPerMessage;
        for (int w = 0; w < words; w++) {
            placed[base + w] = 0;
            reserved[base + w] = 0;
        }
        reservations[slot] = 0;
        kinds[slot] = 0;
        consumers[slot] = CONSUMER_UNKNOWN;
        complete[slot] = false;
        segmentsPlaced[slot] = 0;
        segmentsExpected[slot] = -1;
        highestSegment[slot] = -1;
        totalLengths[slot] = -1;
        immediates[slot] = 0;
        finalOpcodes[slot] = -1;
        receiveIndexes[slot] = -1;
        readRkeys[slot] = 0;
        readSinkOffsets[slot] = 0;
    }
}
