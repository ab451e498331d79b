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

    private static final byte NAMED = 0;
    private static final byte RESOLVED = 1;
    private static final byte MEMORY = 2;

    private final int[] keys;
    private final long[] offsets;
    private final long[] lengths;
    /** Where each piece starts in the message: the lengths of the pieces before it. */
    private final long[] starts;
    /** {@link #NAMED}, {@link #RESOLVED} or {@link #MEMORY}: which of the references below holds. */
    private final byte[] states;
    /*
     * A piece named by key has its region once resolved; a piece given as memory has its segment. References
     * are stored only when they change, and clear() leaves them (until a later piece overwrites them, a list
     * keeps at most its capacity in stale references): lists live as long as their owners, and on the data
     * path every reference stored into a long-lived array pays G1's post-write barrier, a memory fence
     * included, where comparing first costs a load.
     */
    private final MemoryRegion[] regions;
    private final MemorySegment[] memory;
    /** Where this list's pieces start in the arrays, which the lists of one {@link #table} share. */
    private final int base;
    private final int capacity;
    private int count;
    private long byteSize;
    private int refused = -1;

    /**
     * An empty list.
     *
     * @param capacity pieces at most, at least 1
     */
    public SgeList(int capacity) {
        this(checkCapacity(capacity), 0, new int[capacity], new long[capacity], new long[capacity], new long[capacity],
                new byte[capacity], new MemoryRegion[capacity], new MemorySegment[capacity]);
    }

    private SgeList(int capacity, int base, int[] keys, long[] offsets, long[] lengths, long[] starts, byte[] states,
                    MemoryRegion[] regions, MemorySegment[] memory) {
        this.capacity = capacity;
        this.base = base;
        this.keys = keys;
        this.offsets = offsets;
        this.lengths = lengths;
        this.starts = starts;
        this.states = states;
        this.regions = regions;
        this.memory = memory;
    }

    /**
     * {@code lists} lists of up to {@code capacity} pieces each, whose pieces lie side by side in arrays they
     * share: for an owner of many lists used in turn (a ring of work requests or of receives), so that
     * neighbouring lists share cache lines as the columns of parallel arrays do, and a list's pieces are not
     * scattered over arrays of their own.
     *
     * @param lists how many lists
     * @param capacity pieces per list at most, at least 1
     * @return the lists
     */
    public static SgeList[] table(int lists, int capacity) {
        checkCapacity(capacity);
        int pieces = Math.multiplyExact(lists, capacity);
        int[] keys = new int[pieces];
        long[] offsets = new long[pieces];
        long[] lengths = new long[pieces];
        long[] starts = new long[pieces];
        byte[] states = new byte[pieces];
        MemoryRegion[] regions = new MemoryRegion[pieces];
        MemorySegment[] memory = new MemorySegment[pieces];
        SgeList[] table = new SgeList[lists];
        for (int l = 0; l < lists; l++) {
            table[l] = new SgeList(capacity, l * capacity, keys, offsets, lengths, starts, states, regions, memory);
        }
        return table;
    }

    private static int checkCapacity(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        return capacity;
    }

    /**
     * Empties the list (the references its pieces held stay until later pieces take their places).
     *
     * @return this list
     */
    public SgeList clear() {
        count = 0;
        byteSize = 0;
        return this;
    }

    /**
     * Appends {@code length} bytes at {@code offset} of the region whose key is {@code key}, to be
     * {@linkplain #resolve resolved}.
     *
     * @param key the region's key: local for a work request, remote for a READ's sink on the wire
     * @param offset where the piece starts in the region
     * @param length bytes in the piece
     * @return this list
     * @throws IllegalArgumentException if the list is full or the range is negative
     */
    public SgeList add(int key, long offset, long length) {
        int i = base + append(offset, length);
        keys[i] = key;
        states[i] = NAMED;
        return this;
    }

    /**
     * Appends {@code length} bytes at {@code offset} of {@code segment}, already memory: nothing to resolve.
     *
     * @param segment the memory
     * @param offset where the piece starts in it
     * @param length bytes in the piece
     * @return this list
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
        int i = base + append(offset, length);
        keys[i] = 0;
        states[i] = MEMORY;
        if (memory[i] != segment) {
            memory[i] = segment;
        }
        return this;
    }

    private int append(long offset, long length) {
        if (count == capacity || offset < 0 || length < 0 || length > Long.MAX_VALUE - byteSize) {
            throw refusal(offset, length);
        }
        int i = count++;
        offsets[base + i] = offset;
        lengths[base + i] = length;
        starts[base + i] = byteSize;
        byteSize += length;
        return i;
    }

    // Kept out of append, so that the path taken inlines.
    private IllegalArgumentException refusal(long offset, long length) {
        return new IllegalArgumentException(count == capacity ? "scatter/gather list is full (" + capacity + " elements)"
                : "element " + offset + "+" + length + " refused: " + AccessStatus.name(AccessStatus.OUT_OF_BOUNDS)
                + " (negative, or the list passes 2^63 bytes)");
    }

    /**
     * Replaces this list's pieces with copies of {@code other}'s, resolved or not.
     *
     * @param other the list to copy
     * @return this list
     */
    public SgeList copyFrom(SgeList other) {
        if (other.count > capacity) {
            throw new IllegalArgumentException(other.count + " elements do not fit a list of " + capacity);
        }
        // A loop, not seven array copies: lists hold one or two pieces far more often than many.
        for (int i = 0; i < other.count; i++) {
            int to = base + i;
            int from = other.base + i;
            keys[to] = other.keys[from];
            offsets[to] = other.offsets[from];
            lengths[to] = other.lengths[from];
            starts[to] = other.starts[from];
            states[to] = other.states[from];
            if (regions[to] != other.regions[from]) {
                regions[to] = other.regions[from];
            }
            if (memory[to] != other.memory[from]) {
                memory[to] = other.memory[from];
            }
        }
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
     * @param registry where the keys are looked up
     * @param access the {@link io.zcnet.buffer.Access} rights every piece's region must grant
     */
    public int resolve(MemoryRegistry registry, int access) {
        refused = -1;
        for (int i = 0; i < count; i++) {
            int j = base + i;
            if (states[j] == MEMORY) {
                continue;
            }
            MemoryRegion region = registry.resolveLocal(keys[j], offsets[j], lengths[j], access);
            if (region == null) {
                // Deregistered between the two looks if the second one passes.
                int status = registry.checkLocal(keys[j], offsets[j], lengths[j], access);
                states[j] = NAMED;
                refused = i;
                return status == AccessStatus.OK ? AccessStatus.DEREGISTERED : status;
            }
            if (regions[j] != region) {
                regions[j] = region;
            }
            states[j] = RESOLVED;
        }
        return AccessStatus.OK;
    }

    /** {@return the piece the last {@link #resolve} refused, or -1} */
    public int refused() {
        return refused;
    }

    /**
     * Renames every resolved piece by its region's remote key: the name a READ's sink goes by on the wire
     * ({@link Segmenter#beginReadRequest(int, int, long, SgeList)}).
     *
     * @return this list
     */
    public SgeList nameByRemoteKeys() {
        for (int i = 0; i < count; i++) {
            if (states[base + i] == RESOLVED) {
                keys[base + i] = regions[base + i].remoteKey();
            }
        }
        return this;
    }

    /**
     * {@return the piece that holds byte {@code position} of the message: the last one starting at or before it
     * (a piece of 0 bytes always has a later one starting where it does, or starts at {@link #byteSize()})}
     *
     *
     * @param position a byte of the message
     * @throws IndexOutOfBoundsException unless {@code 0 <= position < byteSize()}
     */
    public int pieceAt(long position) {
        java.util.Objects.checkIndex(position, byteSize);
        int low = 0;
        int high = count - 1;
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (starts[base + mid] <= position) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    /**
     * {@return how many pieces of at least one byte the range {@code [position, position + length)} of the message
     * touches}: the spans an {@link SgeCursor} walks there.
     *
     *
     * @param position the first byte of the range
     * @param length bytes in the range
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
            if (lengths[base + i] > 0) {
                n++;
            }
        }
        return n;
    }

    /** {@return how many pieces the list holds} */
    public int count() {
        return count;
    }

    /** {@return how many pieces the list can hold} */
    public int capacity() {
        return capacity;
    }

    /** {@return the bytes of all pieces together}: the message's length. */
    public long byteSize() {
        return byteSize;
    }

    /**
     * {@return the key piece {@code i} was named by (0 for memory given directly)}
     *
     * @param i a piece index
     */
    public int key(int i) {
        return keys[base + check(i)];
    }

    /**
     * {@return where piece {@code i} starts in its region or segment}
     *
     * @param i a piece index
     */
    public long offset(int i) {
        return offsets[base + check(i)];
    }

    /**
     * {@return the bytes of piece {@code i}}
     *
     * @param i a piece index
     */
    public long length(int i) {
        return lengths[base + check(i)];
    }

    /**
     * {@return where piece {@code i} starts in the message}
     *
     * @param i a piece index
     */
    public long start(int i) {
        return starts[base + check(i)];
    }

    /**
     * {@return the region piece {@code i} resolved to; null before {@link #resolve}, or for memory given directly}
     *
     * @param i a piece index
     */
    public MemoryRegion region(int i) {
        int j = base + check(i);
        return states[j] == RESOLVED ? regions[j] : null;
    }

    /**
     * {@return the memory of piece {@code i}; null for a piece named by key and not yet resolved}
     *
     * @param i a piece index
     */
    public MemorySegment segment(int i) {
        int j = base + check(i);
        return switch (states[j]) {
            case RESOLVED -> regions[j].segment();
            case MEMORY -> memory[j];
            default -> null;
        };
    }

    private int check(int i) {
        return java.util.Objects.checkIndex(i, count);
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("SgeList[");
        for (int i = 0; i < count; i++) {
            b.append(i == 0 ? "" : ", ");
            if (states[base + i] != MEMORY) {
                b.append("0x").append(Integer.toHexString(keys[base + i]));
            }
            b.append('@').append(offsets[base + i]).append('+').append(lengths[base + i]);
        }
        return b.append(']').toString();
    }
}
