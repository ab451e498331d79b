package io.zcnet.qp;

import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.framing.CompletionQueue;
import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Icrc;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.LoopSignal;
import io.zcnet.rx.DeferredFrames;

import java.lang.foreign.Arena;

/**
 * The loop-thread side of one queue pair: the entries through which the loop runs it, each of which hands the
 * work to the part whose role it is, as rdma-core's rxe splits a transport:
 * <ul>
 *   <li>{@link WorkIntake} takes work requests and receives from the rings the {@link QueuePair} shares with
 *       other threads;
 *   <li>{@link Requester} turns work requests into frames and hands them to the subflows {@link SubflowSet} picks,
 *       and sends again, on the others, what a failed subflow carried ({@link ResendQueue});
 *   <li>every subflow's receiver feeds the one {@link MessageAssembler}, which checks and places what arrives;
 *       {@link Responder} queues the READ responses this side owes, {@link AcknowledgePolicy} decides when an
 *       ACKNOWLEDGE (the cumulative MSN and credit limit) leaves;
 *   <li>{@link Completer} completes receives and work requests in posting order;
 *   <li>{@link Liveness} sends heartbeats, declares silent subflows dead, and fails a queue pair whose sends
 *       make no progress;
 *   <li>{@link FailurePath} holds the state and moves the queue pair to ERROR.
 * </ul>
 * Each entry catches what the parts throw and fails this queue pair alone ({@link FailurePath#onFault}). After
 * each batch of frames the engine moves arrivals and acknowledged work out ({@link #harvest}) and schedules one
 * ACKNOWLEDGE for the end of the loop turn.
 *
 * <p>Owner thread of the loop; nothing allocates per work request or frame.
 */
final class QpEngine implements CompletionHandler {
    static final int TAG_CLOSE = 2;
    static final int TAG_FENCE = 3;

    final QueuePair qp;
    final EventLoop loop;
    final MemoryRegistry registry;
    final FramingConfig framing;
    final QpConfig config;
    final int handlerId;
    private final BufferRing bufferRing;
    /** The engine's own memory, freed with it: a frame in flight that names some of it keeps it reachable. */
    private final Arena arena = Arena.ofAuto();
    /** The loop thread's ICRC calculator, which the context's queue pairs share. */
    final Icrc icrc;

    final FlowControl flow;
    final MessageAssembler assembler;
    private final DeferredFrames deferred;
    final SendLedger ledger;

    final SubflowSet subflows;
    final ResendQueue resends;
    final WorkIntake intake;
    final Requester requester;
    final AcknowledgePolicy acks;
    final Responder responder;
    final Completer completer;
    final Liveness liveness;
    final FailurePath failure;

    private final long token;
    private final byte[] secret;
    private boolean endOfTurnQueued;
    private final LoopSignal endOfTurn;
    private boolean closed;

    QpEngine(QueuePair qp, EventLoop loop, MemoryRegistry registry, BufferRing bufferRing, FramingConfig framing,
            QpConfig config, long token, byte[] secret) {
        this.qp = qp;
        this.token = token;
        this.secret = secret.clone();
        this.loop = loop;
        this.registry = registry;
        this.bufferRing = bufferRing;
        this.framing = framing;
        this.config = config;
        this.icrc = qp.home().icrc();
        this.flow = new FlowControl(framing);
        int window = framing.messageWindow();
        CompletionQueue arrivals = new CompletionQueue(
                Integer.highestOneBit(config.receiveQueueDepth() + 2 * window - 1) * 2);
        this.assembler = new MessageAssembler(framing, registry, config.receiveQueueDepth(), config.maxReceiveSge(),
                arrivals, flow, icrc);
        this.deferred = new DeferredFrames(assembler, 64, framing.segmentSize(), qp.home().receiveBuffers());
        this.ledger = new SendLedger(Integer.highestOneBit(config.sendQueueDepth() + window - 1) * 2, config.maxSendSge());
        this.subflows = new SubflowSet(this, config.maxSubflows());
        this.resends = new ResendQueue(ResendQueue.capacityFor(framing));
        this.intake = new WorkIntake(this, arena);
        this.requester = new Requester(this, arena);
        this.acks = new AcknowledgePolicy(this, arena);
        this.responder = new Responder(this);
        this.liveness = new Liveness(this);
        this.failure = new FailurePath(this, arena);
        this.handlerId = loop.registerHandler(this);
        this.endOfTurn = loop.newSignal(this::endOfTurn);
        this.completer = new Completer(this, arrivals);
        QueuePairStateEvent.emit(token, QpState.RTS, -1, null);
    }

    // ---------------------------------------------------------------- subflows

    /**
     * Reserves a free subflow index for a join in progress, or returns -1 when the queue pair has as many
     * subflows (live or joining) as it may.
     */
    int reserveSubflow() {
        return subflows.reserve();
    }

    /** A join that reserved {@code index} failed. */
    void releaseSubflow(int index) {
        subflows.release(index);
    }

    boolean icrcEnabled() {
        return framing.icrcEnabled();
    }

    long token() {
        return token;
    }

    byte[] secret() {
        return secret.clone();
    }

    /** The ACKNOWLEDGE fields this side would send now, for a joining subflow's RTR exchange. */
    int acknowledgedMsn() {
        return assembler.acknowledgedMsn();
    }

    int creditLimit() {
        return assembler.creditLimit();
    }

    /**
     * Adds a subflow whose handshake and RTR exchange finished; {@code peerAckMsn}/{@code peerCredit} are
     * the ACKNOWLEDGE fields its RTR frame carried.
     */
    void attach(int index, int socket, String path, int peerAckMsn, int peerCredit) {
        if (failure.state() == QpState.ERROR) {
            loop.close(handlerId, TAG_CLOSE, socket);
            return;
        }
        subflows.attach(new Subflow(this, index, socket, path, loop, bufferRing, assembler, deferred, framing));
        int r = flow.onAcknowledge(peerAckMsn, peerCredit);
        if (r != FrameError.OK) {
            failure.onViolation(r, "subflow " + index + " RTR carried " + FrameError.name(r));
            return;
        }
        liveness.start();
        intake.startBorrowing();
        requester.pump();
    }

    int liveSubflows() {
        return subflows.live();
    }

    /** {@return the subflow at {@code index}, live or dead, or null}: for statistics and tests. */
    Subflow subflow(int index) {
        return subflows.get(index);
    }

    /** {@return how many subflow indices there are} */
    int subflowSlots() {
        return subflows.slots();
    }

    long framesResent() {
        return resends.framesResent();
    }

    long bytesResent() {
        return resends.bytesResent();
    }

    void onSubflowDrained(Subflow s) {
        if (closed) {
            return;
        }
        try {
            requester.pump();
        } catch (RuntimeException | Error e) {
            failure.onFault("sending", e);
        }
    }

    void onSubflowFailed(Subflow s, int frameError, int errno, String reason) {
        if (closed) {
            return;
        }
        try {
            subflowFailed(s, frameError, errno, reason);
        } catch (RuntimeException | Error e) {
            failure.onFault("a subflow's failure", e);
        }
    }

    private void subflowFailed(Subflow s, int frameError, int errno, String reason) {
        if (s.dead) {
            // A closed subflow's placement that ended only now may have released the flush ERROR owed.
            if (failure.state() == QpState.ERROR) {
                harvest();
            }
            return;
        }
        if (frameError != 0) {
            // The stream from the peer broke the protocol; this side's direction of it still carries the NAK.
            failure.onViolation(frameError, "subflow " + s.index + ": " + reason);
            return;
        }
        subflows.abort(s);
        if (failure.state() == QpState.ERROR) {
            return;
        }
        if (subflows.live() == 0) {
            failure.fail(WorkCompletion.TRANSPORT_ERROR, "every subflow is gone; the last (" + s.index + ") " + reason
                    + (errno != 0 ? " (" + Errno.name(errno) + ")" : ""));
            return;
        }
        requester.subflowFailed(s);
    }

    // ---------------------------------------------------------------- doorbell: the rings

    /** Another thread posted: take it and send what it allows. */
    void onDoorbell() {
        if (closed) {
            return; // rung before the close, run after it: the rings are freed
        }
        try {
            intake.takePosted();
            requester.pump();
            harvest();
        } catch (RuntimeException | Error e) {
            failure.onFault("taking posted work", e);
        }
    }

    /** A receive posted on the loop thread ({@link WorkIntake#postReceiveOnLoop}). */
    boolean postReceiveOnLoop(long id, int lkey, long offset, int length) {
        return intake.postReceiveOnLoop(id, lkey, offset, length);
    }

    /** A work request posted on the loop thread ({@link WorkIntake#postSendOnLoop}). */
    boolean postSendOnLoop(WorkRequest wr) {
        return intake.postSendOnLoop(wr);
    }

    /**
     * Whether this queue pair holds something the kernel has not taken yet: a work request or receive posted and
     * not taken, a frame not handed to a subflow (flow control may be holding it), a resend, an acknowledgement
     * owed at the end of the turn, or bytes a subflow's sender still has to send. Loop thread only.
     */
    boolean hasUnsent() {
        if (failure.state() != QpState.RTS || subflows.live() == 0) {
            return false;
        }
        if (intake.hasPosted() || requester.hasUnsent() || endOfTurnQueued) {
            return true;
        }
        return subflows.hasUnsent();
    }

    // ---------------------------------------------------------------- receiving

    void onFramesReceived() {
        if (closed) {
            return; // a closed subflow's placement ended after the close: the rings are freed
        }
        try {
            if (assembler.isInError() && failure.state() != QpState.ERROR) {
                failure.onViolation(assembler.error(), "the peer broke the protocol: " + FrameError.name(assembler.error()));
            }
            harvest();
            scheduleEndOfTurn();
        } catch (RuntimeException | Error e) {
            failure.onFault("receiving", e);
        }
    }

    /** Moves arrivals, READ requests and acknowledged work requests out; keeps ACK state current. */
    void harvest() {
        if (failure.state() == QpState.ERROR && qp.receiveRing.peek() >= 0) {
            intake.takeReceives(); // one that had to wait behind a held flush: its turn may have come
        }
        completer.takeArrivals();
        if (failure.state() == QpState.RTS) {
            responder.takeReadRequests();
        }
        completer.retire();
        acks.noteArrivals();
    }

    /** The user polled a full completion ring: continue what it stopped. */
    void onCompletionsPolled() {
        if (closed) {
            return;
        }
        try {
            harvest();
            intake.takePosted();
            requester.pump();
        } catch (RuntimeException | Error e) {
            failure.onFault("resuming completions", e);
        }
    }

    /**
     * Has {@link #endOfTurn()} run once this turn's completions are handled. A signal, not a task: a task queue
     * full of other queue pairs' work would refuse it, and the queue pair would then move only on its heartbeat.
     */
    void scheduleEndOfTurn() {
        if (!endOfTurnQueued && (acks.isDue() || failure.state() == QpState.RTS)) {
            endOfTurnQueued = true;
            endOfTurn.raise();
        }
    }

    /** Runs once per loop turn with activity: one ACKNOWLEDGE for everything this turn completed. */
    private void endOfTurn() {
        if (closed) {
            endOfTurnQueued = false;
            return; // closed by a callback of this turn: its rings are freed
        }
        try {
            // What the turn's completion callbacks posted (a reply, receives reposted) is taken first, so the
            // one ACKNOWLEDGE carries their credit and leaves in the same sendmsg as the reply, not ahead of it.
            // The end of this turn is running: taking them must not queue another.
            intake.takePosted();
            endOfTurnQueued = false;
            requester.pump(); // an urgent ACKNOWLEDGE leaves first; one that is not rides on a frame it sends, or waits
        } catch (RuntimeException | Error e) {
            endOfTurnQueued = false;
            failure.onFault("the end of a loop turn", e);
        }
    }

    // ---------------------------------------------------------------- timers, errors, close

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        if (closed) {
            return;
        }
        try {
            if (tag == TAG_FENCE) {
                requester.onFenceTimer();
            }
        } catch (RuntimeException | Error e) {
            failure.onFault("a timer", e);
        }
    }

    /** A tick of the context's {@link HeartbeatClock}; true while this queue pair goes on ticking. */
    boolean onHeartbeat() {
        if (closed) {
            return false;
        }
        try {
            return liveness.onTick();
        } catch (RuntimeException | Error e) {
            failure.onFault("a heartbeat", e);
            return false;
        }
    }

    /** The context's loop thread died of {@code cause} ({@link FailurePath#loopDied}). */
    void loopDied(Throwable cause) {
        failure.loopDied(cause);
    }

    /** Moves to ERROR with {@code status} ({@link FailurePath#fail}). */
    void fail(int status, String reason) {
        failure.fail(status, reason);
    }

    QpState state() {
        return failure.state();
    }

    int errorStatus() {
        return failure.errorStatus();
    }

    String errorReason() {
        return failure.errorReason();
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes every subflow and flushes; the rings stay readable. */
    void close() {
        if (!closed) {
            failure.fail(WorkCompletion.FLUSH_ERROR, "closed");
            closed = true;
            loop.unregisterHandler(handlerId);
            deferred.close();
        }
    }

    String describe() {
        StringBuilder b = new StringBuilder("QueuePair[").append(failure.state());
        String reason = failure.errorReason();
        if (reason != null) {
            b.append(" (").append(reason).append(')');
        }
        b.append(' ').append(flow).append(" ledger=").append(ledger.tail - ledger.head).append(" resent=")
                .append(resends.framesResent());
        subflows.describe(b);
        return b.append(']').toString();
    }
}
