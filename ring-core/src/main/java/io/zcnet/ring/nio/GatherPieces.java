package io.zcnet.ring.nio;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The pieces of one gathered send ({@code SENDMSG}): segment, offset and length of each, plus a
 * whole-segment {@link ByteBuffer} view for the pieces {@link StagedWriter} writes directly. A view is made
 * the first time a piece is written directly and kept while the same segment object comes back in the
 * same place (a sender's header, staging and payload segments do), so a steady stream of gathered sends
 * allocates nothing. Kept across reuse of its pooled {@link NioOp}, as the ring buffers' views are.
 * Owner-thread only.
 */
final class GatherPieces {
    private MemorySegment[] segments = new MemorySegment[8];
    private long[] offsets = new long[8];
    private int[] lengths = new int[8];
    private ByteBuffer[] views = new ByteBuffer[8];
    private MemorySegment[] viewSources = new MemorySegment[8];
    private int count;

    /** Empties the list and makes room for {@code pieces}. */
    void reset(int pieces) {
        if (segments.length < pieces) {
            int capacity = Math.max(pieces, 2 * segments.length);
            segments = new MemorySegment[capacity];
            offsets = new long[capacity];
            lengths = new int[capacity];
            views = new ByteBuffer[capacity];
            viewSources = new MemorySegment[capacity];
        }
        count = 0;
    }

    void add(MemorySegment segment, long offset, int length) {
        segments[count] = segment;
        offsets[count] = offset;
        lengths[count] = length;
        count++;
    }

    int count() {
        return count;
    }

    MemorySegment segment(int i) {
        return segments[i];
    }

    long offset(int i) {
        return offsets[i];
    }

    int length(int i) {
        return lengths[i];
    }

    /**
     * A view of piece {@code i} from {@code skip} bytes in to its end. A segment larger than a
     * {@link ByteBuffer} can be (2 GiB) gets a view of the piece alone, made anew each time.
     */
    ByteBuffer view(int i, int skip) {
        MemorySegment segment = segments[i];
        if (segment.byteSize() > Integer.MAX_VALUE) {
            return segment.asSlice(offsets[i] + skip, lengths[i] - skip).asByteBuffer();
        }
        ByteBuffer view = views[i];
        if (viewSources[i] != segment || view == null) {
            view = segment.asByteBuffer();
            views[i] = view;
            viewSources[i] = segment;
        }
        int start = (int) offsets[i];
        return view.limit(start + lengths[i]).position(start + skip);
    }

    /** Drops the segments of the last send; views and their sources stay for reuse. */
    void release() {
        for (int i = 0; i < count; i++) {
            segments[i] = null;
        }
        count = 0;
    }
}
