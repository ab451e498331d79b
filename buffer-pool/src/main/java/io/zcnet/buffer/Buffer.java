package io.zcnet.buffer;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One fixed-size buffer of a {@link BufferPool}: a slice of its size class's slab.
 *
 * <p>The pool creates one {@code Buffer} per slice when it is created and hands out the same object on every
 * lease, so leasing allocates nothing. Its identity fields never change and may be read from any thread;
 * the memory belongs to whoever leased it until {@link #release()}. After a release, the buffer and its
 * segment must not be used: the next lease hands them to someone else.
 *
 * <p><b>What a release detects.</b> Because the object is reused, a reference kept past its release is
 * indistinguishable from the current holder's: {@link #release()} refuses a buffer that is free (a double
 * release before anyone leased it again), but a stale release through an old reference after the buffer
 * was leased again succeeds and takes it from its new holder. Holders that must survive such bugs keep the
 * {@link #generation()} they leased and release with {@link #release(int)}, which refuses a generation
 * that is not the current lease. Both are allocation-free.
 */
public final class Buffer {

    // state = generation << 1 | LEASED: each lease bumps the generation, so a stale release can be told apart.
    private static final int LEASED = 1;

    // Released from any thread: a CAS on the state makes a double release fail exactly once.
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Buffer.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final BufferPool pool;
    private final int id;
    private final int sizeClass;
    private final MemorySegment segment;
    private final MemoryRegion region;
    private final long regionOffset;
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    Buffer(BufferPool pool, int id, int sizeClass, MemorySegment segment, MemoryRegion region, long regionOffset) {
        this.pool = pool;
        this.id = id;
        this.sizeClass = sizeClass;
        this.segment = segment;
        this.region = region;
        this.regionOffset = regionOffset;
    }

    /** {@return the buffer's memory: exactly {@link #capacity()} bytes, valid until the pool is closed} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return the size in bytes: the size class's buffer size} */
    public int capacity() {
        return (int) segment.byteSize();
    }

    /** {@return the number of the buffer, unique within its pool, in [0, total buffers); stable for the pool's life} */
    public int id() {
        return id;
    }

    /** {@return the index of the buffer's size class in the pool} */
    public int sizeClass() {
        return sizeClass;
    }

    /** {@return the pool that owns the buffer} */
    public BufferPool pool() {
        return pool;
    }

    /** {@return the region of the slab the buffer lies in (for keys and fixed-buffer indexes)} */
    public MemoryRegion region() {
        return region;
    }

    /** {@return the offset of the buffer inside {@link #region()}} */
    public long regionOffset() {
        return regionOffset;
    }

    /** Returns the buffer to its pool: same as {@code pool().release(this)}. */
    public void release() {
        pool.release(this);
    }

    /**
     * Returns the buffer if {@code generation} is its current lease: same as {@code pool().release(this, generation)}.
     *
     * @param generation what {@link #generation()} returned right after this lease
     */
    public void release(int generation) {
        pool.release(this, generation);
    }

    /**
     * {@return the number of the current (or, when free, the last) lease of this buffer, mod 2^31: read it right after
     * leasing and pass it to {@link #release(int)}} Any thread.
     */
    public int generation() {
        return (int) STATE.getVolatile(this) >>> 1;
    }

    /** {@return whether the buffer is leased now (racy when read off the owner thread: for diagnostics)} */
    public boolean isLeased() {
        return ((int) STATE.getOpaque(this) & LEASED) != 0;
    }

    /** Marks the buffer leased under a new generation. Only the owner thread leases, from a free list. */
    void markLeased() {
        // Free, so only failing releases race with us; generation + 1, LEASED bit set.
        STATE.getAndAdd(this, 3);
    }

    /** Marks the buffer free; false if it was not leased (a double release). */
    boolean markFree() {
        int s;
        do {
            s = (int) STATE.getVolatile(this);
            if ((s & LEASED) == 0) {
                return false;
            }
        } while (!STATE.compareAndSet(this, s, s & ~LEASED)); // volatile CAS: one of two racing releases wins
        return true;
    }

    /** Marks the buffer free if {@code generation} is its current lease; false otherwise. */
    boolean markFree(int generation) {
        int leased = (generation << 1) | LEASED;
        return STATE.compareAndSet(this, leased, leased & ~LEASED); // volatile CAS: a stale generation never matches
    }

    @Override
    public String toString() {
        return "Buffer[id=" + id + ", class=" + sizeClass + ", capacity=" + segment.byteSize()
                + ", regionOffset=" + regionOffset + ", leased=" + isLeased() + ", generation=" + generation() + "]";
    }
}
