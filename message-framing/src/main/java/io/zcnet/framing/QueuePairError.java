package io.zcnet.framing;

/**
 * Whether the queue pair is in ERROR, why, and the flush that ERROR owes (ibv_poll_cq(3) flush semantics):
 * the message that failed gets its error status if it owns a receive, every other outstanding receive and
 * expected read completes with {@link CompletionStatus#FLUSH_ERROR}, in posting order. A flush hands
 * buffers back to the application, so while a direct placement is in flight (the kernel may still be
 * writing into one of them) it waits, and the end of the last placement emits it. Not thread-safe: owned by
 * one {@link MessageAssembler}.
 */
final class QueuePairError {

    private final MessageSlots slots;
    private final ReceiveQueue receives;
    private final ExpectedReads expectedReads;
    private final CompletionQueue completions;
    private final DirectPlacements placements;

    private int error = FrameError.OK;
    private boolean flushOwed;
    private long failedReceive = -1;
    private int failedStatus;
    private int failedOpcode = -1;
    private int failedMsn = -1;

    QueuePairError(MessageSlots slots, ReceiveQueue receives, ExpectedReads expectedReads, CompletionQueue completions,
                   DirectPlacements placements) {
        this.slots = slots;
        this.receives = receives;
        this.expectedReads = expectedReads;
        this.completions = completions;
        this.placements = placements;
    }

    boolean isSet() {
        return error != FrameError.OK;
    }

    /** The {@link FrameError} that moved the queue pair to ERROR, or {@link FrameError#OK}. */
    int code() {
        return error;
    }

    /** The MSN of the message that failed, or {@link NegativeAcknowledge#NO_MESSAGE}. */
    int failedMsn() {
        return failedMsn < 0 ? NegativeAcknowledge.NO_MESSAGE : failedMsn;
    }

    /** Whether the flush still waits for placements in flight (a receive posted now must queue behind it). */
    boolean owesFlush() {
        return flushOwed;
    }

    /**
     * Moves to ERROR with {@code code}: the message in {@code slot} (or -1 for none) failed, and
     * {@code receive} (or -1) is the receive it holds; flushes unless a placement is in flight.
     *
     * @return {@code code}
     */
    int fail(int code, int slot, long receive) {
        error = code;
        failedReceive = receive;
        failedStatus = FrameError.completionStatus(code);
        failedOpcode = slot >= 0 ? slots.finalOpcode(slot) : -1;
        failedMsn = slot >= 0 ? slots.msn(slot) : -1;
        flushOwed = true;
        flushIfIdle();
        return code;
    }

    /** Flushes what {@link #fail} owes unless a placement may still be writing into a receive or sink. */
    void flushIfIdle() {
        if (!flushOwed || placements.pending() > 0) {
            return;
        }
        flushOwed = false;
        while (receives.size() > 0) {
            long index = receives.consume();
            boolean failed = index == failedReceive;
            completions.offer(receives.workRequestId(index), failed ? failedStatus : CompletionStatus.FLUSH_ERROR,
                    failed ? failedOpcode : -1, 0, 0, failed ? failedMsn : -1);
        }
        while (expectedReads.size() > 0) {
            completions.offer(expectedReads.takeOldest(), CompletionStatus.FLUSH_ERROR, -1, 0, 0, -1);
        }
    }
}
