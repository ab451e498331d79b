package io.zcnet.qp;

import io.zcnet.framing.FrameError;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.Msn;
import io.zcnet.framing.NegativeAcknowledge;

import java.lang.foreign.Arena;

/**
 * The queue pair's state and its one way into ERROR, as rxe's {@code rxe_qp.c} moves a QP to its error state:
 * a protocol violation by the peer, a refused local key, a failed work request, a close, a fault of the loop, or
 * the loss of the last subflow all end here. Outstanding receives and work requests are then completed with
 * errors in posting order (the one that failed with its own status), and later posts are flushed. The peer learns
 * why from a {@link NegativeAcknowledge}, the last frame on every subflow, which also acknowledges what this side
 * completed; each subflow then ends gracefully ({@link SubflowEnding}). A NAK from the peer completes what it
 * acknowledges, fails the work request holding the message it names with the status verbs report for its
 * syndrome (REMOTE_ACCESS_ERROR, REMOTE_INVALID_REQUEST, REMOTE_OPERATIONAL_ERROR) and flushes the rest.
 *
 * <p>Owner thread of the loop, but for {@link #state()}, {@link #errorStatus()} and {@link #errorReason()}, which
 * any thread may read: the state is volatile, and the status and reason are written before it turns ERROR.
 */
final class FailurePath {
    private static final System.Logger LOG = System.getLogger("io.zcnet.qp");

    private final QpEngine engine;
    private final MessageAssembler assembler;
    private final SendLedger ledger;
    private final QpConfig config;
    private final ControlFrame nak;

    private volatile QpState state = QpState.RTS;
    // Written before state turns ERROR, whose volatile write publishes them to the threads that read it.
    private int errorStatus = -1;
    private String errorReason;

    FailurePath(QpEngine engine, Arena arena) {
        this.engine = engine;
        this.assembler = engine.assembler;
        this.ledger = engine.ledger;
        this.config = engine.config;
        this.nak = new ControlFrame(arena, engine.framing.icrcEnabled(), engine.icrc);
    }

    QpState state() {
        return state;
    }

    int errorStatus() {
        return errorStatus;
    }

    String errorReason() {
        return errorReason;
    }

    /**
     * What an entry of the loop into this queue pair threw (the user's completion listener, or a fault of zcnet's
     * own): fails this queue pair alone with {@link WorkCompletion#GENERAL_ERROR} naming it, where letting it
     * through would end the loop thread and every queue pair of the context with it. Only a virtual machine
     * error (out of memory, a stack overflow) goes on: nothing on this thread can be trusted after one.
     */
    void onFault(String where, Throwable t) {
        if (t instanceof VirtualMachineError fatal) {
            throw fatal;
        }
        if (state != QpState.ERROR) {
            LOG.log(System.Logger.Level.WARNING, "zcnet: a queue pair fails: " + where + " threw", t);
        }
        try {
            fail(WorkCompletion.GENERAL_ERROR, where + " threw " + t);
        } catch (RuntimeException | Error again) {
            t.addSuppressed(again);
            forceError(WorkCompletion.GENERAL_ERROR, where + " threw " + t + " (and failing then threw " + again + ")");
        }
    }

    /**
     * The context's loop thread died of {@code cause}: on that thread, before the loop closes, the queue pair
     * fails with {@link WorkCompletion#FATAL_ERROR}, flushing what it can; the loop may be past preparing
     * anything, so a failure to end the subflows only marks the state.
     */
    void loopDied(Throwable cause) {
        String reason = "the context's event loop died: " + cause;
        try {
            if (!engine.isClosed()) {
                end(WorkCompletion.FATAL_ERROR, reason, FrameError.OK, NegativeAcknowledge.NO_MESSAGE);
            }
        } catch (RuntimeException | Error again) {
            cause.addSuppressed(again);
        }
        forceError(WorkCompletion.FATAL_ERROR, reason);
    }

    /** ERROR without touching the loop or the rings: the last resort when failing the usual way threw. */
    private void forceError(int status, String reason) {
        if (state != QpState.ERROR) {
            errorStatus = status;
            errorReason = reason;
            state = QpState.ERROR;
            QueuePairStateEvent.emit(engine.token(), QpState.ERROR, status, reason);
        }
    }

    /**
     * Moves to ERROR for a reason of this side (a refused local key, a failed work request, close) or of
     * the transport: the peer hears it from a NAK on every subflow left.
     */
    void fail(int status, String reason) {
        end(status, reason, FrameError.QUEUE_PAIR_IN_ERROR, NegativeAcknowledge.NO_MESSAGE);
    }

    /**
     * The peer broke the protocol ({@code frameError}), or its NAK said it ended the queue pair: either way
     * the assembler knows which, and which message.
     */
    void onViolation(int frameError, String reason) {
        if (state == QpState.ERROR) {
            return;
        }
        int error = assembler.isInError() ? assembler.error() : frameError;
        if (error == FrameError.TERMINATED_BY_PEER) {
            onTerminatedByPeer();
            return;
        }
        end(WorkCompletion.TRANSPORT_ERROR, reason,
                NegativeAcknowledge.isValidSyndrome(error) ? error : FrameError.QUEUE_PAIR_IN_ERROR, assembler.failedMsn());
    }

    /**
     * The peer's NAK: what it acknowledged completes first, the work request holding the message it names
     * fails with the status verbs report for its syndrome, the rest is flushed. No NAK goes back.
     */
    private void onTerminatedByPeer() {
        int peerError = assembler.peerError();
        int msn = assembler.peerFailedMsn();
        engine.completer.retire();
        if (peerError == FrameError.QUEUE_PAIR_IN_ERROR) {
            end(WorkCompletion.FLUSH_ERROR, "the peer ended the queue pair (closed, or failed on its side)",
                    FrameError.OK, NegativeAcknowledge.NO_MESSAGE);
            return;
        }
        int status = switch (peerError) {
            case FrameError.REMOTE_ACCESS -> WorkCompletion.REMOTE_ACCESS_ERROR;
            case FrameError.LOCAL_PROTECTION -> WorkCompletion.REMOTE_OPERATIONAL_ERROR;
            default -> WorkCompletion.REMOTE_INVALID_REQUEST;
        };
        blame(msn, status);
        end(status, "the peer refused " + (msn == NegativeAcknowledge.NO_MESSAGE ? "a frame" : "MSN " + msn) + ": "
                + FrameError.name(peerError), FrameError.OK, NegativeAcknowledge.NO_MESSAGE);
    }

    /** Gives the work request holding {@code msn} (the oldest outstanding one when none is named) {@code status}. */
    void blame(int msn, int status) {
        for (long seq = ledger.head; seq < ledger.tail; seq++) {
            int i = ledger.slot(seq);
            if (!ledger.begun[i]) {
                return;
            }
            boolean holds = msn == NegativeAcknowledge.NO_MESSAGE || Msn.distance(ledger.firstMsn[i], msn) < ledger.messages[i];
            if (holds && ledger.kind[i] != SendLedger.READ_RESPONSE) {
                ledger.completeEarly(i, status);
                return;
            }
        }
    }

    /**
     * Moves to ERROR: ends every subflow, with a NAK of {@code syndrome} naming {@code failedMsn} as its last
     * frame unless the syndrome is {@link FrameError#OK}, and flushes what is outstanding, in posting order.
     */
    void end(int status, String reason, int syndrome, int failedMsn) {
        if (state == QpState.ERROR) {
            return;
        }
        errorStatus = status;
        errorReason = reason;
        // What arrived whole before the failure completes before ERROR shows: a thread that sees ERROR and then
        // polls finds those completions (the state is volatile, written after the ring's publish). Only the move:
        // resuming held-back completions may fail the queue pair, which must find this one already in ERROR.
        engine.completer.moveArrivals();
        state = QpState.ERROR;
        ControlFrame last = null;
        if (syndrome != FrameError.OK) {
            NegativeAcknowledge.write(nak.header(), assembler.acknowledgedMsn(), syndrome, failedMsn);
            nak.seal();
            last = nak;
        }
        engine.subflows.endAll(last, config.silenceTimeout().toNanos());
        if (!assembler.isInError()) {
            assembler.failTransport();
        }
        engine.harvest();
        engine.intake.takeReceives();
        QueuePairStateEvent.emit(engine.token(), QpState.ERROR, status, reason);
        engine.qp.failedWhileWaiting();
    }
}
