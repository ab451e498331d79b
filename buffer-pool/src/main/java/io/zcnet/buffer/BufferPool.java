package io.zcnet.buffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fixed set of off-heap buffers in a few power-of-two size classes, leased and released in O(1) without
 * allocation, in the manner of the kernel's per-queue {@code page_pool} (net/core/page_pool.c): one owner
 * thread takes and recycles buffers from plain free lists; other threads hand buffers back through a
 * lock-free stack that the owner takes over in one step when a free list runs dry.
 *
 * <h2>Memory</h2>
 * Each size class is one slab from a shared {@link Arena}, aligned to 4 KiB or to its buffer size if larger
 * (2 MiB when the slab is 2 MiB or more, so the kernel may back it with transparent huge pages), cut into
 * {@code count} buffers of {@code bufferSize} bytes; every buffer is therefore aligned to its own size up to
 * 2 MiB, and buffers of 4 KiB and more start on a page. Each slab is registered in
 * the pool's {@link MemoryRegistry} with {@link Access#LOCAL_WRITE}, so a buffer can be named by
 * {@code (region key, offset)} and the slab registered with io_uring as one fixed buffer. The pool never
 * grows: when no buffer fits, {@link #lease} returns {@code null} and counts it.
 *
 * <h2>Threads</h2>
 * <ul>
 *   <li>{@link #lease}, {@link #leaseFromClass} may be called only by the <em>owner thread</em>: the first
 *       thread that leases, or the one that called {@link #bindOwner()} before. Other threads get an
 *       {@link IllegalStateException}.</li>
 *   <li>{@link #release} may be called by any thread. On the owner it pushes onto the class's free list. On
 *       another thread it pushes onto the class's return stack (a Treiber stack linked through an
 *       {@code int[]} of buffer ids, head in an {@link AtomicLong}): lock-free, allocation-free. The owner
 *       takes the whole stack with one {@code getAndSet} when the free list is empty. Writes a releasing
 *       thread made to the buffer's memory before {@code release} happen-before the next lease of it (the
 *       push is a volatile CAS, the take a volatile {@code getAndSet}).</li>
 *   <li>{@link #stats()}, {@link #sizeClassCount()} and the other accessors may be called from any thread.</li>
 *   <li>{@link #close()} may be called from any thread once the buffers are no longer in use (no I/O in
 *       flight on them): it frees all slabs at once. It refuses while any slab is
 *       {@linkplain MemoryRegion#pin() pinned}, that is while some of its memory is lent to the kernel (a
 *       provided-buffer ring, a fixed-buffer registration, a direct placement).</li>
 * </ul>
 * A buffer released while it is free (released twice before anyone leased it again), or released to a pool
 * that does not own it, is refused with an exception before any list is touched. Buffer objects are reused,
 * so {@link #release(Buffer)} cannot tell a stale reference from the current holder's: a release through a
 * reference kept past its own release, after the buffer was leased again, succeeds and takes the buffer
 * from its new holder. {@link #release(Buffer, int)} with the {@linkplain Buffer#generation() generation}
 * read at lease time refuses that case too.
 */
public final class BufferPool implements AutoCloseable {

    private static final int NIL = -1;
    /** Return stack head: high 32 bits = number of buffers on the stack, low 32 bits = id of the top, or NIL. */
    private static final long EMPTY_STACK = NIL & 0xFFFF_FFFFL;
    private static final long PAGE = 4096;
    private static final long HUGE_PAGE = 2L << 20;

    // Binding the owner races between threads that lease first; a CAS settles it. Reads are plain: the owner
    // always sees its own write, and any other thread that reads a stale null takes the cross-thread path.
    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(BufferPool.class, "owner", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final PoolConfig config;
    private final Arena arena;
    private final MemoryRegistry registry;
    private final MemoryRegion[] slabRegions;
    private final int[] bufferSizes;
    private final int maxBufferSize;
    /** Smallest class index whose buffer size is at least 2^k, or the class count if none. */
    private final int[] classForLog2 = new int[31];
    private final Buffer[] buffers;
    /** Link to the next buffer id, for both the owner's free lists and the return stacks. */
    private final int[] next;

    // Owner-thread state: plain fields.
    private final int[] freeHead;
    private final int[] freeCount;
    private final long[] misses;
    private long exhaustedLeases;
    private long drainedReturns;

    private final AtomicLong[] returnStacks;
    private Thread owner;
    private volatile boolean closed;

    private BufferPool(PoolConfig config, MemoryRegistry registry) {
        this.config = config;
        this.registry = registry;
        List<SizeClass> classes = config.classes();
        int n = classes.size();
        this.bufferSizes = new int[n];
        this.slabRegions = new MemoryRegion[n];
        this.freeHead = new int[n];
        this.freeCount = new int[n];
        this.misses = new long[n];
        this.returnStacks = new AtomicLong[n];
        this.buffers = new Buffer[config.totalBuffers()];
        this.next = new int[buffers.length];
        this.maxBufferSize = classes.get(n - 1).bufferSize();
        for (int k = 0, c = 0; k < classForLog2.length; k++) {
            while (c < n && classes.get(c).bufferSize() < (1 << k)) {
                c++;
            }
            classForLog2[k] = c;
        }
        this.arena = Arena.ofShared();
        try {
            int id = 0;
            for (int c = 0; c < n; c++) {
                SizeClass sizeClass = classes.get(c);
                int size = sizeClass.bufferSize();
                long slabBytes = sizeClass.slabBytes();
                MemorySegment slab = arena.allocate(slabBytes, slabAlignment(size, slabBytes));
                MemoryRegion region = registry.register(slab, Access.LOCAL_WRITE);
                slabRegions[c] = region;
                bufferSizes[c] = size;
                returnStacks[c] = new AtomicLong(EMPTY_STACK);
                freeHead[c] = id;
                freeCount[c] = sizeClass.count();
                for (int i = 0; i < sizeClass.count(); i++, id++) {
                    long offset = (long) i * size;
                    buffers[id] = new Buffer(this, id, c, slab.asSlice(offset, size), region, offset);
                    next[id] = i + 1 < sizeClass.count() ? id + 1 : NIL;
                }
            }
        } catch (RuntimeException | Error e) {
            releaseMemory();
            throw e;
        }
    }

    /**
     * {@return a pool with its own {@link MemoryRegistry} of default capacity}
     *
     * @param config the size classes
     */
    public static BufferPool create(PoolConfig config) {
        return create(config, new MemoryRegistry());
    }

    /**
     * {@return a pool whose slabs are registered in {@code registry}, so several pools and user regions share one key
     * space}
     *
     *
     * @param config the size classes
     * @param registry where the slabs are registered, one region per size class
     * @throws IllegalStateException if the registry has no room for one region per size class
     */
    public static BufferPool create(PoolConfig config, MemoryRegistry registry) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(registry, "registry");
        return new BufferPool(config, registry);
    }

    /**
     * Makes the calling thread the owner, the only thread allowed to lease. Needed only when the owner should
     * be fixed before its first lease; calling it again on the owner does nothing.
     *
     * @throws IllegalStateException if another thread owns the pool, or the pool is closed
     */
    public void bindOwner() {
        checkOpen();
        bindOwnerSlowPath();
    }

    /**
     * Leases a buffer of at least {@code minCapacity} bytes: from the smallest class that fits, or from the
     * next larger class with a free buffer. Owner thread only; O(number of classes) at worst, no allocation.
     *
     * @return the buffer, or {@code null} if every fitting class is exhausted (counted in {@link #stats()})
     * @param minCapacity the fewest bytes the buffer must hold
     * @throws IllegalArgumentException if {@code minCapacity <= 0} or larger than the largest class
     * @throws IllegalStateException    if called off the owner thread, or after {@link #close()}
     */
    public Buffer lease(int minCapacity) {
        checkOwner();
        if (minCapacity <= 0 || minCapacity > maxBufferSize) {
            throw new IllegalArgumentException(
                    "minCapacity must be in [1, " + maxBufferSize + "] (the largest size class), got " + minCapacity);
        }
        for (int c = classForLog2[ceilLog2(minCapacity)]; c < bufferSizes.length; c++) {
            Buffer buffer = pop(c);
            if (buffer != null) {
                return buffer;
            }
        }
        exhaustedLeases++;
        return null;
    }

    /**
     * Leases a buffer of exactly class {@code sizeClassIndex}. Owner thread only; O(1), no allocation.
     *
     * @return the buffer, or {@code null} if the class is exhausted (counted in {@link #stats()})
     * @param sizeClassIndex index of the size class in {@link PoolConfig#classes()}
     * @throws IllegalArgumentException if the index is out of range
     * @throws IllegalStateException    if called off the owner thread, or after {@link #close()}
     */
    public Buffer leaseFromClass(int sizeClassIndex) {
        checkOwner();
        checkClass(sizeClassIndex);
        Buffer buffer = pop(sizeClassIndex);
        if (buffer == null) {
            exhaustedLeases++;
        }
        return buffer;
    }

    /**
     * Returns a leased buffer to the pool. Any thread; O(1) on the owner, lock-free elsewhere; no allocation.
     * Detects a buffer that is free, not a stale reference to one leased again (see the class comment and
     * {@link #release(Buffer, int)}).
     *
     * @param buffer a buffer leased from this pool
     * @throws IllegalArgumentException if the buffer belongs to another pool
     * @throws IllegalStateException    if it is not leased (released twice), or the pool is closed
     */
    public void release(Buffer buffer) {
        checkRelease(buffer);
        if (!buffer.markFree()) {
            throw new IllegalStateException("buffer " + buffer.id() + " released twice (it is not leased)");
        }
        pushFree(buffer);
    }

    /**
     * Returns a buffer if {@code generation} (its {@link Buffer#generation()} read when it was leased) is its
     * current lease: a release through a stale reference, after the buffer was released and leased again, is
     * refused and the new holder keeps it. Any thread; no allocation.
     *
     * @param buffer a buffer leased from this pool
     * @param generation its {@link Buffer#generation()} as read when it was leased
     * @throws IllegalArgumentException if the buffer belongs to another pool
     * @throws IllegalStateException    if it is not leased under {@code generation}, or the pool is closed
     */
    public void release(Buffer buffer, int generation) {
        checkRelease(buffer);
        if (!buffer.markFree(generation)) {
            throw new IllegalStateException("buffer " + buffer.id() + " release of lease " + generation
                    + " refused: it is " + (buffer.isLeased() ? "leased under " + buffer.generation() : "free"));
        }
        pushFree(buffer);
    }

    private void checkRelease(Buffer buffer) {
        Objects.requireNonNull(buffer, "buffer");
        if (buffer.pool() != this) {
            throw new IllegalArgumentException("buffer " + buffer.id() + " belongs to another pool");
        }
        checkOpen();
    }

    private void pushFree(Buffer buffer) {
        int id = buffer.id();
        int c = buffer.sizeClass();
        if (Thread.currentThread() == owner) {
            next[id] = freeHead[c];
            freeHead[c] = id;
            freeCount[c]++;
        } else {
            pushReturn(c, id);
        }
    }

    /** {@return the number of size classes} Any thread. */
    public int sizeClassCount() {
        return bufferSizes.length;
    }

    /**
     * {@return the buffer size of class {@code sizeClassIndex}} Any thread.
     *
     * @param sizeClassIndex index of the size class
     */
    public int bufferSize(int sizeClassIndex) {
        checkClass(sizeClassIndex);
        return bufferSizes[sizeClassIndex];
    }

    /**
     * {@return the number of buffers in class {@code sizeClassIndex}} Any thread.
     *
     * @param sizeClassIndex index of the size class
     */
    public int bufferCount(int sizeClassIndex) {
        checkClass(sizeClassIndex);
        return config.classes().get(sizeClassIndex).count();
    }

    /** {@return the number of buffers in the pool; ids are {@code 0 .. totalBuffers() - 1}} Any thread. */
    public int totalBuffers() {
        return buffers.length;
    }

    /**
     * {@return the buffer with the given id, leased or not: maps an id reported by the kernel or a peer back to its
     * buffer} Any thread; does not lease it.
     *
     * @param id a buffer id in {@code [0, totalBuffers())}
     */
    public Buffer buffer(int id) {
        if (id < 0 || id >= buffers.length) {
            throw new IllegalArgumentException("buffer id must be in [0, " + buffers.length + "), got " + id);
        }
        return buffers[id];
    }

    /**
     * {@return the smallest class whose buffers hold {@code capacity} bytes, or -1 if none does} Any thread.
     *
     *
     * @param capacity bytes the buffer must hold
     * @throws IllegalArgumentException if {@code capacity <= 0}
     */
    public int sizeClassFor(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be > 0, got " + capacity);
        }
        return capacity > maxBufferSize ? -1 : classForLog2[ceilLog2(capacity)];
    }

    /**
     * {@return the region covering the slab of class {@code sizeClassIndex}: register it with io_uring as a fixed
     * buffer, or give its key to a peer} Any thread.
     *
     *
     * @param sizeClassIndex index of the size class
     * @throws IllegalStateException after {@link #close()}
     */
    public MemoryRegion slabRegion(int sizeClassIndex) {
        checkOpen();
        checkClass(sizeClassIndex);
        return slabRegions[sizeClassIndex];
    }

    /** {@return the registry the slabs are registered in} Any thread. */
    public MemoryRegistry registry() {
        return registry;
    }

    /** {@return the configuration the pool was built from} Any thread. */
    public PoolConfig config() {
        return config;
    }

    /**
     * {@return a snapshot of the counters; exact on the owner thread, see {@link PoolStats}} Any thread, also after
     * close.
     */
    public PoolStats stats() {
        List<PoolStats.ClassStats> classes = new ArrayList<>(bufferSizes.length);
        long pendingReturns = 0;
        for (int c = 0; c < bufferSizes.length; c++) {
            int pending = (int) (returnStacks[c].get() >>> 32);
            int count = config.classes().get(c).count();
            int available = freeCount[c] + pending;
            pendingReturns += pending;
            classes.add(new PoolStats.ClassStats(bufferSizes[c], count, count - available, available, misses[c]));
        }
        return new PoolStats(classes, exhaustedLeases, drainedReturns + pendingReturns);
    }

    /**
     * Deregisters the slabs and frees their memory; every buffer's segment becomes inaccessible. Call it once
     * no I/O uses the buffers. Later leases, releases and {@link #slabRegion} throw
     * {@link IllegalStateException}; a second close does nothing.
     *
     * @throws IllegalStateException if a slab is {@linkplain MemoryRegion#pin() pinned}: some of its memory
     *                               is lent to the kernel (nothing is closed then; close again once it
     *                               came back)
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            // Shut every slab's pins first, atomically with the check, so no pin can land between the
            // check and the free; a refused close opens them again and changes nothing.
            for (int c = 0; c < slabRegions.length; c++) {
                int pinned = slabRegions[c].closePins();
                if (pinned != 0) {
                    for (int k = 0; k < c; k++) {
                        slabRegions[k].reopenPins();
                    }
                    throw new IllegalStateException("buffer pool not closed: the slab of " + bufferSizes[c]
                            + "-byte buffers is pinned " + pinned + " time(s), lent to the kernel (a buffer ring,"
                            + " a fixed buffer or a placement in flight): " + slabRegions[c]);
                }
            }
            closed = true;
        }
        releaseMemory();
    }

    /** {@return whether {@link #close()} has been called} Any thread. */
    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "BufferPool[classes=" + bufferSizes.length + ", buffers=" + buffers.length
                + ", bytes=" + config.totalBytes() + (closed ? ", closed" : "") + "]";
    }

    private Buffer pop(int c) {
        int id = freeHead[c];
        if (id == NIL) {
            id = takeReturns(c);
            if (id == NIL) {
                misses[c]++;
                return null;
            }
        }
        freeHead[c] = next[id];
        freeCount[c]--;
        Buffer buffer = buffers[id];
        buffer.markLeased();
        return buffer;
    }

    /** Moves class {@code c}'s return stack onto its (empty) free list in O(1); returns the new head. */
    private int takeReturns(int c) {
        AtomicLong stack = returnStacks[c];
        if (stack.get() == EMPTY_STACK) { // volatile read spares the locked exchange while nothing came back
            return NIL;
        }
        long head = stack.getAndSet(EMPTY_STACK); // acquire: the links each releaser wrote before its CAS are visible
        int top = (int) head;
        int depth = (int) (head >>> 32);
        freeHead[c] = top;
        freeCount[c] = depth;
        drainedReturns += depth;
        return top;
    }

    /**
     * Pushes {@code id} on class {@code c}'s return stack. Lock-free: a CAS fails only when another push
     * succeeded. No ABA hazard although the head carries no version: the only pop is the owner's
     * {@code getAndSet} of the whole stack, so a head that reads the same id again is again a valid top
     * whose link this push may extend.
     */
    private void pushReturn(int c, int id) {
        AtomicLong stack = returnStacks[c];
        long head;
        long pushed;
        do {
            head = stack.get();
            next[id] = (int) head; // plain: published by the CAS below (release)
            pushed = (((head >>> 32) + 1) << 32) | (id & 0xFFFF_FFFFL);
        } while (!stack.compareAndSet(head, pushed));
    }

    private void checkOwner() {
        checkOpen();
        if (owner != Thread.currentThread()) {
            bindOwnerSlowPath();
        }
    }

    private void bindOwnerSlowPath() {
        Thread current = Thread.currentThread();
        Thread bound = (Thread) OWNER.compareAndExchange(this, (Thread) null, current);
        if (bound != null && bound != current) {
            throw new IllegalStateException("only the owner thread " + bound.getName() + " may lease from this pool;"
                    + " called on " + current.getName() + " (release from any thread is fine)");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("buffer pool is closed");
        }
    }

    private void checkClass(int sizeClassIndex) {
        if (sizeClassIndex < 0 || sizeClassIndex >= bufferSizes.length) {
            throw new IllegalArgumentException(
                    "size class index must be in [0, " + bufferSizes.length + "), got " + sizeClassIndex);
        }
    }

    private void releaseMemory() {
        for (MemoryRegion region : slabRegions) {
            if (region != null && region.isValid()) {
                registry.deregister(region);
            }
        }
        arena.close();
    }

    /**
     * A page, or the buffer size up to 2 MiB so every buffer is aligned to {@code min(size, 2 MiB)}; 2 MiB for
     * a slab of 2 MiB or more, so transparent huge pages can back it.
     */
    static long slabAlignment(int bufferSize, long slabBytes) {
        return slabBytes >= HUGE_PAGE ? HUGE_PAGE : Math.max(PAGE, bufferSize);
    }

    /** log2 of the smallest power of two >= {@code value}, for value in [1, 2^30]. */
    private static int ceilLog2(int value) {
        return 32 - Integer.numberOfLeadingZeros(value - 1);
    }
}
