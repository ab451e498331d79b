package io.zcnet.ring.nio;

import io.zcnet.buffer.Buffer;
import io.zcnet.buffer.BufferPool;
import io.zcnet.ring.BufferRing;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * The NIO engine's provided-buffer ring: the kernel's {@code io_uring_buf_ring} discipline kept in user
 * space. Free buffer ids wait in a FIFO; a multishot receive {@link #peek peeks} at the head, reads into
 * that buffer and {@link #commit commits} it only when data arrived (as {@code kbuf.c} consumes a ring
 * entry only for a completed receive); {@link #recycle} appends at the tail, so buffers are used in the
 * order they are given back, as with the kernel ring.
 *
 * <p>Each buffer's {@link MemorySegment} slice and {@link ByteBuffer} view are created once, here, so
 * receiving into the ring allocates nothing.
 *
 * <p>Owner-thread only, like the {@link NioEventLoop} that created it. A buffer id is in exactly one of
 * two states, in the FIFO or with the application; recycling an id that is already in the FIFO is a
 * bug that would let two completions share a buffer, so it is rejected with
 * {@link IllegalStateException}.
 */
public final class NioBufferRing implements BufferRing {
    /** The kernel's limit on buffer-ring entries ({@code io_register_pbuf_ring}: {@code ring_entries} < 65536, a power of two). */
    static final int MAX_ENTRIES = 32768;

    private final NioEventLoop loop;
    private final int groupId;
    private final int bufferSize;
    private final int mask;
    private final Buffer[] leased;
    private final MemorySegment[] segments;
    private final ByteBuffer[] views;
    private final int[] fifo;
    private final boolean[] inFifo;
    private int head;
    private int tail;
    private int armedReceives;
    private boolean closed;

    private NioBufferRing(NioEventLoop loop, int groupId, int bufferSize, Buffer[] leased) {
        this.loop = loop;
        this.groupId = groupId;
        this.bufferSize = bufferSize;
        this.leased = leased;
        int count = leased.length;
        this.mask = count - 1;
        this.segments = new MemorySegment[count];
        this.views = new ByteBuffer[count];
        this.fifo = new int[count];
        this.inFifo = new boolean[count];
        for (int bid = 0; bid < count; bid++) {
            segments[bid] = leased[bid].segment().asSlice(0, bufferSize);
            views[bid] = segments[bid].asByteBuffer();
            fifo[bid] = bid;
            inFifo[bid] = true;
        }
        this.tail = count;
    }

    /** Validates the arguments and leases {@code count} buffers of at least {@code bufferSize} bytes. */
    static NioBufferRing create(NioEventLoop loop, int groupId, BufferPool pool, int count, int bufferSize)
            throws IOException {
        if (groupId < 0 || groupId > 0xFFFF) {
            throw new IllegalArgumentException("groupId must be in [0, 65535] (a u16 bgid), got " + groupId);
        }
        if (pool == null) {
            throw new IllegalArgumentException("pool is null");
        }
        if (count < 1 || count > MAX_ENTRIES || Integer.bitCount(count) != 1) {
            throw new IllegalArgumentException(
                    "count must be a power of two in [1, " + MAX_ENTRIES + "], got " + count);
        }
        if (bufferSize <= 0) {
            throw new IllegalArgumentException("bufferSize must be > 0, got " + bufferSize);
        }
        if (pool.sizeClassFor(bufferSize) < 0) {
            throw new IllegalArgumentException("bufferSize " + bufferSize + " is larger than every size class of "
                    + pool);
        }
        Buffer[] leased = new Buffer[count];
        for (int i = 0; i < count; i++) {
            leased[i] = pool.lease(bufferSize);
            if (leased[i] == null) {
                for (int j = 0; j < i; j++) {
                    leased[j].release();
                }
                throw new IOException("buffer pool exhausted: got " + i + " of " + count + " buffers of "
                        + bufferSize + " bytes for buffer group " + groupId);
            }
        }
        return new NioBufferRing(loop, groupId, bufferSize, leased);
    }

    @Override
    public int groupId() {
        return groupId;
    }

    @Override
    public int bufferCount() {
        return leased.length;
    }

    @Override
    public int bufferSize() {
        return bufferSize;
    }

    @Override
    public MemorySegment buffer(int bufferId) {
        checkId(bufferId);
        return segments[bufferId];
    }

    @Override
    public void recycle(int bufferId) {
        checkOpen();
        checkId(bufferId);
        if (inFifo[bufferId]) {
            throw new IllegalStateException("buffer " + bufferId + " of group " + groupId
                    + " recycled twice: it is already available to the engine");
        }
        inFifo[bufferId] = true;
        fifo[tail++ & mask] = bufferId;
    }

    @Override
    public int available() {
        return tail - head;
    }

    /** Whether {@link #close()} ran. */
    public boolean isClosed() {
        return closed;
    }

    /** The buffer id at the head of the FIFO, or -1 when the ring is empty ({@code -ENOBUFS}). */
    int peek() {
        return head == tail ? -1 : fifo[head & mask];
    }

    /** Hands the head buffer to the application: it received data. */
    void commit() {
        inFifo[fifo[head++ & mask]] = false;
    }

    /** The buffer's cached view, reset to its whole length. */
    ByteBuffer view(int bufferId) {
        return views[bufferId].clear();
    }

    boolean belongsTo(NioEventLoop owner) {
        return loop == owner;
    }

    void armed() {
        armedReceives++;
    }

    void disarmed() {
        armedReceives--;
    }

    /**
     * Returns every buffer to the pool (those still held by the application too: it must be done with
     * them) and forgets the group. Calling it again does nothing.
     *
     * @throws IllegalStateException if a multishot receive is still armed on this ring
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (armedReceives > 0) {
            throw new IllegalStateException("buffer group " + groupId + " is still used by " + armedReceives
                    + " armed multishot receive(s); cancel them first");
        }
        closed = true;
        loop.forgetRing(this);
        BufferPool pool = leased[0].pool();
        // A pool closed first has freed the memory already; there is nothing left to give back.
        if (!pool.isClosed()) {
            for (Buffer buffer : leased) {
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

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("buffer group " + groupId + " is closed");
        }
    }

    @Override
    public String toString() {
        return "NioBufferRing[group=" + groupId + ", buffers=" + leased.length + "x" + bufferSize
                + ", available=" + available() + ", armed=" + armedReceives + (closed ? ", closed" : "") + "]";
    }
}
