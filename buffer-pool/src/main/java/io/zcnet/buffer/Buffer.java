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
 */
public final class Buffer {

    static final int FREE = 0;
    static final int LEASED = 1;

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
    private int state = FREE;

    Buffer(BufferPool pool, int id, int sizeClass, MemorySegment segment, MemoryRegion region, long regionOffset) {
        this.pool = pool;
        this.id = id;
        this.sizeClass = sizeClass;
        this.segment = segment;
        this.region = region;
        this.regionOffset = regionOffset;
    }

    /** The buffer's memory: exactly {@link #capacity()} bytes, valid until the pool is closed. */
    public MemorySegment segment() {
        return segment;
    }

    /** Size in bytes: the size class's buffer size. */
    public int capacity() {
        return (int) segment.byteSize();
    }

    /** Number of the buffer, unique within its pool, in [0, total buffers); stable for the pool's life. */
    public int id() {
        return id;
    }

    /** Index of the buffer's size class in the pool. */
    public int sizeClass() {
        return sizeClass;
    }

    /** The pool that owns the buffer. */
    public BufferPool pool() {
        return pool;
    }

    /** The region of the slab the buffer lies in (for keys and fixed-buffer indexes). */
    public MemoryRegion region() {
        return region;
    }

    /** Offset of the buffer inside {@link #region()}. */
    public long regionOffset() {
        return regionOffset;
    }

    /** Returns the buffer to its pool: same as {@code pool().release(this)}. */
    public void release() {
        pool.release(this);
    }

    /** Whether the buffer is leased now (racy when read off the owner thread: for diagnostics). */
    public boolean isLeased() {
        return (int) STATE.getOpaque(this) == LEASED;
    }

    /** Marks the buffer leased. Only the owner thread leases, and it took the buffer from a free list. */
    void markLeased() {
        STATE.set(this, LEASED);
    }

    /** Marks the buffer free; false if it was not leased (a double release). */
    boolean markFree() {
        return STATE.compareAndSet(this, LEASED, FREE);
    }

    @Override
    public String toString() {
        return "Buffer[id=" + id + ", class=" + sizeClass + ", capacity=" + segment.byteSize()
                + ", regionOffset=" + regionOffset + ", leased=" + isLeased() + "]";
    }
}
