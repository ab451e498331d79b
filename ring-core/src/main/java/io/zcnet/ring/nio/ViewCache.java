package io.zcnet.ring.nio;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.IdentityHashMap;

/**
 * Remembers the {@link ByteBuffer} view of recently used {@link MemorySegment}s, so that sending from or
 * receiving into the same segment object again (a pool buffer's preallocated segment, a staging
 * buffer) costs no {@code asByteBuffer()} allocation. Direct-mapped by identity hash: a miss replaces
 * the entry, nothing is ever searched.
 *
 * <p>The views are shared: users set position and limit right before each read or write, on the owner
 * thread, so two operations on the same segment never see each other's bounds. Owner-thread only.
 */
final class ViewCache {
    private final MemorySegment[] segments;
    private final ByteBuffer[] views;
    private final int mask;
    // Views made once for segments that live as long as their owner (provided-buffer rings): a ring
    // has more buffers than the direct-mapped table has entries, and echoing them must not allocate.
    // IdentityHashMap.get allocates nothing.
    private final IdentityHashMap<MemorySegment, ByteBuffer> pinned = new IdentityHashMap<>();

    ViewCache(int entries) {
        if (entries < 1 || Integer.bitCount(entries) != 1) {
            throw new IllegalArgumentException("entries must be a power of two, got " + entries);
        }
        segments = new MemorySegment[entries];
        views = new ByteBuffer[entries];
        mask = entries - 1;
    }

    /**
     * The view of the whole of {@code segment}, or null when the segment is larger than a
     * {@link ByteBuffer} can be (2 GiB); the caller then views only the range it needs.
     *
     * @throws UnsupportedOperationException for a heap segment not backed by a {@code byte[]}
     */
    ByteBuffer view(MemorySegment segment) {
        int slot = System.identityHashCode(segment) & mask;
        if (segments[slot] == segment) {
            return views[slot];
        }
        ByteBuffer known = pinned.get(segment);
        if (known != null) {
            return known;
        }
        if (segment.byteSize() > Integer.MAX_VALUE) {
            return null;
        }
        ByteBuffer view = segment.asByteBuffer();
        segments[slot] = segment;
        views[slot] = view;
        return view;
    }

    /** Serves {@code view} for {@code segment} until {@link #unpin}: the owner keeps both alive. */
    void pin(MemorySegment segment, ByteBuffer view) {
        pinned.put(segment, view);
    }

    void unpin(MemorySegment segment) {
        pinned.remove(segment);
    }

    /** Forgets every entry, so no segment stays reachable from here. */
    void clear() {
        Arrays.fill(segments, null);
        Arrays.fill(views, null);
        pinned.clear();
    }
}
