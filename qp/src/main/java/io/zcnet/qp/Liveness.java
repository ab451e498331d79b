package io.zcnet.qp;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.ring.Errno;

/**
 * Whether the peer is still there and still taking work, the timeout half of rxe's completer: a tick every
 * quarter of the silence timeout (on the context's {@link HeartbeatClock}, shared by its queue pairs) sends an
 * ACKNOWLEDGE on every subflow that sent nothing since the last, and declares a subflow from which nothing arrived
 * for the whole timeout dead (a black hole fails no TCP call); the send progress check fails the queue pair when
 * the peer stopped taking what it was sent, as verbs' retry count does.
 *
 * <p>An idle queue pair goes quiet, so that thousands of them cost no CPU: when a tick finds nothing in flight,
 * nothing to send and no frame of a message arrived since the last, it sends one ACKNOWLEDGE flagged quiet
 * on each subflow and then no heartbeats until there is work again. A side that waits on nothing does not count a
 * quiet peer's silence; one that waits on the peer counts it, up to the send timeout until the peer answers (it
 * may be slow to read what woke it), so a black hole is still found once anything depends on the path. A peer
 * that never said it was quiet is held to its heartbeats. Owner thread of the loop.
 */
final class Liveness {
    private final QpEngine engine;
    private final QpConfig config;
    private final FlowControl flow;
    private final SendLedger ledger;
    private final long tickNanos;
    private boolean ticking;
    /** What the send progress check saw last, and since when it has not changed. */
    private long progressMark = -1;
    private long progressSinceNanos;

    Liveness(QpEngine engine) {
        this.engine = engine;
        this.config = engine.config;
        this.flow = engine.flow;
        this.ledger = engine.ledger;
        this.tickNanos = config.silenceTimeout().toNanos() / 4;
    }

    /** A subflow carries frames: the ticks run on the context's clock, if they do not yet. */
    void start() {
        if (!ticking) {
            ticking = true;
            engine.qp.home().heartbeats().join(engine, tickNanos);
        }
    }

    /** A tick of the context's clock: a heartbeat; true while the queue pair goes on ticking. */
    boolean onTick() {
        if (engine.failure.state() != QpState.RTS) {
            ticking = false;
            return false;
        }
        heartbeat();
        return true;
    }

    private void heartbeat() {
        SubflowSet subflows = engine.subflows;
        AcknowledgePolicy acks = engine.acks;
        long now = System.nanoTime();
        long silence = config.silenceTimeout().toNanos();
        long sendTimeout = config.sendTimeout().toNanos();
        boolean waiting = waitsOnPeer();
        boolean heard = false;
        for (int i = 0; i < subflows.slots(); i++) {
            Subflow s = subflows.get(i);
            if (s != null && !s.dead) {
                heard |= s.heardMessagesSinceTick();
                if (s.receivedSinceTick()) {
                    s.silentSinceNanos = now;
                }
            }
        }
        // Quiet: nothing in flight, nothing to send, and no message arrived (heartbeats do not count, or two idle
        // sides would keep each other awake). A quiet side tells the peer once per subflow and then sends nothing.
        boolean quiet = !waiting && !heard && ledger.isEmpty() && !engine.hasUnsent();
        for (int i = 0; i < subflows.slots(); i++) {
            Subflow s = subflows.get(i);
            if (s == null || s.dead) {
                continue;
            }
            boolean peerQuiet = s.receiver.peerQuiet();
            // A quiet peer heartbeats again only once it has read what woke it, which a busy loop may take longer
            // than the silence timeout to do: until it answers, it has the send timeout, as a slow reader would.
            long limit = peerQuiet ? sendTimeout : silence;
            if (!waiting && peerQuiet) {
                s.silentSinceNanos = now; // a quiet peer sends nothing until it has work, and this side waits on none
            } else if (now - s.silentSinceNanos > limit) {
                engine.onSubflowFailed(s, 0, Errno.ETIMEDOUT, "silent for " + limit / 1_000_000 + " ms"
                        + (peerQuiet ? " after it said it was quiet" : ""));
                continue;
            }
            s.sender.onTick(); // a sender quiet since the last tick gives its space back before the heartbeat
            if (quiet ? !s.quietSent : !s.sentSinceTick) {
                acks.send(s, quiet);
            }
            s.sentSinceTick = false;
        }
        if (acks.isDue() && engine.failure.state() == QpState.RTS) {
            acks.send(null, quiet); // owed since a frame left: no acknowledgement waits longer than a tick
        }
        checkSendProgress(now);
        engine.requester.pump();
    }

    /** Whether the peer owes this side an answer: messages it has not acknowledged, or READ responses. */
    private boolean waitsOnPeer() {
        return flow.unacknowledged() > 0 || ledger.isHeadBegun();
    }

    /**
     * Fails the queue pair with {@link WorkCompletion#RETRY_EXCEEDED_ERROR} when work the peer owes an answer
     * (messages sent and not acknowledged, READ responses expected, READ responses this side owes) has made no
     * progress for the send timeout: no acknowledgement, no byte handed to a subflow's kernel socket, no READ
     * response landing. Heartbeats keep the subflows alive, so silence alone never catches a peer that sends
     * them but stopped reading; this does, as verbs' retry count does.
     */
    private void checkSendProgress(long now) {
        FailurePath failure = engine.failure;
        if (failure.state() != QpState.RTS) {
            return;
        }
        long mark = engine.requester.acknowledged() + engine.completer.readResponsesLanded()
                + engine.subflows.bytesSent();
        boolean waiting = waitsOnPeer();
        if (mark != progressMark || !waiting) {
            progressMark = mark;
            progressSinceNanos = now;
            return;
        }
        long stuck = now - progressSinceNanos;
        if (stuck > config.sendTimeout().toNanos()) {
            failure.blame(NegativeAcknowledge.NO_MESSAGE, WorkCompletion.RETRY_EXCEEDED_ERROR); // the oldest outstanding
            failure.fail(WorkCompletion.RETRY_EXCEEDED_ERROR, "no progress for " + stuck / 1_000_000 + " ms (send timeout "
                    + config.sendTimeout().toMillis() + " ms) with " + flow.unacknowledged()
                    + " messages unacknowledged: the peer stopped taking them");
        }
    }
}
