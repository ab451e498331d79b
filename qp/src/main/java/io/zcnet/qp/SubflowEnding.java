package io.zcnet.qp;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.EventLoop;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The graceful end of one subflow's socket, after its last frame was handed to the kernel: a FIN behind
 * that frame ({@code shutdown(SHUT_WR)}), then whatever the peer still sends is read and dropped until its
 * own FIN, and only then the socket is closed. Closing at once would be wrong: a socket closed with unread
 * bytes sends a reset, and a reset throws away what it had not sent yet, so the last frame (the final
 * ACKNOWLEDGE or NAK) could be lost. A deadline bounds the wait for a peer that never closes.
 *
 * <p>Owner thread of the loop; allocates (a handler and a small drain buffer) once per ending, never on the
 * data path.
 */
final class SubflowEnding implements CompletionHandler {
    private static final int TAG_SHUTDOWN = 1;
    private static final int TAG_DRAIN = 2;
    private static final int TAG_DEADLINE = 3;
    private static final int TAG_CLOSE = 4;
    private static final int DRAIN_BYTES = 16 << 10;

    private final EventLoop loop;
    private final int socket;
    private final Runnable ended;
    private final int handlerId;
    // Confined: made, used and closed on the loop thread alone, so its close costs no handshake with other threads.
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment drain = arena.allocate(DRAIN_BYTES);
    private final long deadline;
    private boolean halfClosed;
    private boolean closing;
    private boolean finished;

    /**
     * Starts the deadline; the caller says {@link #lastFrameSent()} (or {@link #abandon()}) next.
     *
     * @param lingerNanos how long the whole ending may take
     * @param ended       run once the socket is closed and nothing of this ending is in flight
     */
    SubflowEnding(EventLoop loop, int socket, long lingerNanos, Runnable ended) {
        this.loop = loop;
        this.socket = socket;
        this.ended = ended;
        this.handlerId = loop.registerHandler(this);
        this.deadline = loop.timeout(handlerId, TAG_DEADLINE, lingerNanos);
    }

    /** Everything the subflow had to send is in the kernel: half-close behind it. */
    void lastFrameSent() {
        if (!halfClosed && !closing) {
            halfClosed = true;
            loop.shutdown(handlerId, TAG_SHUTDOWN, socket, EventLoop.SHUT_WR);
        }
    }

    /** Nothing more can be sent (the sender failed): close now. */
    void abandon() {
        closeNow();
    }

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        switch (tag) {
            case TAG_SHUTDOWN, TAG_DRAIN -> {
                if (result > 0 || tag == TAG_SHUTDOWN && result == 0) {
                    if (!closing) {
                        loop.recv(handlerId, TAG_DRAIN, socket, drain, 0, DRAIN_BYTES, 0);
                    }
                } else {
                    closeNow(); // the peer's FIN (0), or the connection broke
                }
            }
            case TAG_DEADLINE -> closeNow();
            default -> { } // the close, or a cancel's own result
        }
        finishWhenIdle();
    }

    private void closeNow() {
        if (closing) {
            return;
        }
        closing = true;
        loop.cancel(handlerId, 0, deadline);
        loop.close(handlerId, TAG_CLOSE, socket);
    }

    private void finishWhenIdle() {
        if (!closing || finished || loop.inFlight(handlerId) > 0) {
            return;
        }
        finished = true;
        loop.unregisterHandler(handlerId);
        arena.close();
        ended.run();
    }
}
