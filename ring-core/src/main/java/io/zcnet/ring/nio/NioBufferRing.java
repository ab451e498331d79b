package io.zcnet.ring.nio;

import io.zcnet.buffer.BufferPool;
import io.zcnet.ring.AbstractBufferRing;

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
 * {@link IllegalStateException}, as on io_uring.
 */
public final class NioBufferRing extends AbstractBufferRing {
    private final NioEventLoop loop;
    private final int mask;
    private final ByteBuffer[] views;
    private final int[] fifo;
    private int head;
    private int tail;

    /**
     * Leases {@code count} buffers of at least {@code bufferSize} bytes from {@code pool}.
     *
     * @throws IOException if the pool cannot lend that many
     */
    NioBufferRing(NioEventLoop loop, int groupId, BufferPool pool, int count, int bufferSize) throws IOException {
        super(loop, groupId, pool, count, bufferSize);
        this.loop = loop;
        this.mask = count - 1;
        this.views = new ByteBuffer[count];
        this.fifo = new int[count];
        for (int bid = 0; bid < count; bid++) {
            views[bid] = buffer(bid).asByteBuffer();
            loop.pinView(buffer(bid), views[bid]);
            fifo[bid] = bid;
        }
        this.tail = count;
    }

    /** @throws IllegalStateException if the application does not hold the buffer (recycled twice), or the ring is closed */
    @Override
    public void recycle(int bufferId) {
        takeBack(bufferId);
        fifo[tail++ & mask] = bufferId;
    }

    /** The buffer id at the head of the FIFO, or -1 when the ring is empty ({@code -ENOBUFS}). */
    int peek() {
        return head == tail ? -1 : fifo[head & mask];
    }

    /** Hands the head buffer to the application: it received data. */
    void commit() {
        handOut(fifo[head++ & mask]);
    }

    /** The buffer's cached view, reset to its whole length. */
    ByteBuffer view(int bufferId) {
        return views[bufferId].clear();
    }

    void armed() {
        receiveArmed();
    }

    void disarmed() {
        receiveDisarmed();
    }

    /**
     * Returns every buffer to the pool (those still held by the application too: it must be done with
     * them) and forgets the group. Calling it again does nothing.
     *
     * @throws IllegalStateException off the owner thread, or while a multishot receive is armed on this ring
     */
    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        checkClosable();
        markClosed();
        loop.forgetRing(this);
    }

    @Override
    public String toString() {
        return "NioBufferRing[" + describe() + "]";
    }
}
