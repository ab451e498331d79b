package io.zcnet.ring;

import io.zcnet.buffer.Buffer;
import io.zcnet.buffer.BufferPool;
import io.zcnet.ring.sys.BufRingLayout;

import java.io.IOException;
import java.lang.foreign.MemorySegment;

/**
 * What both engines' buffer rings share: the argument rules, the buffers leased from a
 * {@link BufferPool}, and which buffer ids the application holds. An id is with the engine (in the
 * ring) or with the application, from the completion that handed it out ({@link #handOut}) until
 * {@link BufferRing#recycle} gives it back ({@link #takeBack}); giving back an id the application does
 * not hold is an {@link IllegalStateException}, since two completions would then share a buffer.
 * {@link #available()} is derived from that, without asking the kernel.
 *
 * <p>Owner-thread only, like the {@link EventLoop} that creates it: {@link #takeBack} (so every
 * {@code recycle}) and {@link #checkClosable} throw {@link IllegalStateException} on another thread, since
 * the ring is the kernel's to read (io_uring's {@code SINGLE_ISSUER} refuses to unregister it from another
 * task). A ring counts the multishot receives armed on it, from preparation to their final completion,
 * so that it is never closed while one may still take a buffer. Each buffer it leases holds a
 * {@linkplain io.zcnet.buffer.MemoryRegion#pin() pin} on its pool's slab until the ring gives it back, so
 * the pool cannot free memory the kernel may still write ({@link io.zcnet.buffer.BufferPool#close()}
 * refuses); a ring {@linkplain #abandon() abandoned} to the kernel keeps its pins for good. Sealed: the
 * two engines' rings are its only subclasses; users only see {@link BufferRing}.
 */
public abstract sealed class AbstractBufferRing implements BufferRing
        permits io.zcnet.ring.uring.UringBufferRing, io.zcnet.ring.nio.NioBufferRing {
    private final EventLoop loop;
    private final int groupId;
    private final int bufferSize;
    private final Buffer[] leased;
    private final MemorySegment[] segments;
    /** Bit {@code id} set: the application holds buffer {@code id}. */
    private final long[] held;
    private int heldCount;
    /** Multishot receives prepared on this ring whose final completion (no MORE) is not dispatched yet. */
    private int armedReceives;
    private boolean closed;

    /**
     * Validates the arguments and leases {@code count} buffers of at least {@code bufferSize} bytes; on
     * failure gives back what it leased.
     *
     * @throws IOException if the pool cannot lend {@code count} such buffers
     */
    protected AbstractBufferRing(EventLoop loop, int groupId, BufferPool pool, int count, int bufferSize)
            throws IOException {
        if (groupId < 0 || groupId > 0xFFFF) {
            throw new IllegalArgumentException("groupId must be in [0, 65535] (a u16 bgid), got " + groupId);
        }
        if (pool == null) {
            throw new IllegalArgumentException("pool is null");
        }
        if (count < 1 || count > BufRingLayout.MAX_ENTRIES || Integer.bitCount(count) != 1) {
            throw new IllegalArgumentException("count must be a power of two in [1, " + BufRingLayout.MAX_ENTRIES + "], got " + count);
        }
        if (bufferSize <= 0) {
            throw new IllegalArgumentException("bufferSize must be > 0, got " + bufferSize);
        }
        if (pool.sizeClassFor(bufferSize) < 0) {
            throw new IllegalArgumentException("bufferSize " + bufferSize + " is larger than every size class of " + pool);
        }
        this.loop = loop;
        this.groupId = groupId;
        this.bufferSize = bufferSize;
        this.leased = new Buffer[count];
        this.segments = new MemorySegment[count];
        this.held = new long[(count + 63) >>> 6];
        for (int i = 0; i < count; i++) {
            Buffer buffer = pool.lease(bufferSize);
            if (buffer == null) {
                releaseBuffers();
                throw new IOException("buffer pool exhausted: got " + i + " of " + count + " buffers of "
                        + bufferSize + " bytes for buffer group " + groupId);
            }
            if (!buffer.region().pin()) { // unreachable while the lease succeeded: the pool is open
                buffer.release();
                releaseBuffers();
                throw new IllegalStateException("buffer pool slab deregistered while leasing: " + pool);
            }
            leased[i] = buffer;
            segments[i] = buffer.segment().asSlice(0, bufferSize);
        }
    }

    @Override
    public final int groupId() {
        return groupId;
    }

    @Override
    public final int bufferCount() {
        return leased.length;
    }

    @Override
    public final int bufferSize() {
        return bufferSize;
    }

    @Override
    public final MemorySegment buffer(int bufferId) {
        checkId(bufferId);
        return segments[bufferId];
    }

    /** Buffers not held by the application, as of the last completion the loop dispatched; 0 once closed. */
    @Override
    public final int available() {
        return closed ? 0 : leased.length - heldCount;
    }

    /** {@return whether {@link #close()} ran} */
    public final boolean isClosed() {
        return closed;
    }

    /** Whether {@code owner} created this ring. */
    final boolean belongsTo(EventLoop owner) {
        return loop == owner;
    }

    /** A multishot receive was prepared on this ring: it may take buffers until its final completion. */
    protected final void receiveArmed() {
        armedReceives++;
    }

    /** A multishot receive on this ring posted its final completion. */
    protected final void receiveDisarmed() {
        armedReceives--;
    }

    /** Throws unless the caller is the owner thread of the loop that created this ring. */
    protected final void checkOwner() {
        if (!loop.inLoop()) {
            throw new IllegalStateException("buffer group " + groupId + " belongs to its event loop's thread; called from "
                    + Thread.currentThread().getName() + " (use the loop's execute())");
        }
    }

    /**
     * The checks every {@code close()} starts with, once it knows the ring is open.
     *
     * @throws IllegalStateException off the owner thread, or while a multishot receive is armed on the ring
     */
    protected final void checkClosable() {
        checkOwner();
        if (armedReceives > 0) {
            throw new IllegalStateException("buffer group " + groupId + " is still used by " + armedReceives
                    + " armed multishot receive(s): cancel them and wait for their final completion first");
        }
    }

    /** A completion hands buffer {@code bufferId} to the application. */
    protected final void handOut(int bufferId) {
        long bit = 1L << bufferId;
        int word = bufferId >>> 6;
        if ((held[word] & bit) == 0) {
            held[word] |= bit;
            heldCount++;
        }
    }

    /**
     * The application gives buffer {@code bufferId} back: the check every {@link #recycle} starts with.
     *
     * @throws IllegalArgumentException if the id is outside the ring
     * @throws IllegalStateException    off the owner thread, if the ring is closed, or if the application
     *                                  does not hold the buffer
     */
    protected final void takeBack(int bufferId) {
        checkOwner();
        if (closed) {
            throw new IllegalStateException("buffer group " + groupId + " is closed");
        }
        checkId(bufferId);
        long bit = 1L << bufferId;
        int word = bufferId >>> 6;
        if ((held[word] & bit) == 0) {
            throw new IllegalStateException("buffer " + bufferId + " of group " + groupId
                    + " recycled twice: it is already available to the engine");
        }
        held[word] &= ~bit;
        heldCount--;
    }

    /**
     * Marks the ring closed and returns every buffer to the pool, those the application still holds too
     * (it must be done with them), and with them their pins.
     *
     * @return false if the ring was closed already
     */
    protected final boolean markClosed() {
        if (closed) {
            return false;
        }
        closed = true;
        releaseBuffers();
        return true;
    }

    /**
     * Marks the ring closed without returning its buffers: the kernel may still write into them (or
     * read the ring), so they are leaked on purpose rather than lent to someone else.
     */
    protected final void abandon() {
        closed = true;
    }

    private void releaseBuffers() {
        for (int i = 0; i < leased.length; i++) {
            Buffer buffer = leased[i];
            if (buffer != null) {
                leased[i] = null;
                buffer.region().unpin();
                buffer.release();
            }
        }
    }

    private void checkId(int bufferId) {
        if (bufferId < 0 || bufferId >= leased.length) {
            throw new IllegalArgumentException("buffer id " + bufferId + " is outside group " + groupId + " [0, "
                    + leased.length + ")");
        }
    }

    /** Group, size and how many buffers the application holds, for subclasses' {@code toString()}. */
    protected final String describe() {
        return "group=" + groupId + " buffers=" + leased.length + "x" + bufferSize + "B held=" + heldCount
                + " armed=" + armedReceives + (closed ? " closed" : "");
    }
}
