package io.zcnet.qp;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FrameValidator;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Icrc;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.framing.Opcode;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.DetachedSocket;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.MsgFlags;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What both ends of a subflow's handshake share: fixed-size receives and sends of whole messages on the
 * loop, a deadline after which the connection is dropped (so a silent or half-open peer costs a socket
 * and a few hundred bytes for a bounded time), and the ready-to-receive exchange, an ACKNOWLEDGE frame
 * with {@code rtr} answered by one with {@code rtr_ack}, both carrying the sender's cumulative MSN and
 * credit limit. Memory given to the kernel is freed only once no operation of the handshake is in flight.
 * The deadline is the loop's {@link HandshakeDeadlines}' to keep, so the handshake's handler has only the socket's
 * operations and the socket can move to another loop ({@link #detachSocket}) as soon as none is in flight.
 * Owner thread of the loop.
 */
abstract class SubflowHandshake implements CompletionHandler {
    static final int RTR_FRAME = FrameHeader.LENGTH;
    private static final int TAG_CLOSED = 101;

    final EventLoop loop;
    final int socket;
    final int handlerId;
    private final HandshakeDeadlines deadlines;
    // Confined: made, used and closed on the loop thread alone, so its close costs no handshake with other threads.
    private final Arena arena = Arena.ofConfined();
    /** A handshake message, a PROOF followed by an RTR frame, or one RTR frame. */
    final MemorySegment buffer;
    final HandshakeMessage message = new HandshakeMessage();
    private final FrameHeader frame = new FrameHeader();
    /** The loop's ICRC calculator (the context's, which its queue pairs share): 4 KiB of scratch made once. */
    private final Icrc icrc;
    private boolean done;
    private boolean released;
    private boolean timedOut;
    final long startedNanos = System.nanoTime();
    final long deadlineNanos;
    // The place in the loop's deadlines: theirs to set.
    boolean listed;
    SubflowHandshake earlier;
    SubflowHandshake later;

    /** A handshake of {@code socket} on {@code home}, dropped if it has not ended within {@code timeoutNanos}. */
    SubflowHandshake(QpLoop home, int socket, long timeoutNanos) {
        this.loop = home.loop();
        this.icrc = home.icrc();
        this.deadlines = home.handshakeDeadlines();
        this.socket = socket;
        this.buffer = arena.allocate(2 * HandshakeMessage.LENGTH + 2 * RTR_FRAME, 8);
        this.handlerId = loop.registerHandler(this);
        this.deadlineNanos = startedNanos + timeoutNanos;
        deadlines.add(this);
    }

    /** A completion of one of this handshake's own steps, with a result already known to be whole. */
    abstract void step(int tag);

    /** The handshake failed: say why to whoever waits (called once). */
    abstract void failed(String reason);

    void send(long offset, int length, int tag) {
        loop.send(handlerId, tag, socket, buffer, offset, length, MsgFlags.WAITALL);
    }

    void receive(long offset, int length, int tag) {
        loop.recv(handlerId, tag, socket, buffer, offset, length, MsgFlags.WAITALL);
    }

    @Override
    public final void onCompletion(int op, int tag, int result, int flags) {
        try {
            if (tag != TAG_CLOSED && !done) {
                if (result < 0) {
                    abort("connection failed: " + Errno.name(-result));
                } else if (result == 0 && expectsBytes(tag)) {
                    abort("the peer closed the connection during the handshake");
                } else {
                    step(tag);
                }
            }
        } finally {
            releaseWhenIdle();
        }
    }

    /** Whether a zero result for {@code tag} means EOF (receives) rather than success (connect). */
    abstract boolean expectsBytes(int tag);

    /** The deadline passed before the handshake ended. */
    void expire() {
        timedOut = true;
        abort("no answer within the handshake timeout");
    }

    /** The subflow is established: the socket is someone else's now. */
    void finish() {
        done = true;
        deadlines.remove(this);
    }

    /** Gives up: closes the socket (cancelling what is pending on it) and reports {@code reason}. */
    void abort(String reason) {
        if (done) {
            return;
        }
        done = true;
        deadlines.remove(this);
        loop.close(handlerId, TAG_CLOSED, socket);
        failed(reason);
    }

    boolean isDone() {
        return done;
    }

    /** Whether the handshake failed because its timeout ran out. */
    boolean timedOut() {
        return timedOut;
    }

    /**
     * Ends this handshake here and lets go of its socket, for another loop to go on with it ({@link EventLoop#detach}):
     * called from a completion of this handshake, with none of the socket's operations in flight, so the buffer is freed
     * when that completion returns.
     *
     * @throws IOException if the socket cannot move: it is closed, and the handshake is done all the same
     */
    DetachedSocket detachSocket() throws IOException {
        done = true;
        deadlines.remove(this);
        try {
            return loop.detach(socket, handlerId);
        } catch (IOException | RuntimeException e) {
            loop.close(handlerId, TAG_CLOSED, socket);
            throw e;
        }
    }

    private void releaseWhenIdle() {
        if (done && !released && loop.inFlight(handlerId) == 0) {
            released = true;
            loop.unregisterHandler(handlerId);
            arena.close();
        }
    }

    // ---------------------------------------------------------------- the RTR exchange

    /** Writes an ACKNOWLEDGE with {@code rtr} or {@code rtr_ack} at {@code offset} of the buffer. */
    void writeRtr(long offset, boolean ack, int ackMsn, int creditLimit, boolean icrc) {
        FlowControl.writeAcknowledge(frame.wrap(buffer, offset), ackMsn, creditLimit, !ack, ack);
        if (icrc) {
            frame.icrc(this.icrc.compute(buffer, offset));
        }
    }

    /** Null if the frame at {@code offset} is a valid RTR ({@code ack} false) or RTR_ACK frame, else why not. */
    String checkRtr(long offset, boolean ack, boolean icrc) {
        frame.wrap(buffer, offset);
        // Every rule of any frame first (reserved bits and fields, a NAK's syndrome), then what makes it this one.
        int invalid = FrameValidator.validateHeader(frame, FramingConfig.MIN_SEGMENT_SIZE);
        if (invalid != FrameError.OK || frame.opcode() != Opcode.ACKNOWLEDGE || NegativeAcknowledge.isNegative(frame)
                || frame.rtr() == ack || frame.rtrAck() != ack) {
            return "expected an ACKNOWLEDGE with " + (ack ? "rtr_ack" : "rtr") + ", got opcode " + frame.opcode()
                    + " flags 0x" + Integer.toHexString(frame.flags())
                    + (invalid != FrameError.OK ? " (" + FrameError.name(invalid) + ")" : "");
        }
        if (icrc && frame.icrc() != this.icrc.compute(buffer, offset)) {
            return (ack ? "rtr_ack" : "rtr") + " frame ICRC mismatch";
        }
        return null;
    }

    int rtrMsn(long offset) {
        return frame.wrap(buffer, offset).msn();
    }

    int rtrCredit(long offset) {
        return frame.wrap(buffer, offset).immData();
    }
}
