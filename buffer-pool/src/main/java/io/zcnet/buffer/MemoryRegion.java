package io.zcnet.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A registered range of native memory with access rights and its two keys, like an ibv_mr of
 * ibv_reg_mr(3): the {@linkplain #localKey() local key} names it in local work requests, the
 * {@linkplain #remoteKey() remote key} is what a peer sends to write or read it. Offsets given with a key
 * are relative to {@link #segment()}'s start, never virtual addresses.
 *
 * <p>Created only by {@link MemoryRegistry#register}. Keys, segment and rights never change; the object
 * is immutable except for {@link #isValid()} (cleared once by {@link MemoryRegistry#deregister}, visible to
 * every thread at once: volatile) and {@link #fixedBufferIndex()} (set by the ring that registers the
 * region with {@code IORING_REGISTER_BUFFERS2}, volatile so any thread reads the current index). Safe to
 * share between threads.
 *
 * <p><b>Pins.</b> While the kernel writes into the region on a placement's behalf (a {@code recv} straight
 * into it), the placement holds a {@linkplain #pin() pin}; {@link MemoryRegistry#deregister} refuses a
 * pinned region, so its memory cannot be handed back while a write into it is in flight. The pin count and
 * the deregistered mark share one atomic word: a pin either lands before deregistration (which then
 * refuses) or fails.
 */
public final class MemoryRegion {

    /** {@link #fixedBufferIndex()} of a region no ring has registered. */
    public static final int NO_FIXED_BUFFER = -1;

    /** {@link #pins} once deregistered: negative, so no pin can be taken any more. */
    private static final int PINS_CLOSED = Integer.MIN_VALUE;
    // Pinned by the receive loop, checked by deregister on any thread: CAS on one word orders the two.
    private static final VarHandle PINS;

    static {
        try {
            PINS = MethodHandles.lookup().findVarHandle(MemoryRegion.class, "pins", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MemoryRegistry registry;
    private final int slot;
    private final MemorySegment segment;
    private final int access;
    private final int localKey;
    private final int remoteKey;
    private volatile boolean valid = true;
    private volatile int fixedBufferIndex = NO_FIXED_BUFFER;
    @SuppressWarnings("unused") // accessed through PINS
    private volatile int pins;

    MemoryRegion(MemoryRegistry registry, int slot, MemorySegment segment, int access, int localKey, int remoteKey) {
        this.registry = registry;
        this.slot = slot;
        this.segment = segment;
        this.access = access;
        this.localKey = localKey;
        this.remoteKey = remoteKey;
    }

    /** The registered memory. */
    public MemorySegment segment() {
        return segment;
    }

    /** Size of the region in bytes. */
    public long size() {
        return segment.byteSize();
    }

    /** The {@link Access} flags granted. */
    public int access() {
        return access;
    }

    /** Key that names the region in local work requests. */
    public int localKey() {
        return localKey;
    }

    /** Key a peer presents to write or read the region; unguessable, see {@link MemoryRegistry}. */
    public int remoteKey() {
        return remoteKey;
    }

    /** The registry that issued the keys. */
    public MemoryRegistry registry() {
        return registry;
    }

    /** True until the region is deregistered; its keys never resolve again afterwards. */
    public boolean isValid() {
        return valid;
    }

    /** Index of the region in an io_uring's fixed-buffer table, or {@link #NO_FIXED_BUFFER}. */
    public int fixedBufferIndex() {
        return fixedBufferIndex;
    }

    /**
     * Records the region's index in an io_uring fixed-buffer table (or {@link #NO_FIXED_BUFFER} when the ring
     * unregisters it). Called by the ring that registered it.
     *
     * @throws IllegalArgumentException if {@code index < -1}
     */
    public void fixedBufferIndex(int index) {
        if (index < NO_FIXED_BUFFER) {
            throw new IllegalArgumentException("fixed buffer index must be >= 0, or -1 for none; got " + index);
        }
        fixedBufferIndex = index;
    }

    /**
     * Takes a pin: the caller is about to have memory of this region written outside the Java heap's view
     * (the kernel receiving into it) and must {@link #unpin()} once that write is over. Any thread;
     * lock-free, allocation-free.
     *
     * @return false if the region is deregistered (nothing pinned): do not write into it
     */
    public boolean pin() {
        int p;
        do {
            p = (int) PINS.getVolatile(this);
            if (p < 0 || p == Integer.MAX_VALUE) {
                return false;
            }
        } while (!PINS.compareAndSet(this, p, p + 1)); // volatile CAS: deregister sees the pin or we see it closed
        return true;
    }

    /**
     * Gives back a pin taken by {@link #pin()}. Any thread.
     *
     * @throws IllegalStateException if the region holds no pin
     */
    public void unpin() {
        int p;
        do {
            p = (int) PINS.getVolatile(this);
            if (p <= 0) {
                throw new IllegalStateException("unpin without a pin: " + this);
            }
        } while (!PINS.compareAndSet(this, p, p - 1)); // volatile CAS: pairs with deregister's CAS
    }

    /** Pins held now (0 once deregistered). Any thread; a snapshot. */
    public int pinCount() {
        int p = (int) PINS.getVolatile(this);
        return Math.max(p, 0);
    }

    /** Marks the region deregistered unless pinned; returns the pins that prevented it, or 0 on success. */
    int closePins() {
        int p = (int) PINS.compareAndExchange(this, 0, PINS_CLOSED); // volatile: a later pin() fails
        return p == 0 ? 0 : Math.max(p, 0);
    }

    int slot() {
        return slot;
    }

    void invalidate() {
        valid = false;
    }

    @Override
    public String toString() {
        return "MemoryRegion[size=" + segment.byteSize() + ", access=" + Access.describe(access)
                + ", lkey=0x" + Integer.toHexString(localKey) + ", valid=" + valid
                + ", pins=" + pinCount()
                + ", fixedBufferIndex=" + fixedBufferIndex + "]";
    }
}
