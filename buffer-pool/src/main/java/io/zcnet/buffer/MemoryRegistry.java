package io.zcnet.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.security.SecureRandom;
import java.util.Objects;

/**
 * Issues keys for {@link MemoryRegion}s and resolves them, like the memory-region table of an RDMA device
 * (ibv_reg_mr(3), ibv_dereg_mr(3)).
 *
 * <h2>Keys</h2>
 * A table of {@code capacity} (a power of two, {@code 2^b}) slots holds the registered regions. Both keys of
 * a region carry its slot index in the low {@code b} bits and a tag drawn from {@link SecureRandom} above:
 * <pre>
 *  31                          b  b-1               0
 * +------------------------------+-------------------+
 * |  random tag (32-b bits, !=0) |  slot index (b)   |
 * +------------------------------+-------------------+
 * </pre>
 * A lookup masks out the slot and compares the whole key with the one stored there, so it costs one
 * load and one compare, and a key resolves only if all its tag bits match: a peer that knows a slot index
 * guesses a key with probability {@code 2^-(32-b)} (2^-22 for the default 1024 slots). Tags are fresh on
 * every registration; a slot's new keys never equal its previous keys, so a key revoked by
 * {@link #deregister} never resolves to the next region of that slot (a key from two or more registrations
 * earlier recurs only by the same {@code 2^-(32-b)} chance). The local and remote keys of a region differ,
 * and no key is 0, so a zeroed key field never resolves.
 *
 * <h2>Threads and ordering</h2>
 * {@link #register} and {@link #deregister} may be called from any thread (they take this object's lock).
 * Lookups and checks may run on any thread concurrently with them, take no lock and allocate nothing. A
 * region is fully built before {@code register} publishes it into its slot with a release store, and
 * lookups read the slot with an acquire load, so whoever resolves a key sees the region's fields.
 * {@code deregister} clears {@link MemoryRegion#isValid()} (volatile) before releasing the slot: a lookup
 * that starts after {@code deregister} returns never resolves the old keys; one that races with it may
 * still return the region, and re-checking {@code isValid()} after the access is the caller's business.
 */
public final class MemoryRegistry {

    /** Slots of a registry made with {@link #MemoryRegistry()}. */
    public static final int DEFAULT_CAPACITY = 1 << 10;

    /** Largest capacity: leaves 16 random bits in a key. */
    public static final int MAX_CAPACITY = 1 << 16;

    // Slot table and retired-key arrays are read with acquire by lookups on other threads.
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(MemoryRegion[].class);
    private static final VarHandle KEYS = MethodHandles.arrayElementVarHandle(int[].class);

    /** A thread that never runs: a segment it may access is accessible from every thread. */
    private static final Thread NO_THREAD = Thread.ofPlatform().unstarted(() -> { });

    private final SecureRandom random = new SecureRandom();
    private final int slotMask;
    private final MemoryRegion[] slots;
    /** Keys of the region last deregistered from each slot; 0 = none. */
    private final int[] retiredRemoteKeys;
    private final int[] retiredLocalKeys;
    /** Free slots in a FIFO ring, so a slot is reused as late as possible. Guarded by {@code this}. */
    private final int[] freeSlots;
    private int freeHead;
    private int freeCount;

    /** A registry of {@link #DEFAULT_CAPACITY} slots, keys from {@link SecureRandom}. */
    public MemoryRegistry() {
        this(DEFAULT_CAPACITY);
    }

    /**
     * A registry of {@code capacity} slots, keys from {@link SecureRandom}.
     *
     * @param capacity a power of two in [1, {@value #MAX_CAPACITY}]: the most regions registered at once
     */
    public MemoryRegistry(int capacity) {
        if (capacity < 1 || capacity > MAX_CAPACITY || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException(
                    "capacity must be a power of two in [1, " + MAX_CAPACITY + "], got " + capacity);
        }
        this.slotMask = capacity - 1;
        this.slots = new MemoryRegion[capacity];
        this.retiredRemoteKeys = new int[capacity];
        this.retiredLocalKeys = new int[capacity];
        this.freeSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            freeSlots[i] = i;
        }
        this.freeCount = capacity;
    }

    /** {@return the number of slots: the most regions registered at once} */
    public int capacity() {
        return slots.length;
    }

    /** {@return the number of regions registered now} */
    public synchronized int size() {
        return slots.length - freeCount;
    }

    /**
     * Registers native memory with the given rights and issues its keys.
     *
     * @param segment native (off-heap) memory whose arena is alive, not empty, writable if write access is
     *                asked, and accessible from every thread ({@code Arena.ofShared()}, {@code ofAuto()} or
     *                {@code global()}: the receive loop that places into it is usually not the registering
     *                thread)
     * @param access  {@link Access} flags; must satisfy {@link Access#isValid(int)}
     * @return the region, with its local and remote keys
     * @throws IllegalArgumentException if an argument is unfit
     * @throws IllegalStateException    if every slot is in use
     */
    public MemoryRegion register(MemorySegment segment, int access) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("only native (off-heap) segments can be registered: the kernel and"
                    + " peers address them while the GC may move a heap array; got " + segment);
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalArgumentException("segment's arena is already closed: " + segment);
        }
        if (!segment.isAccessibleBy(NO_THREAD)) {
            throw new IllegalArgumentException("segment is confined to one thread, but placements into a region run"
                    + " on the receive loop's thread: allocate it from Arena.ofShared(), Arena.ofAuto() or"
                    + " Arena.global(); got " + segment);
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        if (!Access.isValid(access)) {
            throw new IllegalArgumentException("invalid access " + Access.describe(access)
                    + ": only LOCAL_WRITE, REMOTE_WRITE, REMOTE_READ are defined and REMOTE_WRITE needs LOCAL_WRITE");
        }
        if (segment.isReadOnly() && (access & (Access.LOCAL_WRITE | Access.REMOTE_WRITE)) != 0) {
            throw new IllegalArgumentException("read-only segment registered with write access " + Access.describe(access));
        }
        synchronized (this) {
            if (freeCount == 0) {
                throw new IllegalStateException("memory registry full: all " + slots.length
                        + " slots hold registered regions; deregister some or create a larger registry");
            }
            int slot = freeSlots[freeHead];
            freeHead = (freeHead + 1) & slotMask;
            freeCount--;
            int remoteKey = newKey(slot, retiredRemoteKeys[slot], retiredLocalKeys[slot], 0);
            int localKey = newKey(slot, retiredRemoteKeys[slot], retiredLocalKeys[slot], remoteKey);
            MemoryRegion region = new MemoryRegion(this, slot, segment, access, localKey, remoteKey);
            SLOTS.setRelease(slots, slot, region); // publish: a reader that loads it sees a fully built region
            return region;
        }
    }

    /**
     * Revokes the region's keys: they never resolve again, {@link MemoryRegion#isValid()} turns false, and its
     * slot becomes free. The memory itself is not freed. A region {@linkplain MemoryRegion#pin() pinned} by a
     * placement in flight is refused: the kernel may still be writing into it.
     *
     * @param region a region this registry issued
     * @throws IllegalArgumentException if the region was issued by another registry
     * @throws IllegalStateException    if it was already deregistered, or is pinned
     */
    public void deregister(MemoryRegion region) {
        Objects.requireNonNull(region, "region");
        if (region.registry() != this) {
            throw new IllegalArgumentException("region was registered in another registry: " + region);
        }
        synchronized (this) {
            if (!region.isValid()) {
                throw new IllegalStateException("region already deregistered: " + region);
            }
            int pinned = region.closePins();
            if (pinned != 0) {
                throw new IllegalStateException("region is pinned " + pinned + " time(s), lent to the kernel (a"
                        + " placement in flight, a buffer ring, a fixed buffer); deregister it once they are done: "
                        + region);
            }
            int slot = region.slot();
            region.invalidate(); // volatile: racing checks see the region as gone before the slot is reused
            KEYS.setRelease(retiredRemoteKeys, slot, region.remoteKey()); // lets checks report DEREGISTERED
            KEYS.setRelease(retiredLocalKeys, slot, region.localKey());
            SLOTS.setRelease(slots, slot, null); // after invalidate: nobody resolves the keys once this is seen
            freeSlots[(freeHead + freeCount) & slotMask] = slot;
            freeCount++;
        }
    }

    /**
     * {@return the valid region whose remote key is {@code rkey}, or null} Any thread; lock-free, allocation-free.
     *
     * @param rkey a remote key, as a peer sent it
     */
    public MemoryRegion lookupRemote(int rkey) {
        MemoryRegion region = (MemoryRegion) SLOTS.getAcquire(slots, rkey & slotMask); // pairs with register's release
        return region != null && region.remoteKey() == rkey && region.isValid() ? region : null;
    }

    /**
     * {@return the valid region whose local key is {@code lkey}, or null} Any thread; lock-free, allocation-free.
     *
     * @param lkey a local key, as a work request names it
     */
    public MemoryRegion lookupLocal(int lkey) {
        MemoryRegion region = (MemoryRegion) SLOTS.getAcquire(slots, lkey & slotMask); // pairs with register's release
        return region != null && region.localKey() == lkey && region.isValid() ? region : null;
    }

    /**
     * Checks a peer's access of {@code length} bytes at {@code offset} of the region named by {@code rkey}.
     * Meant for values straight off the wire: it never throws for them and allocates nothing. A u64 offset
     * above 2^63 arrives as a negative long and is refused like any other out-of-range value.
     *
     * @param requiredAccess {@link Access#REMOTE_WRITE}, {@link Access#REMOTE_READ} or both
     * @return an {@link AccessStatus}: key, then liveness, then rights, then bounds
     * @param rkey the remote key, as a peer sent it
     * @param offset byte offset into the region, as a peer sent it
     * @param length number of bytes, as a peer sent it
     * @throws IllegalArgumentException if {@code requiredAccess} is not a non-empty set of remote rights (a
     *                                  programming error, not a wire value)
     */
    public int checkRemote(int rkey, long offset, long length, int requiredAccess) {
        if (requiredAccess == 0 || (requiredAccess & ~(Access.REMOTE_WRITE | Access.REMOTE_READ)) != 0) {
            throw new IllegalArgumentException(
                    "requiredAccess must be REMOTE_WRITE and/or REMOTE_READ, got " + Access.describe(requiredAccess));
        }
        int slot = rkey & slotMask;
        MemoryRegion region = (MemoryRegion) SLOTS.getAcquire(slots, slot); // pairs with register's release
        if (region == null || region.remoteKey() != rkey) {
            return rkey != 0 && (int) KEYS.getAcquire(retiredRemoteKeys, slot) == rkey
                    ? AccessStatus.DEREGISTERED : AccessStatus.INVALID_KEY;
        }
        return check(region, offset, length, requiredAccess);
    }

    /**
     * Checks a local access of {@code length} bytes at {@code offset} of the region named by {@code lkey}, as a
     * work request's scatter/gather element is checked. Never throws for bad keys or ranges.
     *
     * @param requiredAccess {@link Access} flags needed; 0 for a local read (a send from the region)
     * @return an {@link AccessStatus}
     * @param lkey the local key, as a work request names it
     * @param offset byte offset into the region
     * @param length number of bytes
     * @throws IllegalArgumentException if {@code requiredAccess} has undefined bits
     */
    public int checkLocal(int lkey, long offset, long length, int requiredAccess) {
        if ((requiredAccess & ~Access.ALL) != 0) {
            throw new IllegalArgumentException("requiredAccess has undefined bits: " + Access.describe(requiredAccess));
        }
        int slot = lkey & slotMask;
        MemoryRegion region = (MemoryRegion) SLOTS.getAcquire(slots, slot); // pairs with register's release
        if (region == null || region.localKey() != lkey) {
            return lkey != 0 && (int) KEYS.getAcquire(retiredLocalKeys, slot) == lkey
                    ? AccessStatus.DEREGISTERED : AccessStatus.INVALID_KEY;
        }
        return check(region, offset, length, requiredAccess);
    }

    /**
     * {@return the region of {@code lkey} if {@link #checkLocal} would pass the access, else null} The one lookup
     * a work request's element needs on the data path; {@code checkLocal} tells why one was refused.
     *
     * @param lkey the local key, as a work request names it
     * @param offset byte offset into the region
     * @param length number of bytes
     * @param requiredAccess {@link Access} flags needed; 0 for a local read (a send from the region)
     * @throws IllegalArgumentException if {@code requiredAccess} has undefined bits
     */
    public MemoryRegion resolveLocal(int lkey, long offset, long length, int requiredAccess) {
        if ((requiredAccess & ~Access.ALL) != 0) {
            throw new IllegalArgumentException("requiredAccess has undefined bits: " + Access.describe(requiredAccess));
        }
        MemoryRegion region = (MemoryRegion) SLOTS.getAcquire(slots, lkey & slotMask); // pairs with register's release
        return region != null && region.localKey() == lkey && check(region, offset, length, requiredAccess) == AccessStatus.OK
                ? region : null;
    }

    private static int check(MemoryRegion region, long offset, long length, int requiredAccess) {
        if (!region.isValid() || !region.segment().scope().isAlive()) {
            return AccessStatus.DEREGISTERED;
        }
        if (!Access.grants(region.access(), requiredAccess)) {
            return AccessStatus.NOT_PERMITTED;
        }
        // size - length cannot overflow once length >= 0, so offset + length is never computed.
        if (offset < 0 || length < 0 || offset > region.size() - length) {
            return AccessStatus.OUT_OF_BOUNDS;
        }
        return AccessStatus.OK;
    }

    /** A key for {@code slot} with a random non-zero tag, different from the three keys given. */
    private int newKey(int slot, int avoid1, int avoid2, int avoid3) {
        int key;
        do {
            key = (random.nextInt() & ~slotMask) | slot;
        } while ((key & ~slotMask) == 0 || key == avoid1 || key == avoid2 || key == avoid3);
        return key;
    }

    @Override
    public synchronized String toString() {
        return "MemoryRegistry[regions=" + (slots.length - freeCount) + "/" + slots.length + "]";
    }
}
