package io.zcnet.ring;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A connected socket that one event loop let go of ({@link EventLoop#detach}) and that another loop of the same
 * engine may take ({@link EventLoop#adopt}): how a connection accepted on one loop thread goes on to be served by
 * another. It names the socket, not a loop's handle for it (the fd on io_uring, the channel on NIO), and belongs to
 * nobody until it is adopted: exactly one adopt takes it, and {@link #close()} closes a socket nobody took (a loop
 * that closed before it could). Safe to hand between threads: the detaching loop's writes happen-before whatever
 * the adopting loop does with it when it is passed through a task queue ({@link EventLoop#execute}).
 *
 * <p>Sealed: each engine has its own kind, and a loop adopts only its own engine's.
 */
public abstract sealed class DetachedSocket implements AutoCloseable
        permits io.zcnet.ring.uring.DetachedFd, io.zcnet.ring.nio.DetachedChannel {
    /** Set by the one adopt or close that takes the socket. */
    private final AtomicBoolean taken = new AtomicBoolean();

    /** For the engines only. */
    protected DetachedSocket() {
    }

    /** {@return the engine whose loops may adopt it} */
    public abstract EngineKind engine();

    /**
     * Takes the socket for an adopting loop: true for the first caller only (volatile CAS), so two loops never
     * own one socket.
     *
     * @return whether the caller now owns the socket
     */
    protected final boolean take() {
        return taken.compareAndSet(false, true);
    }

    /** Closes the socket, which nobody adopted: the engine's system call, made once. */
    protected abstract void closeUnadopted();

    /** Closes the socket unless a loop adopted it; idempotent. Any thread. */
    @Override
    public final void close() {
        if (take()) {
            closeUnadopted();
        }
    }
}
