package io.zcnet.framing;

import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.MemorySegment;

/**
 * A scatter/gather list: one message laid over up to {@link #capacity()} pieces of memory, in order, as the
 * {@code sg_list}/{@code num_sge} of ibv_post_send(3) and ibv_post_recv(3) lay it. Byte {@code position} of
 * the message is in the piece whose range {@code [start(i), start(i) + length(i))} holds it; pieces of 0
 * bytes are allowed and hold none.
 *
 * <p>A piece is named either the way verbs name a {@code struct ibv_sge}, by a key, an offset in that key's
 * region and a length ({@link #add(int, long, long)}), and then {@linkplain #resolve resolved} against a
 * {@link MemoryRegistry} to the region and its memory; or given as memory directly
 * ({@link #add(MemorySegment, long, long)}: a READ response's source, a test's buffer).
 *
 * <p>A reusable holder: filled with {@link #clear()} and {@code add}, it allocates nothing after
 * construction. {@link SgeCursor} walks the pieces holding a range of the message. Not thread-safe.
 */
public final class SgeList {

    private final int[] keys;
    private final long[] offsets;
    private final long[] lengths;
    /** Where each piece starts in the message: the lengths of the pieces before it. */
    private final long[] starts;
    private final boolean[] named;
    private final MemoryRegion[] regions;
    private final MemorySegment[] segments;
    private int count;
    private long byteSize;
    private int refused = -1;

    /** @param capacity pieces at most, at least 1 */
    public SgeList(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        keys = new int[capacity];
        offsets = new long[capacity];
        lengths = new long[capacity];
        starts = new long[capacity];
        named = new boolean[capacity];
        regions = new MemoryRegion[capacity];
        segments = new MemorySegment[capacity];
    }

    /** Empties the list; it keeps no memory or region reachable. */
    public SgeList clear() {
        for (int i = 0; i < count; i++) {
            regions[i] = null;
            segments[i] = null;
        }
        count = 0;
        byteSize = 0;
        refused = -1;
        return this;
    }

    /**
     * Appends {@code length} bytes at {@code offset} of the region whose key is {@code key}, to be
     * {@linkplain #resolve resolved}.
     *
     * @throws IllegalArgumentException if the list is full or the range is negative
     */
    public SgeList add(int key, long offset, long length) {
        int i = append(offset, length);
        keys[i] = key;
        named[i] = true;
        return this;
    }

    /**
     * Appends {@code length} bytes at {@code offset} of {@code segment}, already memory: nothing to resolve.
     *
     * @throws IllegalArgumentException if the list is full, or the range is negative or outside the segment
     */
    public SgeList add(MemorySegment segment, long offset, long length) {
        if (segment == null) {
            throw new IllegalArgumentException("segment is null");
        }
        if (offset < 0 || length < 0 || offset > segment.byteSize() || length > segment.byteSize() - offset) {
            throw new IllegalArgumentException("range " + offset + "+" + length + " outside the "
                    + segment.byteSize() + "-byte segment");
        }
        int i = append(offset, length);
        keys[i] = 0;
        named[i] = false;
        segments[i] = segment;
        return this;
    }

    private int append(long offset, long length) {
        if (count == keys.length) {
            throw new IllegalArgumentException("scatter/gather list is full (" + keys.length + " elements)");
        }
        if (offset < 0 || length < 0 || length > Long.MAX_VALUE - byteSize) {
            throw new IllegalArgumentException("element " + offset + "+" + length + " refused: "
                    + AccessStatus.name(AccessStatus.OUT_OF_BOUNDS) + " (negative, or the list passes 2^63 bytes)");
        }
        int i = count++;
        offsets[i] = offset;
        lengths[i] = length;
        starts[i] = byteSize;
        byteSize += length;
        return i;
    }

    /** Replaces this list's pieces with copies of {@code other}'s, resolved or not. */
    public SgeList copyFrom(SgeList other) {
        if (other.count > keys.length) {
            throw new IllegalArgumentException(other.count + " elements do not fit a list of " + keys.length);
        }
        clear();
        System.arraycopy(other.keys, 0, keys, 0, other.count);
        System.arraycopy(other.offsets, 0, offsets, 0, other.count);
        System.arraycopy(other.lengths, 0, lengths, 0, other.count);
        System.arraycopy(other.starts, 0, starts, 0, other.count);
        System.arraycopy(other.named, 0, named, 0, other.count);
        System.arraycopy(other.regions, 0, regions, 0, other.count);
        System.arraycopy(other.segments, 0, segments, 0, other.count);
        count = other.count;
        byteSize = other.byteSize;
        return this;
    }

    /**
     * Checks every piece named by key against {@code registry} ({@link MemoryRegistry#checkLocal}: key,
     * liveness, {@code access}, bounds), as verbs checks each element of a work request, and resolves it to
     * its region and memory. Pieces given as memory are left as they are.
     *
     * @return {@link AccessStatus#OK}, or the status of the first piece refused ({@link #refused()})
     */
    public int resolve(MemoryRegistry registry, int access) {
        refused = -1;
        for (int i = 0; i < count; i++) {
            if (!named[i]) {
                continue;
            }
            int status = registry.checkLocal(keys[i], offsets[i], lengths[i], access);
            MemoryRegion region = status == AccessStatus.OK ? registry.lookupLocal(keys[i]) : null;
            if (region == null) {
                refused = i;
                return status == AccessStatus.OK ? AccessStatus.DEREGISTERED : status;
            }
            regions[i] = region;
            segments[i] = region.segment();
        }
        return AccessStatus.OK;
    }

    /** The piece the last {@link #resolve} refused, or -1. */
    public int refused() {
        return refused;
    }

    /**
     * Renames every resolved piece by its region's remote key: the name a READ's sink goes by on the wire
     * ({@link Segmenter#beginReadRequest(int, int, long, SgeList)}).
     */
    public SgeList nameByRemoteKeys() {
        for (int i = 0; i < count; i++) {
            if (regions[i] != null) {
                keys[i] = regions[i].remoteKey();
            }
        }
        return this;
    }

    /**
     * The piece that holds byte {@code position} of the message: the last one starting at or before it
     * (a piece of 0 bytes always has a later one starting where it does, or starts at {@link #byteSize()}).
     *
     * @throws IndexOutOfBoundsException unless {@code 0 <= position < byteSize()}
     */
    public int pieceAt(long position) {
        if (position < 0 || position >= byteSize) {
            throw new IndexOutOfBoundsException("position " + position + " outside the " + byteSize + "-byte list");
        }
        int low = 0;
        int high = count - 1;
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (starts[mid] <= position) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    /**
     * Pieces of at least one byte that bytes {@code [position, position + length)} of the message touch: the
     * spans an {@link SgeCursor} walks there.
     *
     * @throws IndexOutOfBoundsException if the range lies outside the message
     */
    public int spans(long position, long length) {
        if (length == 0) {
            return 0;
        }
        if (length < 0 || length > byteSize - position) {
            throw new IndexOutOfBoundsException("range " + position + "+" + length + " outside the " + byteSize + "-byte list");
        }
        int n = 0;
        for (int i = pieceAt(position), last = pieceAt(position + length - 1); i <= last; i++) {
            if (lengths[i] > 0) {
                n++;
            }
        }
        return n;
    }

    /** Pieces in the list. */
    public int count() {
        return count;
    }

    /** Pieces the list can hold. */
    public int capacity() {
        return keys.length;
    }

    /** Bytes of all pieces together: the message's length. */
    public long byteSize() {
        return byteSize;
    }

    /** The key piece {@code i} was named by (0 for memory given directly). */
    public int key(int i) {
        return keys[check(i)];
    }

    /** Where piece {@code i} starts in its region or segment. */
    public long offset(int i) {
        return offsets[check(i)];
    }

    public long length(int i) {
        return lengths[check(i)];
    }

    /** Where piece {@code i} starts in the message. */
    public long start(int i) {
        return starts[check(i)];
    }

    /** The region piece {@code i} resolved to; null before {@link #resolve}, or for memory given directly. */
    public MemoryRegion region(int i) {
        return regions[check(i)];
    }

    /** The memory of piece {@code i}; null for a piece named by key and not yet resolved. */
    public MemorySegment segment(int i) {
        return segments[check(i)];
    }

    private int check(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("element " + i + " of " + count);
        }
        return i;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("SgeList[");
        for (int i = 0; i < count; i++) {
            b.append(i == 0 ? "" : ", ");
            if (named[i]) {
                b.append("0x").append(Integer.toHexString(keys[i]));
            }
            b.append('@').append(offsets[i]).append('+').append(lengths[i]);
        }
        return b.append(']').toString();
    }
}
