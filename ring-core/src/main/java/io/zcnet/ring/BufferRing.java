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
 *
 * <p>Only {@link EventLoop#createBufferRing} makes one (the interface is sealed): an operation given a ring
 * must find the engine's own bookkeeping behind it.
 */
public sealed interface BufferRing extends AutoCloseable permits AbstractBufferRing {

    /** {@return the buffer group id ({@code bgid}) given at creation} */
    int groupId();

    /** {@return the number of buffers in the ring (a power of two)} */
    int bufferCount();

    /** {@return the capacity of each buffer in bytes} */
    int bufferSize();

    /**
     * {@return the whole buffer with id {@code bufferId}; a completion's data is its first {@code result} bytes}
     *
     * @param bufferId a buffer id from a completion's flags ({@link CqeFlags#bufferId})
     */
    MemorySegment buffer(int bufferId);

    /**
     * Gives buffer {@code bufferId} back to the engine.
     *
     * @param bufferId a buffer id the application holds
     * @throws IllegalStateException off the loop's thread, if the ring is closed, or if the application
     *                               does not hold the buffer (recycled twice)
     */
    void recycle(int bufferId);

    /** {@return how many buffers the engine has to fill now} */
    int available();

    /**
     * Unregisters the ring and returns its buffers to the pool, those the application still holds too.
     * Calling it again does nothing.
     *
     * <p>The rule, on both engines: a ring may be closed only when no multishot receive is armed on it,
     * that is once every {@link EventLoop#recvMultishot} on it has had its final completion (one without
     * {@link CqeFlags#MORE}); cancel the receives (or close their sockets) and wait for that first. So no
     * completion can hand out a buffer of a closed ring; should the kernel post one anyway, the loop
     * delivers it as {@code -ECANCELED} without {@link CqeFlags#BUFFER}. {@link EventLoop#close()} closes
     * the rings still open after it cancelled everything.
     *
     * @throws IllegalStateException off the loop's thread; while a multishot receive is armed on the ring;
     *                               or (io_uring) when the kernel refuses to unregister it, in which case
     *                               the ring and its buffers are leaked on purpose, as the kernel may still
     *                               use them
     */
    @Override
    void close();
}
