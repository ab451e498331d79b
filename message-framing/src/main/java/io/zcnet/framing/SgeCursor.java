package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * Walks the pieces of an {@link SgeList} that hold a range of its message, in order, skipping pieces of 0
 * bytes: after {@link #over} each {@link #next()} names one span, {@link #length()} bytes at
 * {@link #offset()} of {@link #segment()}, until the range is used up. How a frame's payload is gathered
 * from a work request's elements and scattered into a receive's. A reusable holder, one per walker, so
 * walking allocates nothing. Not thread-safe.
 *
 * <pre>
 *   list:   | piece 0        | piece 1 (0 B) | piece 2                  |
 *   range:          [position ........................ position + length)
 *   spans:          | span 1 |                | span 2 |
 * </pre>
 */
public final class SgeCursor {

    private SgeList list;
    private int piece;
    private long position;
    private long remaining;
    private MemorySegment segment;
    private long offset;
    private long length;

    /** A cursor over nothing yet: start a walk with {@link #over}. */
    public SgeCursor() {
    }

    /**
     * Starts a walk over bytes {@code [position, position + length)} of {@code list}'s message.
     *
     * @param list the list to walk
     * @param position the first byte of the range, in the list's message
     * @param length bytes in the range
     * @return this cursor
     * @throws IllegalArgumentException if the range lies outside the message
     */
    public SgeCursor over(SgeList list, long position, long length) {
        if (list == null) {
            throw new IllegalArgumentException("list is null");
        }
        if (position < 0 || length < 0 || position > list.byteSize() || length > list.byteSize() - position) {
            throw new IllegalArgumentException("range " + position + "+" + length + " outside the "
                    + list.byteSize() + "-byte list");
        }
        if (this.list != list) { // compared first, as the segment below
            this.list = list;
        }
        this.piece = length > 0 ? list.pieceAt(position) - 1 : list.count();
        this.position = position;
        this.remaining = length;
        return this;
    }

    /** {@return whether there is a next span}: moves to it; false when the range is used up. */
    public boolean next() {
        while (remaining > 0) {
            piece++;
            long within = position - list.start(piece);
            long n = Math.min(list.length(piece) - within, remaining);
            if (n > 0) {
                MemorySegment next = list.segment(piece);
                if (segment != next) { // a reference stored into a long-lived holder pays a GC barrier
                    segment = next;
                }
                offset = list.offset(piece) + within;
                length = n;
                position += n;
                remaining -= n;
                return true;
            }
        }
        return false;
    }

    /** {@return the piece the current span lies in} */
    public int piece() {
        return piece;
    }

    /** {@return the memory of the current span (null if its piece is not resolved)} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return where the current span starts in {@link #segment()}} */
    public long offset() {
        return offset;
    }

    /** {@return the bytes of the current span}, at least 1. */
    public long length() {
        return length;
    }
}
