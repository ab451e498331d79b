package io.zcnet.qp;

import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Opcode;
import io.zcnet.framing.PackedSends;
import io.zcnet.framing.Segmenter;
import io.zcnet.framing.SgeList;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The send pump, rxe's requester ({@code rxe_req.c}): turns the ledger's work requests into frames, in posting
 * order, and hands them to subflows while there are frames, message window, credits and room. It owns the send
 * window (which MSNs and frames are claimed, and the {@link ResendFence} on new claims) and the resends of frames
 * whose subflow failed. A work request claims its MSNs (and, for receive-consuming messages, credits) from
 * {@link FlowControl} once, when it is begun; its frames may then leave over several pumps. Owner thread of the
 * loop; nothing here allocates per work request or frame.
 */
final class Requester {
    /** The least time a failed subflow's frames count as able to arrive after its reset; twice its round trip if longer. */
    private static final long FAILED_SUBFLOW_GRACE_NANOS = 10_000_000;
    /** Most bytes of a SEND that {@link #sendPacked} puts in a frame with others; a larger one has its own. */
    private static final int PACKED_MESSAGE_LIMIT = 512;

    private final QpEngine engine;
    private final SendLedger ledger;
    private final FlowControl flow;
    private final FramingConfig framing;
    private final QpConfig config;
    private final ResendQueue resends;
    private final ResendFence fence;
    private final Segmenter fresh;
    /** The ledger entry {@link #fresh} was begun for last; a one-frame entry is begun there only when it must be. */
    private long freshEntry = -1;
    private final Segmenter again;
    private final FrameHeader header = new FrameHeader();
    private final MemorySegment scratch;
    private long nextFrame;
    private long msnsClaimed;
    /** The ledger entry whose frames go out next. */
    private long cursor;
    private boolean fenceTimerArmed;
    /** The timestamp of frames handed out in this pump. */
    private int stampMicros;

    Requester(QpEngine engine, Arena arena) {
        this.engine = engine;
        this.ledger = engine.ledger;
        this.flow = engine.flow;
        this.framing = engine.framing;
        this.config = engine.config;
        this.resends = engine.resends;
        this.fence = new ResendFence(config.maxSubflows());
        this.fresh = new Segmenter(framing, engine.icrc);
        this.again = new Segmenter(framing, engine.icrc);
        this.scratch = arena.allocate(64, 8);
    }

    /** {@return the MSNs the peer acknowledged, counted from the start} */
    long acknowledged() {
        return msnsClaimed - flow.unacknowledged();
    }

    /** The peer acknowledged {@code acknowledged} MSNs: lifts the fence floors that covers. */
    void onAcknowledged(long acknowledged) {
        fence.acknowledged(acknowledged);
    }

    /** The subflow whose resends wait for their proof, for the next frame to leave on; -1 when there is none. */
    int proofWanted() {
        return fence.proofWanted(msnsClaimed);
    }

    /** Whether frames wait to be handed to a subflow: ledger entries not all sent, or resends. */
    boolean hasUnsent() {
        return cursor != ledger.tail || resends.hasResends();
    }

    /** Ledger entry {@code seq}, the oldest, retires: the pump no longer looks at it. */
    void retiring(long seq) {
        if (cursor == seq) {
            cursor++;
        }
    }

    /** The timer the fence asked for ran out: claims it held may go now. */
    void onFenceTimer() {
        fenceTimerArmed = false;
        pump();
    }

    /**
     * Live subflow {@code s} failed and was reset: its unacknowledged frames go again on the others, and the
     * fence keeps what it may still deliver in the peer's reach.
     */
    void subflowFailed(Subflow s) {
        fence.failed(s.index, acknowledged(), System.nanoTime(),
                Math.max(FAILED_SUBFLOW_GRACE_NANOS, 2 * (long) (s.srttMicros() * 1000)));
        resends.queue(s.index, ledger, acknowledged());
        pump();
    }

    /** {@return the messages (MSNs) a READ into {@code sinks} takes} */
    long readMessages(SgeList sinks) {
        return fresh.readRequestMessages(sinks);
    }

    /** Hands frames to subflows while there are frames, window, credits and room. */
    void pump() {
        SubflowSet subflows = engine.subflows;
        if (engine.failure.state() != QpState.RTS || subflows.live() == 0) {
            return;
        }
        AcknowledgePolicy acks = engine.acks;
        stampMicros = QpClock.micros();
        acks.sendIfUrgent();
        while (true) {
            if (resends.hasResends()) {
                acks.ride();
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
            acks.ride();
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
        subflows.flush();
    }

    /** Sends the oldest queued resend; false when no subflow has room for it. */
    private boolean resendOne() {
        long seq = resends.headEntry();
        long index = resends.headFrame();
        int i = ledger.slot(seq);
        if (seq < ledger.head || ledger.isAcknowledged(i, acknowledged())) {
            resends.skip();
            return true;
        }
        beginSegmenter(again, i);
        Subflow s = sendFrame(again, ledger.firstFrame[i] + index, index);
        if (s == null) {
            return false;
        }
        fence.resent(s.index, ledger.msnEnd[i] - ledger.messages[i]);
        resends.resent(again.payloadLength());
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
        Subflow s = engine.subflows.pick(bytes);
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
        resends.carried(ledger.firstFrame[i], s.index);
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
        Subflow s = engine.subflows.pick(Segmenter.PACKED_HEADER_BYTES + bytes);
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
            resends.carried(ledger.firstFrame[j], s.index);
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
        Subflow s = engine.subflows.pick(headerLength + length);
        if (s == null) {
            return null;
        }
        // The per-subflow fields, outside the ICRC: the subflow, this side's timestamp and the echo of the
        // peer's, from which the peer measures the subflow's round trip.
        header.wrap(scratch, 0).stamp(s.index, stampMicros, s.echo(stampMicros));
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
        resends.carried(globalFrame, s.index);
        return s;
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
        if (!resends.fits(ledger.oldestFrame(nextFrame), nextFrame, nextFrame + frames)) {
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
            engine.loop.timeout(engine.handlerId, QpEngine.TAG_FENCE, Math.max(1, fence.goneUntil() - now));
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
            if (!engine.assembler.expectReadResponse(readId(seq), requests.readSinkKey(), requests.readSinkOffset(),
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
}
