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
 * every thread at once: volatile). Safe to share between threads. Facts of one io_uring (such as a fixed
 * buffer index) are kept by that ring, not here: a region may be registered with several.
 *
 * <p><b>Pins.</b> Whoever lends the region's memory to the kernel holds a {@linkplain #pin() pin} while
 * the kernel may touch it: a placement whose {@code recv} writes straight into it, a provided-buffer ring
 * holding one of its buffers, a ring that registered it as a fixed buffer. {@link MemoryRegistry#deregister}
 * and {@link BufferPool#close()} refuse a pinned region, so its memory cannot be handed back while the
 * kernel may still use it. The pin count and the deregistered mark share one atomic word: a pin either
 * lands before deregistration (which then refuses) or fails.
 */
public final class MemoryRegion {

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

    /** {@return the registered memory} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return the size of the region in bytes} */
    public long size() {
        return segment.byteSize();
    }

    /** {@return the {@link Access} flags granted} */
    public int access() {
        return access;
    }

    /** {@return the key that names the region in local work requests} */
    public int localKey() {
        return localKey;
    }

    /** {@return the key a peer presents to write or read the region; unguessable, see {@link MemoryRegistry}} */
    public int remoteKey() {
        return remoteKey;
    }

    /** {@return the registry that issued the keys} */
    public MemoryRegistry registry() {
        return registry;
    }

    /** {@return whether the keys still resolve}: true until the region is deregistered, never again afterwards. */
    public boolean isValid() {
        return valid;
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

    /** {@return how many pins are held now (0 once deregistered)} Any thread; a snapshot. */
    public int pinCount() {
        int p = (int) PINS.getVolatile(this);
        return Math.max(p, 0);
    }

    /** Marks the region deregistered unless pinned; returns the pins that prevented it, or 0 on success. */
    int closePins() {
        int p = (int) PINS.compareAndExchange(this, 0, PINS_CLOSED); // volatile: a later pin() fails
        return p == 0 ? 0 : Math.max(p, 0);
    }

    /** Undoes {@link #closePins()} for a close that was given up before the region was deregistered. */
    void reopenPins() {
        PINS.compareAndSet(this, PINS_CLOSED, 0); // volatile: pins may be taken again
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
                + ", pins=" + pinCount() + "]";
    }
}
