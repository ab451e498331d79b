package io.zcnet.framing;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * What the receive side knows about each message of its window: one fixed-size slot per message, at
 * {@code msn & (window - 1)}, and two segment bitmaps per message (placed, and reserved by a direct
 * placement still receiving its payload). A slot is laid out once, below, and reset in one place
 * ({@link #retireOldest}), so a message never inherits anything from the one that used its slot before.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     kind      |   complete    |               0               |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        segments_placed                        |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       segments_expected                       |  8
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        highest_segment                        | 12
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         reservations                          | 16
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         total_length                          | 20
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           immediate                           | 24
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         final_opcode                          | 28
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           read_rkey                           | 32
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          read_length                          | 36
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        read_sink_rkey                         | 40
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        receive_frames                         | 44
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       receive (64 bits)                       | 48
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     read_offset (64 bits)                     | 56
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   read_sink_offset (64 bits)                  | 64
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *
 *   kind              message family (Opcode.KIND_SEND, _WRITE, _READ_REQUEST, _READ_RESPONSE); 0: no frame placed yet
 *   complete          1 once every segment is placed and no placement into it is in flight
 *   segments_expected set by the LAST frame, -1 before; total_length, final_opcode, immediate likewise
 *   highest_segment   highest segment placed or reserved, -1 if none: a LAST frame below it contradicts it
 *   receive_frames    frames naming the message's receive by their RSN that are placed or being received
 *   receive           the posted receive (absolute index) the message holds while receive_frames &gt; 0, else -1;
 *                     a message that completes holding none consumes none (a WRITE without immediate)
 *   read_*            READ REQUEST: source rkey, offset, length and sink rkey, offset;
 *                     READ RESPONSE: sink rkey, and in read_sink_offset the sink offset of message byte 0
 * </pre>
 *
 * <p>The slots live in one native segment (slot-major, so one message's state shares cache lines) and are
 * addressed by slot index, so several slots may be worked on at once. The window start (the oldest
 * incomplete MSN) is kept here too, and the inverse of {@code receive}: which message holds a given posted
 * receive ({@link #holderOf}), one array entry per receive, so checking that two messages never name the
 * same receive is constant work. Not thread-safe: owned by one {@link MessageAssembler}.
 */
final class MessageSlots {

    static final StructLayout SLOT = MemoryLayout.structLayout(
            ValueLayout.JAVA_BYTE.withName("kind"),
            ValueLayout.JAVA_BYTE.withName("complete"),
            MemoryLayout.paddingLayout(2),
            ValueLayout.JAVA_INT.withName("segments_placed"),
            ValueLayout.JAVA_INT.withName("segments_expected"),
            ValueLayout.JAVA_INT.withName("highest_segment"),
            ValueLayout.JAVA_INT.withName("reservations"),
            ValueLayout.JAVA_INT.withName("total_length"),
            ValueLayout.JAVA_INT.withName("immediate"),
            ValueLayout.JAVA_INT.withName("final_opcode"),
            ValueLayout.JAVA_INT.withName("read_rkey"),
            ValueLayout.JAVA_INT.withName("read_length"),
            ValueLayout.JAVA_INT.withName("read_sink_rkey"),
            ValueLayout.JAVA_INT.withName("receive_frames"),
            ValueLayout.JAVA_LONG.withName("receive"),
            ValueLayout.JAVA_LONG.withName("read_offset"),
            ValueLayout.JAVA_LONG.withName("read_sink_offset"));

    static final long SIZE = SLOT.byteSize();
    static final long KIND = offset("kind");
    static final long COMPLETE = offset("complete");
    static final long SEGMENTS_PLACED = offset("segments_placed");
    static final long SEGMENTS_EXPECTED = offset("segments_expected");
    static final long HIGHEST_SEGMENT = offset("highest_segment");
    static final long RESERVATIONS = offset("reservations");
    static final long TOTAL_LENGTH = offset("total_length");
    static final long IMMEDIATE = offset("immediate");
    static final long FINAL_OPCODE = offset("final_opcode");
    static final long READ_RKEY = offset("read_rkey");
    static final long READ_LENGTH = offset("read_length");
    static final long READ_SINK_RKEY = offset("read_sink_rkey");
    static final long RECEIVE_FRAMES = offset("receive_frames");
    static final long RECEIVE = offset("receive");
    static final long READ_OFFSET = offset("read_offset");
    static final long READ_SINK_OFFSET = offset("read_sink_offset");

    /** A slot as it is before any frame of its message: what {@link #retireOldest} copies over a slot. */
    private static final MemorySegment BLANK = blankSlot();

    private final int window;
    private final int mask;
    /** Bitmap words a message may need: its most segments over 64. */
    private final int wordsPerMessage;
    /**
     * Bitmap words each message has now: one (64 segments, 4 MiB at the default segment size) until a frame of a
     * later segment arrives, then doubled up to {@link #wordsPerMessage}, so a queue pair of small messages keeps a
     * word a message, not the longest message's four.
     */
    private int words;
    private final MemorySegment slots;
    private long[] placed;
    private long[] reserved;
    /** The MSN that last took each receive (by absolute index mod the receive capacity), -1 at first. */
    private final int[] holders;
    private final int receiveMask;

    private int oldestMsn;

    MessageSlots(int window, int segmentSize, int receiveCapacity) {
        this.window = window;
        this.mask = window - 1;
        this.wordsPerMessage = FramingConfig.bitmapWordsPerMessage(segmentSize);
        // Native, not a heap segment: the accessors' VarHandle code is shared with every native access on
        // the receive path, and a second segment class there makes those call sites polymorphic.
        this.slots = Arena.ofAuto().allocate(window * SIZE, Long.BYTES);
        this.words = 1;
        this.placed = new long[window];
        this.reserved = new long[window];
        this.holders = new int[receiveCapacity];
        this.receiveMask = receiveCapacity - 1;
        Arrays.fill(holders, -1);
        for (int slot = 0; slot < window; slot++) {
            MemorySegment.copy(BLANK, 0, slots, slot * SIZE, SIZE);
        }
    }

    private static long offset(String field) {
        return SLOT.byteOffset(groupElement(field));
    }

    private static MemorySegment blankSlot() {
        MemorySegment blank = Arena.global().allocate(SIZE, Long.BYTES);
        blank.set(ValueLayout.JAVA_INT, SEGMENTS_EXPECTED, -1);
        blank.set(ValueLayout.JAVA_INT, HIGHEST_SEGMENT, -1);
        blank.set(ValueLayout.JAVA_INT, TOTAL_LENGTH, -1);
        blank.set(ValueLayout.JAVA_INT, FINAL_OPCODE, -1);
        blank.set(ValueLayout.JAVA_LONG, RECEIVE, -1);
        return blank;
    }

    // ---------------------------------------------------------------- the window

    /** The oldest MSN not yet completed: the window start. */
    int oldestMsn() {
        return oldestMsn;
    }

    /** How far {@code msn} is ahead of the window start, 0 .. 65535. */
    int ahead(int msn) {
        return Msn.distance(oldestMsn, msn);
    }

    int slot(int msn) {
        return msn & mask;
    }

    /** The MSN of the in-window message held by {@code slot}. */
    int msn(int slot) {
        return Msn.add(oldestMsn, (slot - oldestMsn) & mask);
    }

    /** The slot of the window start. */
    int oldestSlot() {
        return oldestMsn & mask;
    }

    /** Frees the oldest slot for the message a window later and moves the window start past it. */
    void retireOldest() {
        int slot = oldestSlot();
        // Bits set lie at or below the highest segment placed or reserved (and below segments_expected).
        int segments = Math.max(segmentsExpected(slot), highestSegment(slot) + 1);
        int used = segments > 0 ? Math.min((segments + 63) >>> 6, words) : words;
        int base = slot * words;
        for (int w = 0; w < used; w++) {
            placed[base + w] = 0;
            reserved[base + w] = 0;
        }
        MemorySegment.copy(BLANK, 0, slots, slot * SIZE, SIZE);
        oldestMsn = Msn.add(oldestMsn, 1);
    }

    /**
     * Whether no frame of the message in {@code slot} was placed or has been received by a direct placement: the
     * slot is as {@link #retireOldest} left it (both raise the highest segment, which nothing lowers).
     */
    boolean isUntouched(int slot) {
        return highestSegment(slot) < 0;
    }

    /** Moves the window start past the oldest message, which completed without touching its slot ({@link #isUntouched}). */
    void passOldest() {
        oldestMsn = Msn.add(oldestMsn, 1);
    }

    // ---------------------------------------------------------------- kinds and receives

    /** SEND, SEND with immediate and WRITE with immediate share the message families SEND and WRITE. */
    static int family(int opcode) {
        return switch (Opcode.kind(opcode)) {
            case Opcode.KIND_SEND_WITH_IMMEDIATE -> Opcode.KIND_SEND;
            case Opcode.KIND_WRITE_WITH_IMMEDIATE -> Opcode.KIND_WRITE;
            default -> Opcode.kind(opcode);
        };
    }

    /**
     * Counts one more frame of the message in {@code slot} that names {@code receive} (placed, or being
     * received by a direct placement); the first one makes the message the receive's holder. The caller has
     * checked that no other message holds it and that this message holds no other.
     */
    void holdReceive(int slot, long receive) {
        int frames = receiveFrames(slot);
        if (frames == 0) {
            receive(slot, receive);
            holders[(int) receive & receiveMask] = msn(slot);
        }
        setInt(slot, RECEIVE_FRAMES, frames + 1);
    }

    /**
     * One frame naming the message's receive fewer: a direct placement of one ended. With none left, placed or
     * in flight, the message lets the receive go: a placement given up after a corrupted header took it must
     * not keep the receive from the message it belongs to.
     */
    void releaseReceive(int slot) {
        int frames = receiveFrames(slot) - 1;
        setInt(slot, RECEIVE_FRAMES, frames);
        if (frames == 0) {
            receive(slot, -1);
        }
    }

    /**
     * The MSN of the in-window message holding {@code receive} (absolute index), or -1. An entry of the inverse
     * map is trusted only while the message it names still holds that receive, so nothing needs clearing when a
     * message lets go or retires.
     */
    int holderOf(long receive) {
        if (receive < 0) {
            return -1;
        }
        int msn = holders[(int) receive & receiveMask];
        return msn >= 0 && ahead(msn) < window && receive(slot(msn)) == receive ? msn : -1;
    }

    // ---------------------------------------------------------------- segments

    boolean isPlaced(int slot, int segment) {
        return segment >>> 6 < words && (placed[word(slot, segment)] & (1L << segment)) != 0;
    }

    boolean isReserved(int slot, int segment) {
        return segment >>> 6 < words && (reserved[word(slot, segment)] & (1L << segment)) != 0;
    }

    /** Counts {@code segment} as placed. */
    void place(int slot, int segment) {
        ensureWords(segment);
        placed[word(slot, segment)] |= 1L << segment;
        setInt(slot, SEGMENTS_PLACED, segmentsPlaced(slot) + 1);
        raiseHighestSegment(slot, segment);
    }

    /** Marks {@code segment} as being received by a direct placement: its message cannot complete meanwhile. */
    void reserve(int slot, int segment) {
        ensureWords(segment);
        reserved[word(slot, segment)] |= 1L << segment;
        setInt(slot, RESERVATIONS, reservations(slot) + 1);
        raiseHighestSegment(slot, segment);
    }

    void unreserve(int slot, int segment) {
        reserved[word(slot, segment)] &= ~(1L << segment);
        setInt(slot, RESERVATIONS, reservations(slot) - 1);
    }

    private void raiseHighestSegment(int slot, int segment) {
        if (segment > highestSegment(slot)) {
            setInt(slot, HIGHEST_SEGMENT, segment);
        }
    }

    private int word(int slot, int segment) {
        return slot * words + (segment >>> 6);
    }

    /** Gives every message's bitmaps room for {@code segment}, each slot's words moving to its new place. */
    private void ensureWords(int segment) {
        int need = (segment >>> 6) + 1;
        if (need <= words) {
            return;
        }
        if (need > wordsPerMessage) {
            throw new IllegalArgumentException("segment " + segment + " is past a message's " + wordsPerMessage * 64);
        }
        int grown = Math.min(wordsPerMessage, Math.max(need, words * 2));
        long[] p = new long[window * grown];
        long[] r = new long[window * grown];
        for (int slot = 0; slot < window; slot++) {
            System.arraycopy(placed, slot * words, p, slot * grown, words);
            System.arraycopy(reserved, slot * words, r, slot * grown, words);
        }
        placed = p;
        reserved = r;
        words = grown;
    }

    /** Records the LAST frame: how many segments and bytes the message has, and how it completes. */
    void last(int slot, int segments, int totalLength, int opcode, int immediate) {
        setInt(slot, SEGMENTS_EXPECTED, segments);
        setInt(slot, TOTAL_LENGTH, totalLength);
        setInt(slot, FINAL_OPCODE, opcode);
        setInt(slot, IMMEDIATE, immediate);
    }

    // ---------------------------------------------------------------- fields

    byte kind(int slot) {
        return slots.get(ValueLayout.JAVA_BYTE, slot * SIZE + KIND);
    }

    /** Records the message's family ({@link #family}), which every frame of it agrees on. */
    void kind(int slot, int family) {
        slots.set(ValueLayout.JAVA_BYTE, slot * SIZE + KIND, (byte) family);
    }

    boolean isComplete(int slot) {
        return slots.get(ValueLayout.JAVA_BYTE, slot * SIZE + COMPLETE) != 0;
    }

    void markComplete(int slot) {
        slots.set(ValueLayout.JAVA_BYTE, slot * SIZE + COMPLETE, (byte) 1);
    }

    int segmentsPlaced(int slot) {
        return getInt(slot, SEGMENTS_PLACED);
    }

    int segmentsExpected(int slot) {
        return getInt(slot, SEGMENTS_EXPECTED);
    }

    int highestSegment(int slot) {
        return getInt(slot, HIGHEST_SEGMENT);
    }

    int reservations(int slot) {
        return getInt(slot, RESERVATIONS);
    }

    int totalLength(int slot) {
        return getInt(slot, TOTAL_LENGTH);
    }

    int immediate(int slot) {
        return getInt(slot, IMMEDIATE);
    }

    int finalOpcode(int slot) {
        return getInt(slot, FINAL_OPCODE);
    }

    long receive(int slot) {
        return slots.get(ValueLayout.JAVA_LONG, slot * SIZE + RECEIVE);
    }

    private void receive(int slot, long receive) {
        slots.set(ValueLayout.JAVA_LONG, slot * SIZE + RECEIVE, receive);
    }

    int receiveFrames(int slot) {
        return getInt(slot, RECEIVE_FRAMES);
    }

    int readRkey(int slot) {
        return getInt(slot, READ_RKEY);
    }

    long readOffset(int slot) {
        return slots.get(ValueLayout.JAVA_LONG, slot * SIZE + READ_OFFSET);
    }

    int readLength(int slot) {
        return getInt(slot, READ_LENGTH);
    }

    int readSinkRkey(int slot) {
        return getInt(slot, READ_SINK_RKEY);
    }

    long readSinkOffset(int slot) {
        return slots.get(ValueLayout.JAVA_LONG, slot * SIZE + READ_SINK_OFFSET);
    }

    /** READ RESPONSE: the sink key and the sink offset of the message's first byte. */
    void readSink(int slot, int sinkRkey, long sinkStart) {
        setInt(slot, READ_RKEY, sinkRkey);
        slots.set(ValueLayout.JAVA_LONG, slot * SIZE + READ_SINK_OFFSET, sinkStart);
    }

    /** READ REQUEST: what to read and where the response goes. */
    void readRequest(int slot, int rkey, long offset, int length, int sinkRkey, long sinkOffset) {
        setInt(slot, READ_RKEY, rkey);
        slots.set(ValueLayout.JAVA_LONG, slot * SIZE + READ_OFFSET, offset);
        setInt(slot, READ_LENGTH, length);
        setInt(slot, READ_SINK_RKEY, sinkRkey);
        slots.set(ValueLayout.JAVA_LONG, slot * SIZE + READ_SINK_OFFSET, sinkOffset);
    }

    private int getInt(int slot, long field) {
        return slots.get(ValueLayout.JAVA_INT, slot * SIZE + field);
    }

    private void setInt(int slot, long field, int value) {
        slots.set(ValueLayout.JAVA_INT, slot * SIZE + field, value);
    }
}
