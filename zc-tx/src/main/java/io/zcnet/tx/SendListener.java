package io.zcnet.tx;

/**
 * What a {@link FrameSender} tells its connection, on the event loop's thread.
 */
public interface SendListener {

    /**
     * Every frame whose token is at most {@code token} has left: its bytes are with the kernel and, for a
     * zero-copy send, the kernel's notification said it no longer reads the payload. Its memory may be
     * reused. Tokens are reported in order, each at most once.
     *
     * @param token the newest token whose frame, and every earlier one, has left
     */
    void onSent(long token);

    /** An {@link FrameSender#offer} answered back-pressure earlier, and there is room again. */
    void onWritable();

    /**
     * The connection cannot send any more ({@code errno} from the kernel, e.g. {@code EPIPE},
     * {@code ECONNRESET}): frames not reported by {@link #onSent} did not all reach the peer. Called once.
     *
     * @param errno the kernel's errno
     */
    void onFailed(int errno);
}
