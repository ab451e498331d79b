package io.zcnet.ring;

/**
 * Receives the completions of the operations submitted under one handler id.
 *
 * <p>Called only on the event loop's own thread, one completion at a time, in the order the engine
 * reaps them. A handler must not block; it may submit new operations on the same loop.
 *
 * <p>The arguments are those of a kernel CQE: {@code result} is a byte count, a socket handle or a
 * negative {@link Errno} value, and {@code flags} holds {@link CqeFlags}. The NIO engine produces the
 * very same values, so a handler cannot tell the engines apart.
 */
@FunctionalInterface
public interface CompletionHandler {

    /**
     * Takes one completion.
     *
     * @param op     the {@link Op} that completed
     * @param tag    the caller's tag given when the operation was submitted
     * @param result bytes, a socket handle, 0, or {@code -errno}
     * @param flags  {@link CqeFlags} bits (more to come, buffer id, zero-copy notification)
     */
    void onCompletion(int op, int tag, int result, int flags);
}
