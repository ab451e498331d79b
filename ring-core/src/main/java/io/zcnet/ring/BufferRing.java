package io.zcnet.ring;

import java.lang.foreign.MemorySegment;

/**
 * A group of provided buffers that {@link EventLoop#recvMultishot} fills in an order the engine picks
 * (io_uring: a registered {@code io_uring_buf_ring}; NIO: the same discipline in user space). Buffers
 * are leased from a {@code BufferPool} when the ring is created and given back when it is closed.
 *
 * <p>Owner-thread only, like its loop. A buffer handed to a handler (by the buffer id in the completion
 * flags) belongs to the application until {@link #recycle}; a recycled buffer is visible to the engine
 * at the next submission.
 */
public interface BufferRing extends AutoCloseable {

    /** The buffer group id ({@code bgid}) given at creation. */
    int groupId();

    /** Number of buffers in the ring (a power of two). */
    int bufferCount();

    /** Capacity of each buffer in bytes. */
    int bufferSize();

    /** The whole buffer with id {@code bufferId}; a completion's data is its first {@code result} bytes. */
    MemorySegment buffer(int bufferId);

    /** Gives buffer {@code bufferId} back to the engine. */
    void recycle(int bufferId);

    /** Buffers currently available to the engine. */
    int available();

    /** Unregisters the ring and returns its buffers to the pool; no receive may still use it. */
    @Override
    void close();
}
