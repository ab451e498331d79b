package io.zcnet.qp;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.framing.Completion;
import io.zcnet.framing.CompletionQueue;
import io.zcnet.framing.CompletionStatus;
import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameError;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Icrc;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.Msn;
import io.zcnet.framing.NegativeAcknowledge;
import io.zcnet.framing.Opcode;
import io.zcnet.framing.PackedSends;
import io.zcnet.framing.ReadRequest;
import io.zcnet.framing.Segmenter;
import io.zcnet.framing.SgeList;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.LoopSignal;
import io.zcnet.rx.DeferredFrames;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;

/**
 * The loop-thread side of one queue pair: takes work requests and receives from the rings the
 * {@link QueuePair} shares with other threads, turns them into frames striped over the subflows, places
 * what arrives through the {@link MessageAssembler}, and writes completions back.
 *
 * <h2>Sending</h2>
 * Work requests enter the {@link SendLedger} in posting order and claim MSNs (and, for receive-consuming
 * messages, credits) from {@link FlowControl} in that order. Each frame goes to the subflow where it would
 * leave soonest: the fewest bytes queued ahead of it for that subflow's measured drain rate, so fast paths
 * carry more and a slow path never holds much. Which subflow carried each frame is recorded, so when one
 * fails its unacknowledged frames are sent again on the others; the receiver places every segment once
 * whichever copy arrives first. A work request completes when the peer has acknowledged all its
 * messages (a READ: when its responses have landed), in posting order.
 *
 * <h2>Receiving</h2>
 * Every subflow's receiver feeds the one assembler. After each batch of frames the engine moves completed
 * receives and READ responses out, queues READ responses it owes, and schedules one ACKNOWLEDGE (the
 * cumulative MSN and credit limit) for the end of the loop turn. A heartbeat sends an ACKNOWLEDGE on every
 * subflow that sent nothing for a quarter of the silence timeout, and a subflow from which nothing arrived
 * for the whole timeout is declared dead (a black hole fails no TCP call).
 *
 * <h2>Errors</h2>
 * A protocol violation by the peer, a refused local key, a close, or the loss of the last subflow moves the
 * queue pair to ERROR: outstanding receives and work requests are completed with errors in posting order
 * (the one that failed with its own status), and later posts are flushed. The peer learns why from a
 * {@link NegativeAcknowledge}, the last frame on every subflow, which also acknowledges what this side
 * completed; each subflow then ends gracefully ({@link SubflowEnding}). A NAK from the peer completes what it
 * acknowledges, fails the work request holding the message it names with the status verbs report for its
 * syndrome (REMOTE_ACCESS_ERROR, REMOTE_INVALID_REQUEST, REMOTE_OPERATIONAL_ERROR) and flushes the rest.
 *
 * <p>Owner thread of the loop; nothing allocates per work request or frame.
 */
final class QpEngine implements CompletionHandler {
    private static final System.Logger LOG = System.getLogger("io.zcnet.qp");
    private static final int TAG_TICK = 1;
    private static final int TAG_CLOSE = 2;
    private static final int TAG_FENCE = 3;
    /** The least time a failed subflow's frames count as able to arrive after its reset; twice its round trip if longer. */
    private static final long FAILED_SUBFLOW_GRACE_NANOS = 10_000_000;
    /** Frames recorded for resending: global frame numbers modulo this. */
    private static final int FRAME_RING = 1 << 16;
    /** Most bytes of a SEND that {@link #sendPacked} puts in a frame with others; a larger one has its own. */
    private static final int PACKED_MESSAGE_LIMIT = 512;
    /** A frame's subflow record while it waits to be sent again. */
    private static final byte NOT_CARRIED = -1;
    /** Bytes a subflow may have queued in its sender: enough to keep a sendmsg batch full, little to wait behind. */
    private static final long SUBFLOW_QUEUE_LIMIT = 4L << 20;

    private final QueuePair qp;
    private final EventLoop loop;
    private final MemoryRegistry registry;
    private final BufferRing bufferRing;
    private final FramingConfig framing;
    private final QpConfig config;
    private final int handlerId;
    /** The engine's own memory, freed with it: a frame in flight that names some of it keeps it reachable. */
    private final Arena arena = Arena.ofAuto();

    private final FlowControl flow;
    private final CompletionQueue arrivals;
    private final MessageAssembler assembler;
    private final DeferredFrames deferred;
    private final Completion arrived = new Completion();
    private final ReadRequest readRequest = new ReadRequest();
    private final Segmenter fresh;
    /** The ledger entry {@link #fresh} was begun for last; a one-frame entry is begun there only when it must be. */
    private long freshEntry = -1;
    private final Segmenter again;
    private final Icrc icrc = new Icrc();
    private final FrameHeader header = new FrameHeader();
    private final MemorySegment scratch;
    private final WorkRequest taken = new WorkRequest();

    private final SendLedger ledger;
    /** Each ledger entry's inline data, {@link QpConfig#maxInlineData()} bytes a slot; null when there is none. */
    private final MemorySegment inlineData;
    private final byte[] frameSubflow = new byte[FRAME_RING];
    private long nextFrame;
    private long msnsClaimed;
    /** The ledger entry whose frames go out next. */
    private long cursor;
    // Frames to send again, as (ledger sequence, frame index) pairs in a FIFO.
    private final long[] resendEntry = new long[FRAME_RING];
    private final long[] resendFrame = new long[FRAME_RING];
    private long resendHead;
    private long resendTail;
    long framesResent;
    long bytesResent;
    private final ResendFence fence;
    private boolean fenceTimerArmed;

    /** Posted receives by the index the assembler knows them by: the user's ids. */
    private final long[] receiveIds;
    private long receivesPosted;

    final Subflow[] subflows;
    private int liveSubflows;
    /** Subflow indices promised to joins in progress, one bit each. */
    private long reserved;
    private final long token;
    private final byte[] secret;
    private int ackedMsnSent = -1;
    private int creditSent = -1;
    private boolean ackDue;
    private boolean endOfTurnQueued;
    private final LoopSignal endOfTurn;
    private final LoopSignal notify;
    private Runnable completionListener;
    private boolean notifyQueued;
    private final long tickNanos;
    private boolean tickArmed;
    /** The timestamp of frames handed out in this pump. */
    private int stampMicros;
    /** READ responses that landed (or were flushed), for the send progress check. */
    private long readResponsesLanded;
    /** What the send progress check saw last, and since when it has not changed. */
    private long progressMark = -1;
    private long progressSinceNanos;

    private volatile QpState state = QpState.RTS;
    // Written before state turns ERROR, whose volatile write publishes them to the threads that read it.
    private int errorStatus = -1;
    private String errorReason;
    private boolean closed;
    private Consumer<String> onError;


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
        this.flow = new FlowControl(framing);
        int window = framing.messageWindow();
        this.arrivals = new CompletionQueue(Integer.highestOneBit(config.receiveQueueDepth() + 2 * window - 1) * 2);
        this.assembler = new MessageAssembler(framing, registry, config.receiveQueueDepth(), config.maxReceiveSge(),
                arrivals, flow);
        this.deferred = new DeferredFrames(assembler, 64, framing.segmentSize());
        this.fresh = new Segmenter(framing);
        this.again = new Segmenter(framing);
        this.scratch = arena.allocate(64, 8);
        this.ledger = new SendLedger(Integer.highestOneBit(config.sendQueueDepth() + window - 1) * 2, config.maxSendSge());
        this.inlineData = config.maxInlineData() == 0 ? null
                : arena.allocate((long) ledger.capacity() * config.maxInlineData(), 8);
        this.receiveIds = new long[config.receiveQueueDepth()];
        this.subflows = new Subflow[config.maxSubflows()];
        this.fence = new ResendFence(config.maxSubflows());
        this.tickNanos = config.silenceTimeout().toNanos() / 4;
        this.handlerId = loop.registerHandler(this);
        this.endOfTurn = loop.newSignal(this::endOfTurn);
        this.notify = loop.newSignal(this::notifyListener);
    }

    // ---------------------------------------------------------------- subflows

    /**
     * Reserves a free subflow index for a join in progress, or returns -1 when the queue pair has as many
     * subflows (live or joining) as it may.
     */
    int reserveSubflow() {
        for (int i = 0; i < subflows.length; i++) {
            if ((subflows[i] == null || subflows[i].dead) && (reserved & (1L << i)) == 0) {
                reserved |= 1L << i;
                return i;
            }
        }
        return -1;
    }

    /** A join that reserved {@code index} failed. */
    void releaseSubflow(int index) {
        reserved &= ~(1L << index);
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
        if (state == QpState.ERROR) {
            loop.close(handlerId, TAG_CLOSE, socket);
            return;
        }
        reserved &= ~(1L << index);
        Subflow s = new Subflow(this, index, socket, path, loop, bufferRing, assembler, deferred, framing);
        subflows[index] = s;
        liveSubflows++;
        int r = flow.onAcknowledge(peerAckMsn, peerCredit);
        if (r != FrameError.OK) {
            onViolation(r, "subflow " + index + " RTR carried " + FrameError.name(r));
            return;
        }
        if (!tickArmed) {
            tickArmed = true;
            loop.timeout(handlerId, TAG_TICK, tickNanos);
        }
        pump();
    }

    int liveSubflows() {
        return liveSubflows;
    }

    void onSubflowDrained(Subflow s) {
        if (closed) {
            return;
        }
        try {
            pump();
        } catch (RuntimeException | Error e) {
            onFault("sending", e);
        }
    }

    void onSubflowFailed(Subflow s, int frameError, int errno, String reason) {
        if (closed) {
            return;
        }
        try {
            subflowFailed(s, frameError, errno, reason);
        } catch (RuntimeException | Error e) {
            onFault("a subflow's failure", e);
        }
    }

    private void subflowFailed(Subflow s, int frameError, int errno, String reason) {
        if (s.dead) {
            // A closed subflow's placement that ended only now may have released the flush ERROR owed.
            if (state == QpState.ERROR) {
                harvest();
            }
            return;
        }
        if (frameError != 0) {
            // The stream from the peer broke the protocol; this side's direction of it still carries the NAK.
            onViolation(frameError, "subflow " + s.index + ": " + reason);
            return;
        }
        s.abort(handlerId, TAG_CLOSE);
        liveSubflows--;
        if (state == QpState.ERROR) {
            return;
        }
        if (liveSubflows == 0) {
            fail(WorkCompletion.TRANSPORT_ERROR, "every subflow is gone; the last (" + s.index + ") " + reason
                    + (errno != 0 ? " (" + Errno.name(errno) + ")" : ""));
            return;
        }
        fence.failed(s.index, msnsClaimed - flow.unacknowledged(), System.nanoTime(),
                Math.max(FAILED_SUBFLOW_GRACE_NANOS, 2 * (long) (s.srttMicros() * 1000)));
        queueResends(s.index);
        pump();
    }

    /** Queues for resending every frame that went out on subflow {@code index} and is not acknowledged. */
    private void queueResends(int index) {
        long acked = msnsClaimed - flow.unacknowledged();
        for (long seq = ledger.head; seq < ledger.tail; seq++) {
            int i = ledger.slot(seq);
            if (!ledger.begun[i] || ledger.isAcknowledged(i, acked)) {
                continue;
            }
            long first = ledger.firstFrame[i];
            for (long f = 0; f < ledger.handed[i]; f++) {
                int at = (int) (first + f) & (FRAME_RING - 1);
                if (frameSubflow[at] == index) {
                    // Marked as carried by no subflow until resent: a frame waits in the queue at most once,
                    // so the queue never holds more than the frames in flight (at most FRAME_RING).
                    frameSubflow[at] = NOT_CARRIED;
                    resendEntry[(int) resendTail & (FRAME_RING - 1)] = seq;
                    resendFrame[(int) resendTail & (FRAME_RING - 1)] = f;
                    resendTail++;
                }
            }
        }
    }

    // ---------------------------------------------------------------- doorbell: the rings

    /** Another thread posted: take it and send what it allows. */
    void onDoorbell() {
        if (closed) {
            return; // rung before the close, run after it: the rings are freed
        }
        try {
            takePosted();
            pump();
            harvest();
        } catch (RuntimeException | Error e) {
            onFault("taking posted work", e);
        }
    }

    /** What other threads posted: receives first (they are credit), then work requests. */
    private void takePosted() {
        takeReceives();
        takeWorkRequests();
    }

    private void takeReceives() {
        SpscRing rq = qp.receiveRing;
        long at;
        while ((at = rq.peek()) >= 0) {
            MemorySegment m = rq.memory();
            long id = QueueEntries.receiveId(m, at);
            // In ERROR too the assembler takes it: it flushes it at once, or behind the flush of a receive that
            // waits for its placement to end, so receives complete in posting order whatever the kernel holds.
            long index = receivesPosted;
            SgeList into = assembler.claimReceive();
            if (into == null) {
                return;
            }
            boolean posted;
            try {
                QueueEntries.readReceive(m, at, into);
                posted = assembler.postClaimedReceive(index);
            } catch (IllegalArgumentException refused) {
                int status = state == QpState.ERROR ? WorkCompletion.FLUSH_ERROR : WorkCompletion.LOCAL_PROTECTION_ERROR;
                if (assembler.owesFlush() || !completion(id, status, WorkCompletion.OP_RECV, 0, false, 0)) {
                    return; // behind a held flush it must wait its turn: taken again once that flush is out
                }
                rq.advance();
                fail(WorkCompletion.LOCAL_PROTECTION_ERROR, refused.getMessage());
                continue;
            }
            if (!posted) {
                return;
            }
            receivePosted(index, id);
            rq.advance();
        }
        scheduleEndOfTurn();
    }

    /**
     * A one-piece receive posted on the loop thread with nothing ahead of it in the receive ring: posted to the
     * assembler at once, as {@link #takeReceives} would post it on its next turn, without the round through the
     * ring. False when it must take the ring after all (receives wait there, the queue is full, the queue pair
     * failed, or the registry refuses the piece), which then treats it as any other.
     */
    boolean postReceiveOnLoop(long id, int lkey, long offset, int length) {
        if (closed || state == QpState.ERROR || qp.receiveRing.peek() >= 0) {
            return false;
        }
        SgeList into = assembler.claimReceive();
        if (into == null) {
            return false;
        }
        long index = receivesPosted;
        try {
            into.add(lkey, offset, length);
            if (!assembler.postClaimedReceive(index)) {
                return false;
            }
        } catch (IllegalArgumentException refused) {
            return false; // the ring's way reports it: a completion in error, and the queue pair fails
        }
        receivePosted(index, id);
        scheduleEndOfTurn();
        return true;
    }

    /** Notes receive {@code index}, the user's {@code id}, as posted: one more credit for the peer. */
    private void receivePosted(long index, long id) {
        receiveIds[(int) index & (receiveIds.length - 1)] = id;
        receivesPosted++;
        ackDue = true;
    }

    /**
     * A work request posted on the loop thread with none waiting in the send ring: entered in the ledger at once,
     * as {@link #takeWorkRequests} would enter it on its next turn, and sent at the end of this turn, without the
     * round through the ring. False when it must take the ring after all (requests wait there, the send queue or
     * the ledger is full, or the queue pair is not sending), which then treats it as any other.
     */
    boolean postSendOnLoop(WorkRequest wr) {
        if (closed || state != QpState.RTS || qp.sendRing.peek() >= 0 || ledger.userEntries >= config.sendQueueDepth()
                || ledger.isFull()) {
            return false;
        }
        SgeList local = ledger.nextLocal().clear();
        SgeList given = wr.sges;
        if (wr.inline) {
            long at = nextInlineSlot();
            int length = (int) given.length(0);
            MemorySegment.copy(given.segment(0), given.offset(0), inlineData, at, length);
            local.add(inlineData, at, length);
        } else {
            // By key, as the ring carries them: a piece has no other name on this path.
            for (int i = 0; i < given.count(); i++) {
                local.add(given.key(i), given.offset(i), given.length(i));
            }
        }
        admit(wr, local);
        scheduleEndOfTurn();
        return true;
    }

    private void takeWorkRequests() {
        SpscRing sq = qp.sendRing;
        long at;
        while (ledger.userEntries < config.sendQueueDepth() && !ledger.isFull() && (at = sq.peek()) >= 0) {
            QueueEntries.readSend(sq.memory(), at, taken, ledger.nextLocal(), inlineData, nextInlineSlot());
            sq.advance();
            admit(taken, ledger.nextLocal());
        }
    }

    /** Where the inline data of the ledger entry appended next is kept, while it is outstanding. */
    private long nextInlineSlot() {
        return (long) ledger.slot(ledger.tail) * config.maxInlineData();
    }

    /**
     * Checks a work request's local side, the elements it was read with ({@link SendLedger#nextLocal()}), and
     * enters it in the ledger: every element against the registry (LOCAL_WRITE for a READ's sinks, which
     * then go by their remote keys), the total against one message (a SEND) or the message window.
     */
    private void admit(WorkRequest wr, SgeList local) {
        int op = wr.opcode;
        int access = op == WorkRequest.RDMA_READ ? Access.LOCAL_WRITE : 0;
        int status = local.resolve(registry, access);
        int early = -1;
        String why = null;
        if (status != AccessStatus.OK) {
            int refused = local.refused();
            early = WorkCompletion.LOCAL_PROTECTION_ERROR;
            why = WorkRequest.opcodeName(op) + " " + wr.workRequestId + ": element " + refused + " (lkey 0x"
                    + Integer.toHexString(local.key(refused)) + " range " + local.offset(refused) + "+"
                    + local.length(refused) + ") refused: " + AccessStatus.name(status);
        } else if (op < WorkRequest.SEND || op > WorkRequest.RDMA_READ) {
            early = WorkCompletion.LOCAL_PROTECTION_ERROR;
            why = "work request " + wr.workRequestId + " has no valid opcode (" + op + ")";
        } else if (consumesReceive(op) && local.byteSize() > FramingConfig.MAX_MESSAGE_SIZE
                || messagesOf(op, local) > framing.messageWindow()) {
            early = WorkCompletion.LOCAL_LENGTH_ERROR;
            why = WorkRequest.opcodeName(op) + " " + wr.workRequestId + " of " + local.byteSize() + " bytes is longer than "
                    + (consumesReceive(op) ? "one message (" + FramingConfig.MAX_MESSAGE_SIZE + " bytes)"
                    : "the message window allows");
        } else if (op == WorkRequest.RDMA_READ) {
            local.nameByRemoteKeys();
        }
        long seq = ledger.append(op, wr.workRequestId, wr.signaled, wr.lazy, wr.immediate, wr.rkey, wr.remoteOffset, 0, 0);
        if (early >= 0 || state == QpState.ERROR) {
            ledger.completeEarly(ledger.slot(seq), early >= 0 ? early : WorkCompletion.FLUSH_ERROR);
            if (early >= 0) {
                fail(early, why);
            }
        }
    }

    /**
     * Whether this queue pair holds something the kernel has not taken yet: a work request or receive posted and
     * not taken, a frame not handed to a subflow (flow control may be holding it), a resend, an acknowledgement
     * owed at the end of the turn, or bytes a subflow's sender still has to send. Loop thread only.
     */
    boolean hasUnsent() {
        if (state != QpState.RTS || liveSubflows == 0) {
            return false;
        }
        if (qp.sendRing.peek() >= 0 || qp.receiveRing.peek() >= 0 || cursor != ledger.tail || resendHead < resendTail
                || endOfTurnQueued) {
            return true;
        }
        for (Subflow s : subflows) {
            if (s != null && !s.dead && s.sender.hasUnsent()) {
                return true;
            }
        }
        return false;
    }

    /** Messages (MSNs) a work request takes: a long WRITE one per message-sized piece, a READ per piece of each sink. */
    private long messagesOf(int op, SgeList local) {
        if (op == WorkRequest.RDMA_READ) {
            return fresh.readRequestMessages(local);
        }
        if (op == WorkRequest.RDMA_WRITE && local.byteSize() > FramingConfig.MAX_MESSAGE_SIZE) {
            return (local.byteSize() + framing.messageChunk() - 1) / framing.messageChunk();
        }
        return 1;
    }

    /**
     * A SEND, or a WRITE with immediate: one message, since the receive it consumes completes with the
     * message's length, and only a single message carries the whole length to the receiver.
     */
    private static boolean consumesReceive(int op) {
        return op != WorkRequest.RDMA_WRITE && op != WorkRequest.RDMA_READ;
    }

    // ---------------------------------------------------------------- sending

    /** Hands frames to subflows while there are frames, window, credits and room. */
    private void pump() {
        if (state != QpState.RTS || liveSubflows == 0) {
            return;
        }
        stampMicros = QpClock.micros();
        if (ackDue && acknowledgeUrgent()) {
            sendAcknowledge(null);
        }
        while (true) {
            if (resendHead < resendTail) {
                rideAcknowledge();
                if (!resendOne()) {
                    break;
                }
                continue;
            }
            if (cursor == ledger.tail) {
                break;
            }
            int i = ledger.slot(cursor);
            if (ledger.earlyStatus[i] >= 0) {
                cursor++;
                continue;
            }
            if (!ledger.begun[i] && !begin(cursor)) {
                break;
            }
            if (ledger.isAllHanded(i)) {
                cursor++;
                if (cursor < ledger.tail && ledger.begun[ledger.slot(cursor)]) {
                    throw new IllegalStateException("ledger entry " + cursor + " begun out of order");
                }
                continue;
            }
            long index = ledger.handed[i];
            rideAcknowledge();
            if (index == 0 && isPackable(i) && sendPacked(i)) {
                continue;
            }
            if (isSingleFrame(i) && sendSingle(i)) {
                ledger.handedFrame(i);
                continue;
            }
            if (freshEntry != cursor) {
                beginSegmenter(fresh, i);
                freshEntry = cursor;
            }
            Subflow s = sendFrame(fresh, ledger.firstFrame[i] + index, index);
            if (s == null) {
                break;
            }
            fence.sentFresh(s.index, ledger.msnEnd[i] - 1);
            ledger.handedFrame(i);
        }
        for (Subflow s : subflows) {
            if (s != null && !s.dead) {
                s.sender.flush();
            }
        }
    }

    /** An acknowledgement owed but not urgent leaves with the frame about to go: the same sendmsg, no frame of its own. */
    private void rideAcknowledge() {
        if (ackDue) {
            sendAcknowledge(null);
        }
    }

    /**
     * Whether the acknowledgement owed should leave now rather than ride on this side's next frame: the peer
     * asked for it (a signaled work request waits), or it runs short of message window or receive credits.
     * Otherwise it waits for a frame of this side, or the next heartbeat, so a stream of unsignaled
     * messages, or a collective's exchange, costs no frame (and no wake-up of the peer) per message.
     */
    private boolean acknowledgeUrgent() {
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

    /** Sends the oldest queued resend; false when no subflow has room for it. */
    private boolean resendOne() {
        int r = (int) resendHead & (FRAME_RING - 1);
        long seq = resendEntry[r];
        long index = resendFrame[r];
        int i = ledger.slot(seq);
        long acked = msnsClaimed - flow.unacknowledged();
        if (seq < ledger.head || ledger.isAcknowledged(i, acked)) {
            resendHead++;
            return true;
        }
        beginSegmenter(again, i);
        Subflow s = sendFrame(again, ledger.firstFrame[i] + index, index);
        if (s == null) {
            return false;
        }
        fence.resent(s.index, ledger.msnEnd[i] - ledger.messages[i]);
        resendHead++;
        framesResent++;
        bytesResent += again.payloadLength();
        return true;
    }

    /**
     * Whether ledger entry {@code i} is a SEND or WRITE (with immediate or not) of one element and at most a
     * segment: one message of one frame, which {@link #sendSingle} writes whole where its subflow sends it from.
     */
    private boolean isSingleFrame(int i) {
        int kind = ledger.kind[i];
        return kind >= WorkRequest.SEND && kind <= WorkRequest.RDMA_WRITE_WITH_IMM && ledger.length[i] <= framing.segmentSize()
                && ledger.local[i].count() == 1;
    }

    /**
     * Sends one-frame entry {@code i} ({@link #isSingleFrame}) by writing its header and payload straight into the
     * staging buffer of the subflow it leaves on, stamped: no segmenter begun, no header copied. False (nothing
     * sent) when that subflow cannot stage it now; the general path then offers it, or finds there is no room.
     */
    private boolean sendSingle(int i) {
        int kind = frameKind(ledger.kind[i]);
        int length = ledger.length[i];
        int bytes = Segmenter.singleFrameBytes(kind, length);
        Subflow s = pick(bytes);
        if (s == null) {
            return false;
        }
        long at = s.sender.stagingRoom(bytes);
        if (at < 0) {
            return false;
        }
        SgeList local = ledger.local[i];
        MemorySegment out = s.sender.stagingBuffer();
        int headerLength = fresh.writeSingle(kind, ledger.firstMsn[i], ledger.rsn[i], local.segment(0), local.offset(0),
                length, ledger.rkey[i], ledger.remoteOffset[i], ledger.immediate[i], ledger.ackRequest[i], out, at);
        header.wrap(out, at).stamp(s.index, stampMicros, s.echo(stampMicros));
        s.queueStaged(at, headerLength, length);
        frameSubflow[(int) ledger.firstFrame[i] & (FRAME_RING - 1)] = (byte) s.index;
        fence.sentFresh(s.index, ledger.msnEnd[i] - 1);
        return true;
    }

    /**
     * Whether ledger entry {@code i} is a SEND (with immediate or not) of one element and at most
     * {@link #PACKED_MESSAGE_LIMIT} bytes: a message {@link #sendPacked} may put in a frame with others.
     */
    private boolean isPackable(int i) {
        int kind = ledger.kind[i];
        return (kind == WorkRequest.SEND || kind == WorkRequest.SEND_WITH_IMM) && ledger.length[i] <= PACKED_MESSAGE_LIMIT
                && ledger.local[i].count() == 1;
    }

    private int packedRecordBytes(int i) {
        return PackedSends.recordBytes(ledger.length[i], ledger.kind[i] == WorkRequest.SEND_WITH_IMM);
    }

    /**
     * Sends packable entry {@code i}, at the cursor, with the packable entries after it that are ready, as one
     * {@link Opcode#SEND_PACKED} frame written where its subflow sends it from: one header, one stamp and
     * one frame for the receiver to cut for all of them. Each message keeps its own MSN, receive, ledger entry
     * and frame number (a resend sends it in a SEND_ONLY frame of its own). The window or credits may cut
     * the run short; it is sent as far as it got. False (nothing sent or claimed but what {@code i} had) when
     * fewer than two are ready or the subflow cannot stage the frame now.
     */
    private boolean sendPacked(int i) {
        int budget = Math.min(Math.min(PackedSends.MAX_LENGTH, framing.segmentSize()),
                Subflow.STAGED_FRAME_LIMIT - Segmenter.PACKED_HEADER_BYTES);
        int bytes = packedRecordBytes(i);
        long end = cursor + 1;
        while (end < ledger.tail) {
            int j = ledger.slot(end);
            if (ledger.begun[j] || ledger.earlyStatus[j] >= 0 || !isPackable(j)) {
                break;
            }
            int record = packedRecordBytes(j);
            if (bytes + record > budget) {
                break;
            }
            bytes += record;
            end++;
        }
        if (end - cursor < 2 || bytes > budget) {
            return false;
        }
        Subflow s = pick(Segmenter.PACKED_HEADER_BYTES + bytes);
        if (s == null) {
            return false;
        }
        long at = s.sender.stagingRoom(Segmenter.PACKED_HEADER_BYTES + bytes);
        if (at < 0) {
            return false;
        }
        MemorySegment out = s.sender.stagingBuffer();
        long record = at + Segmenter.PACKED_HEADER_BYTES;
        boolean askAcknowledge = false;
        long seq = cursor;
        for (; seq < end && (seq == cursor || begin(seq)); seq++) {
            int j = ledger.slot(seq);
            SgeList local = ledger.local[j];
            record = PackedSends.writeRecord(out, record, local.segment(0), local.offset(0), ledger.length[j],
                    ledger.kind[j] == WorkRequest.SEND_WITH_IMM, ledger.immediate[j]);
            askAcknowledge |= ledger.ackRequest[j];
            ledger.handedFrame(j);
            frameSubflow[(int) ledger.firstFrame[j] & (FRAME_RING - 1)] = (byte) s.index;
        }
        int payload = (int) (record - at - Segmenter.PACKED_HEADER_BYTES);
        fresh.writePackedHeader(ledger.firstMsn[i], ledger.rsn[i], payload, askAcknowledge, out, at);
        header.wrap(out, at).stamp(s.index, stampMicros, s.echo(stampMicros));
        s.queueStaged(at, Segmenter.PACKED_HEADER_BYTES, payload);
        fence.sentFresh(s.index, ledger.msnEnd[i] - 1);
        // The pump moves on from the last entry sent, all of whose one frame is handed now.
        cursor = seq - 1;
        return true;
    }

    /** The segmenter's kind of a SEND or WRITE work request's opcode. */
    private static int frameKind(int op) {
        return switch (op) {
            case WorkRequest.SEND -> Opcode.KIND_SEND;
            case WorkRequest.SEND_WITH_IMM -> Opcode.KIND_SEND_WITH_IMMEDIATE;
            case WorkRequest.RDMA_WRITE -> Opcode.KIND_WRITE;
            case WorkRequest.RDMA_WRITE_WITH_IMM -> Opcode.KIND_WRITE_WITH_IMMEDIATE;
            default -> throw new IllegalArgumentException("work request opcode " + op + " is not a SEND or WRITE");
        };
    }

    /**
     * Writes frame {@code index} of the work request {@code segmenter} holds and offers it to the subflow
     * where it leaves soonest. Returns that subflow, or null (nothing sent) when none has room.
     */
    private Subflow sendFrame(Segmenter segmenter, long globalFrame, long index) {
        int headerLength = segmenter.writeFrame(index, scratch, 0);
        int length = segmenter.payloadLength();
        Subflow s = pick(headerLength + length);
        if (s == null) {
            return null;
        }
        stamp(s, stampMicros);
        boolean taken;
        if (segmenter.isPayloadContiguous()) {
            MemorySegment payload = length == 0 ? scratch : segmenter.source();
            long offset = length == 0 ? 0 : segmenter.payloadOffset();
            taken = s.offer(scratch, headerLength, payload, offset, length);
        } else {
            taken = s.offer(scratch, headerLength, segmenter.sources(), segmenter.payloadPosition(), length);
        }
        if (!taken) {
            return null;
        }
        frameSubflow[(int) globalFrame & (FRAME_RING - 1)] = (byte) s.index;
        return s;
    }

    /** The live subflow with room where {@code bytes} would leave soonest, or null. */
    private Subflow pick(long bytes) {
        if (liveSubflows == 1) {
            // One path: there is nothing to weigh, only room to check.
            for (Subflow s : subflows) {
                if (s != null && !s.dead) {
                    return s.hasRoom(bytes, SUBFLOW_QUEUE_LIMIT) ? s : null;
                }
            }
        }
        int wanted = fence.proofWanted(msnsClaimed);
        Subflow proving = wanted >= 0 ? subflows[wanted] : null;
        if (proving != null && proving.hasRoom(bytes, SUBFLOW_QUEUE_LIMIT)) {
            return proving; // a frame on it after its resends is what lets the fence lift
        }
        double fastest = 0;
        for (Subflow s : subflows) {
            if (s != null && !s.dead && s.rate() > fastest) {
                fastest = s.rate();
            }
        }
        double fallback = fastest > 0 ? fastest : 1.0;
        Subflow best = null;
        double bestCost = Double.MAX_VALUE;
        for (Subflow s : subflows) {
            if (s != null && s.hasRoom(bytes, SUBFLOW_QUEUE_LIMIT)) {
                double cost = s.cost(bytes, fallback);
                if (cost < bestCost) {
                    bestCost = cost;
                    best = s;
                }
            }
        }
        return best;
    }

    /** Claims the MSNs (and credits) of ledger entry {@code seq}; false when the window or credits say wait. */
    private boolean begin(long seq) {
        int i = ledger.slot(seq);
        int kind = ledger.kind[i];
        // Claims hand out MSNs and receive numbers in order, so the next ones are this entry's: the
        // segmenter can be begun (and say how many messages and frames it has) before anything is claimed.
        // A signaled request is waited for, unless signaled lazily; an unsignaled or lazy one only once this side
        // runs short of send queue or message window, which the peer cannot see. The rest is acknowledged lazily.
        ledger.number(i, flow.nextMsn(), flow.nextReceiveSequence(), kind != WorkRequest.RDMA_READ
                && (ledger.signaled[i] && !ledger.lazy[i] || ledger.userEntries * 2 >= config.sendQueueDepth()
                || flow.unacknowledged() * 2 >= framing.messageWindow()));
        boolean single = isSingleFrame(i);
        if (!single) {
            beginSegmenter(fresh, i);
            freshEntry = seq;
        }
        int n = single ? 1 : fresh.messageCount();
        boolean consumes = kind == WorkRequest.SEND || kind == WorkRequest.SEND_WITH_IMM;
        if (kind == WorkRequest.RDMA_WRITE_WITH_IMM) {
            if (!flow.canSend(n, false) || flow.credits() < 1) {
                return false;
            }
        } else if (!flow.canSend(n, consumes)) {
            return false;
        }
        if (msnsClaimed + n > fence.limit() && !fenceAllows(msnsClaimed + n)) {
            return false;
        }
        if (kind == WorkRequest.RDMA_READ && !expectResponses(seq, i, fresh)) {
            return false;
        }
        long frames = single ? 1 : fresh.frameCount();
        if (nextFrame + frames - ledger.oldestFrame(nextFrame) > FRAME_RING) {
            return false;
        }
        if (kind == WorkRequest.RDMA_WRITE_WITH_IMM) {
            if (n > 1) {
                flow.claim(n - 1, false);
            }
            flow.claim(1, true);
        } else {
            flow.claim(n, consumes);
        }
        msnsClaimed += n;
        ledger.begin(i, n, msnsClaimed, nextFrame, frames);
        nextFrame += frames;
        return true;
    }

    /**
     * Whether claiming MSNs up to {@code claimEnd} keeps the copies that may still reach the peer within its reach
     * ({@link ResendFence}); when only time will lift the fence, the pump is woken then.
     */
    private boolean fenceAllows(long claimEnd) {
        long now = System.nanoTime();
        if (fence.allows(claimEnd, now)) {
            return true;
        }
        if (fence.heldByFailedSubflows() && !fenceTimerArmed) {
            fenceTimerArmed = true;
            loop.timeout(handlerId, TAG_FENCE, Math.max(1, fence.goneUntil() - now));
        }
        return false;
    }

    /**
     * Registers the READ responses of entry {@code seq}, whose READ {@code requests} was begun for, with the
     * assembler, message by message as the requests name their sinks; false to try again later.
     */
    private boolean expectResponses(long seq, int i, Segmenter requests) {
        while (ledger.readsExpected[i] < requests.messageCount()) {
            requests.locateReadMessage(ledger.readsExpected[i]);
            if (!assembler.expectReadResponse(readId(seq), requests.readSinkKey(), requests.readSinkOffset(),
                    requests.readLength())) {
                return false;
            }
            ledger.readExpected(i);
        }
        return true;
    }

    /** Read responses are told apart from receives by sign: receives are indexed from 0 up. */
    private static long readId(long seq) {
        return -1 - seq;
    }

    private void beginSegmenter(Segmenter s, int i) {
        int first = ledger.firstMsn[i];
        SgeList local = ledger.local[i];
        switch (ledger.kind[i]) {
            case WorkRequest.SEND -> s.beginSend(first, ledger.rsn[i], local);
            case WorkRequest.SEND_WITH_IMM -> s.beginSendWithImmediate(first, ledger.rsn[i], local, ledger.immediate[i]);
            case WorkRequest.RDMA_WRITE -> s.beginWrite(first, local, ledger.rkey[i], ledger.remoteOffset[i]);
            case WorkRequest.RDMA_WRITE_WITH_IMM -> s.beginWriteWithImmediate(first, ledger.rsn[i], local,
                    ledger.rkey[i], ledger.remoteOffset[i], ledger.immediate[i]);
            case WorkRequest.RDMA_READ -> s.beginReadRequest(first, ledger.rkey[i], ledger.remoteOffset[i], local);
            case SendLedger.READ_RESPONSE -> s.beginReadResponse(first, local, ledger.sinkRkey[i], ledger.sinkOffset[i]);
            default -> throw new IllegalStateException("ledger entry of kind " + ledger.kind[i]);
        }
        if (ledger.ackRequest[i]) {
            s.requestAcknowledge(true);
        }
    }

    /**
     * Sends an ACKNOWLEDGE with the current cumulative MSN and credit limit on {@code on}, or on the
     * subflow with the least queued when null. Returns whether a subflow took it.
     */
    private boolean sendAcknowledge(Subflow on) {
        Subflow s = on != null ? on : pick(FrameHeader.LENGTH);
        if (s == null || s.dead) {
            return false;
        }
        int msn = assembler.acknowledgedMsn();
        int credit = assembler.creditLimit();
        FlowControl.writeAcknowledge(header.wrap(scratch, 0), msn, credit, false, false);
        if (framing.icrcEnabled()) {
            header.icrc(icrc.compute(scratch, 0));
        }
        stamp(s, QpClock.micros());
        if (!s.offer(scratch, FrameHeader.LENGTH, scratch, 0, 0)) {
            return false;
        }
        ackedMsnSent = msn;
        creditSent = credit;
        ackDue = false;
        assembler.acknowledgeSent(msn);
        return true;
    }

    /**
     * Sets the per-subflow fields of the frame in {@code scratch} (outside the ICRC): the subflow, this side's
     * timestamp and the echo of the peer's, from which the peer measures the subflow's round trip.
     */
    private void stamp(Subflow s, int nowMicros) {
        header.wrap(scratch, 0).stamp(s.index, nowMicros, s.echo(nowMicros));
    }

    // ---------------------------------------------------------------- receiving

    void onFramesReceived() {
        if (closed) {
            return; // a closed subflow's placement ended after the close: the rings are freed
        }
        try {
            if (assembler.isInError() && state != QpState.ERROR) {
                onViolation(assembler.error(), "the peer broke the protocol: " + FrameError.name(assembler.error()));
            }
            harvest();
            scheduleEndOfTurn();
        } catch (RuntimeException | Error e) {
            onFault("receiving", e);
        }
    }

    /** Moves arrivals, READ requests and acknowledged work requests out; keeps ACK state current. */
    private void harvest() {
        if (state == QpState.ERROR && qp.receiveRing.peek() >= 0) {
            takeReceives(); // one that had to wait behind a held flush: its turn may have come
        }
        takeArrivals();
        if (state == QpState.RTS) {
            takeReadRequests();
        }
        retire();
        if (assembler.acknowledgedMsn() != ackedMsnSent || assembler.creditLimit() != creditSent
                || assembler.isAcknowledgeRequested()) {
            ackDue = true;
        }
    }

    /** Completed receives and READ responses; false if the completion ring filled up first. */
    private boolean takeArrivals() {
        if (!moveArrivals()) {
            return false;
        }
        int r = assembler.resumeCompletions();
        if (r < 0 && r != FrameError.QUEUE_PAIR_IN_ERROR && state != QpState.ERROR) {
            onViolation(r, "completing a message failed: " + FrameError.name(r));
        }
        return true;
    }

    /** Moves the completions the assembler holds into the ring the user polls; false if it filled up first. */
    private boolean moveArrivals() {
        while (true) {
            if (qp.completionRing.claim() < 0) {
                stall();
                return false;
            }
            if (!arrivals.poll(arrived)) {
                break;
            }
            long id = arrived.workRequestId();
            int status = statusOf(arrived.status());
            if (id < 0) {
                ledger.readLanded(ledger.slot(-1 - id), status);
                readResponsesLanded++;
                continue;
            }
            int opcode = arrived.opcode();
            boolean withImm = opcode >= 0 && Opcode.hasImmediate(opcode);
            int wcOpcode = opcode >= 0 && Opcode.kind(opcode) == Opcode.KIND_WRITE_WITH_IMMEDIATE
                    ? WorkCompletion.OP_RECV_RDMA_WITH_IMM : WorkCompletion.OP_RECV;
            completion(receiveIds[(int) id & (receiveIds.length - 1)], status, wcOpcode, arrived.byteCount(), withImm,
                    arrived.immediate());
        }
        return true;
    }

    private static int statusOf(int completionStatus) {
        return switch (completionStatus) {
            case CompletionStatus.SUCCESS -> WorkCompletion.SUCCESS;
            case CompletionStatus.LOCAL_LENGTH_ERROR -> WorkCompletion.LOCAL_LENGTH_ERROR;
            case CompletionStatus.LOCAL_PROTECTION_ERROR -> WorkCompletion.LOCAL_PROTECTION_ERROR;
            case CompletionStatus.REMOTE_ACCESS_ERROR -> WorkCompletion.REMOTE_ACCESS_ERROR;
            case CompletionStatus.FLUSH_ERROR -> WorkCompletion.FLUSH_ERROR;
            default -> WorkCompletion.TRANSPORT_ERROR;
        };
    }

    /** Queues the READ responses the peer asked for. */
    private void takeReadRequests() {
        while (!ledger.isFull() && assembler.pollReadRequest(readRequest)) {
            MemoryRegion source = readRequest.sourceRegion(registry);
            if (source == null) {
                end(WorkCompletion.LOCAL_PROTECTION_ERROR, "READ request names a region that went away: " + readRequest,
                        FrameError.REMOTE_ACCESS, readRequest.msn());
                return;
            }
            ledger.nextLocal().clear().add(source.segment(), readRequest.regionOffset(), readRequest.length());
            ledger.append(SendLedger.READ_RESPONSE, 0, false, false, 0, 0, 0, readRequest.sinkRkey(), readRequest.sinkOffset());
        }
    }

    /** Completes ledger entries from the oldest while they are done; false if the completion ring filled. */
    private boolean retire() {
        long acked = msnsClaimed - flow.unacknowledged();
        fence.acknowledged(acked);
        while (!ledger.isEmpty()) {
            int i = ledger.slot(ledger.head);
            int kind = ledger.kind[i];
            // Acknowledged work succeeded even if the queue pair failed since: the peer has it.
            boolean done = ledger.isDone(i, acked);
            int status;
            if (ledger.earlyStatus[i] >= 0) {
                status = ledger.earlyStatus[i];
            } else if (!done && (state != QpState.ERROR || ledger.readsDone[i] < ledger.readsExpected[i])) {
                // A READ in ERROR waits for the assembler to flush each response it expects, which it does only
                // once no kernel receive can still write into the sink: then the memory is the user's again.
                return true;
            } else if (kind == WorkRequest.RDMA_READ && ledger.readStatus[i] >= 0) {
                status = ledger.readStatus[i];
            } else {
                status = done ? WorkCompletion.SUCCESS : WorkCompletion.FLUSH_ERROR;
            }
            if (kind != SendLedger.READ_RESPONSE && (ledger.signaled[i] || status != WorkCompletion.SUCCESS)) {
                if (!completion(ledger.workRequestId[i], status, completionOpcode(kind),
                        status == WorkCompletion.SUCCESS ? ledger.length[i] : 0, false, 0)) {
                    return false;
                }
            }
            if (cursor == ledger.head) {
                cursor++;
            }
            ledger.retireHead();
            if (status != WorkCompletion.SUCCESS && state != QpState.ERROR) {
                fail(status, "work request failed: " + WorkCompletion.statusName(status));
            }
        }
        return true;
    }

    private static int completionOpcode(int kind) {
        return switch (kind) {
            case WorkRequest.SEND, WorkRequest.SEND_WITH_IMM -> WorkCompletion.OP_SEND;
            case WorkRequest.RDMA_READ -> WorkCompletion.OP_RDMA_READ;
            default -> WorkCompletion.OP_RDMA_WRITE;
        };
    }

    /** Writes one completion to the ring the user polls; false when it is full. */
    private boolean completion(long id, int status, int opcode, int bytes, boolean withImm, int imm) {
        SpscRing cq = qp.completionRing;
        long at = cq.claim();
        if (at < 0) {
            stall();
            return false;
        }
        QueueEntries.writeCompletion(cq.memory(), at, id, status, opcode, bytes, withImm, imm);
        cq.publish();
        if (completionListener != null && !notifyQueued) {
            notifyQueued = true;
            notify.raise();
        }
        return true;
    }

    /** Runs {@code listener} on the loop thread once per loop turn that added completions (null: none). */
    void completionListener(Runnable listener) {
        this.completionListener = listener;
    }

    private void notifyListener() {
        notifyQueued = false;
        Runnable listener = completionListener;
        if (listener != null && !closed) {
            try {
                listener.run();
            } catch (RuntimeException | Error e) {
                onFault("the completion listener", e);
            }
        }
    }

    /** The completion ring is full: the user's next poll wakes the loop to continue. */
    private void stall() {
        qp.markCompletionsStalled();
    }

    /** The user polled a full completion ring: continue what it stopped. */
    void onCompletionsPolled() {
        if (closed) {
            return;
        }
        try {
            harvest();
            takePosted();
            pump();
        } catch (RuntimeException | Error e) {
            onFault("resuming completions", e);
        }
    }

    /**
     * Has {@link #endOfTurn()} run once this turn's completions are handled. A signal, not a task: a task queue
     * full of other queue pairs' work would refuse it, and the queue pair would then move only on its heartbeat.
     */
    private void scheduleEndOfTurn() {
        if (!endOfTurnQueued && (ackDue || state == QpState.RTS)) {
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
            takePosted();
            endOfTurnQueued = false;
            pump(); // an urgent ACKNOWLEDGE leaves first; one that is not rides on a frame it sends, or waits
        } catch (RuntimeException | Error e) {
            endOfTurnQueued = false;
            onFault("the end of a loop turn", e);
        }
    }

    // ---------------------------------------------------------------- heartbeat, errors, close

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        if (closed) {
            return;
        }
        try {
            onTimer(tag);
        } catch (RuntimeException | Error e) {
            onFault("a timer", e);
        }
    }

    private void onTimer(int tag) {
        if (tag == TAG_FENCE) {
            fenceTimerArmed = false;
            pump();
        } else if (tag == TAG_TICK) {
            tickArmed = false;
            if (state == QpState.RTS) {
                heartbeat();
                tickArmed = true;
                loop.timeout(handlerId, TAG_TICK, tickNanos);
            }
        }
    }

    private void heartbeat() {
        long now = System.nanoTime();
        long silence = config.silenceTimeout().toNanos();
        for (Subflow s : subflows) {
            if (s == null || s.dead) {
                continue;
            }
            if (s.receivedSinceTick()) {
                s.silentSinceNanos = now;
            } else if (now - s.silentSinceNanos > silence) {
                onSubflowFailed(s, 0, Errno.ETIMEDOUT, "silent for " + config.silenceTimeout().toMillis() + " ms");
                continue;
            }
            if (!s.sentSinceTick) {
                sendAcknowledge(s);
            }
            s.sentSinceTick = false;
        }
        if (ackDue && state == QpState.RTS) {
            sendAcknowledge(null); // owed since a frame left: no acknowledgement waits longer than a tick
        }
        checkSendProgress(now);
        pump();
    }

    /**
     * Fails the queue pair with {@link WorkCompletion#RETRY_EXCEEDED_ERROR} when work the peer owes an answer
     * (messages sent and not acknowledged, READ responses expected, READ responses this side owes) has made no
     * progress for the send timeout: no acknowledgement, no byte handed to a subflow's kernel socket, no READ
     * response landing. Heartbeats keep the subflows alive, so silence alone never catches a peer that sends
     * them but stopped reading; this does, as verbs' retry count does.
     */
    private void checkSendProgress(long now) {
        if (state != QpState.RTS) {
            return;
        }
        long mark = msnsClaimed - flow.unacknowledged() + readResponsesLanded;
        for (Subflow s : subflows) {
            if (s != null) {
                mark += s.bytesSent;
            }
        }
        boolean waiting = flow.unacknowledged() > 0 || ledger.isHeadBegun();
        if (mark != progressMark || !waiting) {
            progressMark = mark;
            progressSinceNanos = now;
            return;
        }
        long stuck = now - progressSinceNanos;
        if (stuck > config.sendTimeout().toNanos()) {
            blame(NegativeAcknowledge.NO_MESSAGE, WorkCompletion.RETRY_EXCEEDED_ERROR); // the oldest outstanding
            fail(WorkCompletion.RETRY_EXCEEDED_ERROR, "no progress for " + stuck / 1_000_000 + " ms (send timeout "
                    + config.sendTimeout().toMillis() + " ms) with " + flow.unacknowledged()
                    + " messages unacknowledged: the peer stopped taking them");
        }
    }

    /**
     * What an entry of the loop into this queue pair threw (the user's completion listener, or a fault of zcnet's
     * own): fails this queue pair alone with {@link WorkCompletion#GENERAL_ERROR} naming it, where letting it
     * through would end the loop thread and every queue pair of the context with it. Only a virtual machine
     * error (out of memory, a stack overflow) goes on: nothing on this thread can be trusted after one.
     */
    private void onFault(String where, Throwable t) {
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
            if (!closed) {
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
    private void onViolation(int frameError, String reason) {
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
        retire();
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
    private void blame(int msn, int status) {
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
    private void end(int status, String reason, int syndrome, int failedMsn) {
        if (state == QpState.ERROR) {
            return;
        }
        errorStatus = status;
        errorReason = reason;
        // What arrived whole before the failure completes before ERROR shows: a thread that sees ERROR and then
        // polls finds those completions (the state is volatile, written after the ring's publish). Only the move:
        // resuming held-back completions may fail the queue pair, which must find this one already in ERROR.
        moveArrivals();
        state = QpState.ERROR;
        if (syndrome != FrameError.OK) {
            NegativeAcknowledge.write(header.wrap(scratch, 0), assembler.acknowledgedMsn(), syndrome, failedMsn);
            if (framing.icrcEnabled()) {
                header.icrc(icrc.compute(scratch, 0));
            }
        }
        long linger = config.silenceTimeout().toNanos();
        for (Subflow s : subflows) {
            if (s != null && !s.dead) {
                if (syndrome != FrameError.OK) {
                    header.wrap(scratch, 0).subflow(s.index);
                    qp.context().lingerStarted();
                    s.end(scratch, FrameHeader.LENGTH, linger, qp.context()::lingerEnded);
                } else {
                    s.close(handlerId, TAG_CLOSE);
                }
                liveSubflows--;
            }
        }
        if (!assembler.isInError()) {
            assembler.failTransport();
        }
        harvest();
        takeReceives();
        if (onError != null) {
            onError.accept(reason);
        }
    }

    void onError(Consumer<String> listener) {
        this.onError = listener;
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

    /** Closes every subflow and flushes; the rings stay readable. */
    void close() {
        if (!closed) {
            fail(WorkCompletion.FLUSH_ERROR, "closed");
            closed = true;
            loop.unregisterHandler(handlerId);
            deferred.close();
        }
    }

    String describe() {
        StringBuilder b = new StringBuilder("QueuePair[").append(state);
        if (errorReason != null) {
            b.append(" (").append(errorReason).append(')');
        }
        b.append(' ').append(flow).append(" ledger=").append(ledger.tail - ledger.head).append(" resent=")
                .append(framesResent);
        for (Subflow s : subflows) {
            if (s != null) {
                b.append(' ').append(s);
            }
        }
        return b.append(']').toString();
    }
}
