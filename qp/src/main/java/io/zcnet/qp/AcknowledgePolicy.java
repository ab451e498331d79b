package io.zcnet.qp;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.Msn;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * When this side acknowledges, the acknowledging half of rxe's responder: an ACKNOWLEDGE carries the cumulative
 * MSN and the credit limit the assembler reports, and is owed whenever either changed since the last one sent or
 * the peer asked for one. It leaves at once only when urgent ({@link #sendIfUrgent}); otherwise it rides on this
 * side's next frame, in the same sendmsg, or leaves on the next heartbeat. Owner thread of the loop.
 */
final class AcknowledgePolicy {
    private final QpEngine engine;
    private final MessageAssembler assembler;
    private final FramingConfig framing;
    private final ControlFrame frame;
    private int ackedMsnSent = -1;
    private int creditSent = -1;
    private boolean due;

    AcknowledgePolicy(QpEngine engine, Arena arena) {
        this.engine = engine;
        this.assembler = engine.assembler;
        this.framing = engine.framing;
        this.frame = new ControlFrame(arena, framing.icrcEnabled(), engine.icrc);
    }

    /** Whether an ACKNOWLEDGE is owed. */
    boolean isDue() {
        return due;
    }

    /** A receive was posted: the peer has one more credit to learn of. */
    void owe() {
        due = true;
    }

    /** After a batch of arrivals: an ACKNOWLEDGE is owed if what it would carry changed, or the peer asked for one. */
    void noteArrivals() {
        if (assembler.acknowledgedMsn() != ackedMsnSent || assembler.creditLimit() != creditSent
                || assembler.isAcknowledgeRequested()) {
            due = true;
        }
    }

    /** Sends the acknowledgement owed if it should not wait for a frame of this side ({@link #isUrgent}). */
    void sendIfUrgent() {
        if (due && isUrgent()) {
            send(null);
        }
    }

    /** An acknowledgement owed but not urgent leaves with the frame about to go: the same sendmsg, no frame of its own. */
    void ride() {
        if (due) {
            send(null);
        }
    }

    /**
     * Whether the acknowledgement owed should leave now rather than ride on this side's next frame: the peer
     * asked for it (a signaled work request waits), or it runs short of message window or receive credits.
     * Otherwise it waits for a frame of this side, or the next heartbeat, so a stream of unsignaled
     * messages, or a collective's exchange, costs no frame (and no wake-up of the peer) per message.
     */
    private boolean isUrgent() {
        if (assembler.isAcknowledgeRequested()) {
            return true;
        }
        if (Msn.distance(ackedMsnSent, assembler.acknowledgedMsn()) * 2 >= framing.messageWindow()) {
            return true;
        }
        int posted = assembler.postedReceives();
        int peerCredits = creditSent - (assembler.creditLimit() - posted);
        return assembler.creditLimit() != creditSent && peerCredits * 2 <= posted;
    }

    /**
     * Sends an ACKNOWLEDGE with the current cumulative MSN and credit limit on {@code on}, or on the
     * subflow with the least queued when null. Returns whether a subflow took it.
     */
    boolean send(Subflow on) {
        return send(on, false);
    }

    /**
     * {@link #send(Subflow)}, flagged {@code quiet} when this side has nothing in flight and nothing to send: the
     * peer's silence check then waits for this side's next frame instead of its heartbeats.
     */
    boolean send(Subflow on, boolean quiet) {
        Subflow s = on != null ? on : engine.subflows.pick(FrameHeader.LENGTH);
        if (s == null || s.dead) {
            return false;
        }
        int msn = assembler.acknowledgedMsn();
        int credit = assembler.creditLimit();
        FlowControl.writeAcknowledge(frame.header(), msn, credit, false, false);
        frame.header().quiet(quiet);
        frame.seal();
        // From the timestamp's echo the peer measures the subflow's round trip.
        int nowMicros = QpClock.micros();
        frame.header().stamp(s.index, nowMicros, s.echo(nowMicros));
        MemorySegment bytes = frame.memory();
        if (!s.offer(bytes, FrameHeader.LENGTH, bytes, 0, 0)) {
            return false;
        }
        s.quietSent = quiet;
        ackedMsnSent = msn;
        creditSent = credit;
        due = false;
        assembler.acknowledgeSent(msn);
        return true;
    }
}
