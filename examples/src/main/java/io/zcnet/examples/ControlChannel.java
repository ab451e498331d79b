package io.zcnet.examples;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * One side's control messages on a bulk queue pair ({@link BulkProtocol}): a small region whose first
 * {@link BulkProtocol#LARGE} bytes hold what this side sends and whose next ones take its control receive,
 * and the wait for a given message. The calling thread only.
 */
final class ControlChannel {
    /** Work request id of every control SEND and control receive; data ids are never negative. */
    static final long CONTROL = -1;
    /** How long a peer may take to answer a control message. */
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final long OUT = 0;
    static final long IN = BulkProtocol.LARGE;

    private final QueuePair qp;
    private final MemoryRegion region;
    private final WorkRequest wr = new WorkRequest();
    private final WorkCompletion wc = new WorkCompletion();

    ControlChannel(QueuePair qp, RegionArena memory) {
        this.qp = qp;
        this.region = memory.register(2L * BulkProtocol.LARGE);
    }

    MemorySegment memory() {
        return region.segment();
    }

    int localKey() {
        return region.localKey();
    }

    /** Posts the control receive (at {@link #IN}). */
    void postReceive() throws IOException {
        if (!qp.postReceive(CONTROL, region.localKey(), IN, BulkProtocol.LARGE)) {
            throw new IOException("the receive queue is full: cannot post the control receive");
        }
    }

    /** Sends the {@code length} bytes at {@link #OUT} as control message {@code type}. */
    void send(int type, int length) throws IOException {
        if (!qp.postSend(wr.sendWithImmediate(CONTROL, region.localKey(), OUT, length, type))) {
            throw new IOException("the send queue is full: cannot send " + name(type));
        }
    }

    /**
     * Waits for control message {@code type} in the control receive and returns its length; completions of
     * this side's own control SENDs are passed over.
     */
    int await(int type) throws IOException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            next(deadline, name(type) + " from the peer");
            if (!wc.isSuccess()) {
                throw failure(qp, wc);
            }
            if (wc.opcode() == WorkCompletion.OP_RECV && wc.hasImmediate() && wc.immediate() == type) {
                return wc.byteCount();
            }
            if (wc.opcode() != WorkCompletion.OP_SEND || wc.workRequestId() != CONTROL) {
                throw new IOException("expected " + name(type) + " from the peer, got " + wc);
            }
        }
    }

    /**
     * Waits until this side's last control SEND, the last message of the run, completed, or the queue pair
     * failed: its receiver closes as soon as it has it, and may close before its acknowledgement left (a
     * receiver that did not get it says so itself).
     */
    void awaitLastSent() throws IOException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        do {
            next(deadline, "acknowledgement of the last control message");
        } while (wc.isSuccess() && (wc.opcode() != WorkCompletion.OP_SEND || wc.workRequestId() != CONTROL));
    }

    /** The next completion, before {@code deadline}. */
    private void next(long deadline, String what) throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !qp.await(wc, Duration.ofNanos(left))) {
            throw new IOException("no " + what + " within " + TIMEOUT.toSeconds() + " s");
        }
    }

    /** A failed completion as one line: what failed, its status, and why the queue pair went to ERROR. */
    static IOException failure(QueuePair qp, WorkCompletion wc) {
        String what = wc.workRequestId() == CONTROL ? "control " + WorkCompletion.opcodeName(wc.opcode())
                : WorkCompletion.opcodeName(wc.opcode()) + " " + wc.workRequestId();
        String reason;
        try {
            reason = qp.statistics().errorReason();
        } catch (IllegalStateException loopGone) {
            reason = null;
        }
        return new IOException(what + " failed: " + WorkCompletion.statusName(wc.status())
                + (reason == null ? "" : " (" + reason + ")"));
    }

    static String name(int type) {
        return switch (type) {
            case BulkProtocol.HELLO -> "HELLO";
            case BulkProtocol.READY -> "READY";
            case BulkProtocol.DONE -> "DONE";
            case BulkProtocol.RESULT -> "RESULT";
            default -> "control message " + type;
        };
    }
}
