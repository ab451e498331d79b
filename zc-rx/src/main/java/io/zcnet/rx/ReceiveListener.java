package io.zcnet.rx;

/**
 * What a {@link FrameReceiver} tells the connection's owner, on the event loop's thread.
 */
public interface ReceiveListener {

    /**
     * Frames were placed in this turn: the assembler may have new completions to poll (and, after
     * polling, {@code resumeCompletions} to call).
     */
    void onReceived();

    /** The peer closed the stream at a frame boundary; nothing more will be received. Called once. */
    void onClosed();

    /**
     * The connection cannot receive any more, said once. {@code frameError} is the assembler's
     * {@code FrameError} when the stream broke the protocol (the queue pair is then in ERROR), or 0 when
     * the stream itself failed: {@code errno} from the kernel, or 0 for EOF in the middle of a frame.
     * {@code reason} is one line for logs.
     *
     * @param frameError the assembler's {@code FrameError}, or 0 when the stream itself failed
     * @param errno the kernel's errno, or 0
     * @param reason one line for logs
     */
    void onFailed(int frameError, int errno, String reason);
}
