package io.zcnet.framing;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Receive side of one queue pair direction: validates frames, places their payload and completes
 * messages in MSN order, as the DDP untagged and tagged models do (RFC 5041 sections 4.1 and 4.2) and
 * with the completion and error semantics of verbs (ibv_post_recv(3), ibv_poll_cq(3)).
 *
 * <ul>
 *   <li><b>Placement.</b> SEND frames go to the posted receive their RSN names (the receive sequence
 *   number every frame of a receive-consuming message carries, {@link UntaggedExtension}), at the frame's
 *   message offset in the receive's pieces taken in order (a verbs scatter list), at once, whatever arrived
 *   before them; tagged frames (RDMA WRITE, READ RESPONSE) go to
 *   the region their extension names, after the registry has checked key, rights and bounds. A frame is
 *   placed whole or not at all, and nothing is ever written outside a posted buffer or a permitted
 *   region.</li>
 *   <li><b>Any order, any number of times.</b> Each message in the window has a preallocated bitmap of
 *   its segments (every frame sits at a segment-aligned offset), so a retransmitted frame is recognised
 *   and ignored, and a message completes exactly once, when its last segment is placed.</li>
 *   <li><b>In-order completion.</b> Completions are emitted strictly in MSN order (which is posting
 *   order of the receives), each with status, opcode, byte count and immediate data. Receive-consuming
 *   messages (SEND, SEND and WRITE with immediate) take posted receives in MSN order, and their RSNs must
 *   say so: an RSN that names a receive not posted yet is {@link FrameError#RECEIVER_NOT_READY} (the peer
 *   overran its credits); one that differs between frames of a message is
 *   {@link FrameError#INCONSISTENT_MESSAGE}; one that names a consumed receive, a receive another message
 *   holds, or breaks MSN order is {@link FrameError#BAD_RECEIVE_SEQUENCE}. Each of these is judged in
 *   constant work when the frame arrives, except a receive the RSNs leave out, which shows when the message
 *   after the gap retires, before any completion could carry the wrong receive.</li>
 *   <li><b>Back-pressure, not failure.</b> A message that is complete while the completion queue or the
 *   queue of READ requests to answer is full stays complete but unretired: the acknowledged MSN stops, so
 *   the peer's MSN window stops it. Taking a READ request ({@link #pollReadRequest}) resumes by itself; after
 *   polling the completion queue call {@link #resumeCompletions()} ({@link #isHeldBack()} says whether it is
 *   needed). Receives and reads are posted only while the completion queue can hold a completion for every
 *   one outstanding, so the flush after an error always fits.</li>
 *   <li><b>Window.</b> At most {@link FramingConfig#messageWindow()} messages are tracked; an MSN up to a
 *   window behind the oldest incomplete message is a duplicate of a completed one and is ignored, one
 *   further ahead than the window is a protocol error. MSNs wrap at 2^16.</li>
 *   <li><b>Errors.</b> The first violation moves the queue pair to ERROR: the message that failed gets its
 *   error status if it owns a receive, every other outstanding receive and read is flushed, in posting
 *   order, and later frames are refused with {@link FrameError#QUEUE_PAIR_IN_ERROR}. A flush completion
 *   hands a buffer back to the application, so while any direct placement is still in flight
 *   ({@link #pendingPlacements()} &gt; 0: the kernel may still be writing) the flush waits; the
 *   {@link #commit} or {@link #abort} of the last one (both then answer
 *   {@link FrameError#QUEUE_PAIR_IN_ERROR}) emits it, still in posting order.</li>
 * </ul>
 *
 * <p>Two ways in. {@link #onFrame} takes a whole frame, payload included, and copies the payload to its
 * place: for small segments that arrived in a buffer anyway. <b>Direct placement</b> (docs/architecture.md,
 * the receive path) takes the header first: {@link #beginPlacement} judges it and names, in a reusable
 * {@link PlacementTarget}, the exact bytes of the posted receive or registered region the payload belongs
 * in; the caller has the kernel receive the payload there ({@code recv} with {@code MSG_WAITALL}) and then
 * calls {@link #commit} (or {@link #abort} if that receive failed). Both ways share one judgement and one
 * bookkeeping, so they may be mixed, even for the segments of one message. A placement in flight
 * <em>reserves</em> its segment: a message with a reservation never completes, and a LAST frame below a
 * reserved segment contradicts it ({@link FrameError#INCONSISTENT_MESSAGE}); it holds the receive its frame
 * names, which no other message may then take; so no payload can land in a buffer that was already
 * completed. And it {@linkplain MemoryRegion#pin() pins} its region, so the region cannot be deregistered
 * under the kernel's write. (A placement whose header the ICRC would have refused holds its receive only
 * until its commit fails the queue pair or its abort lets the receive go.)
 *
 * <p><b>One copy per segment, none lost.</b> Multipath resends a segment on another subflow when the one it
 * went out on fails, so two copies may meet here while the first is still being received. Each segment is
 * placed by exactly one copy, and a copy is dropped ({@link #DUPLICATE}) only once another copy is placed:
 * a copy of a segment that a direct placement is receiving right now is {@link #DEFERRED}, because that
 * receive may still fail. The caller keeps it and offers it again after the placement ends: after its
 * {@link #commit} the kept copy is a {@link #DUPLICATE}, after its {@link #abort} it is placed. The rule is
 * per segment and idempotent: however many copies arrive, by whichever path, the segment's bytes count
 * once, and never are two receives writing into it at once.
 *
 * <p>Receives are posted as verbs posts them, by local key, offset and length; the key is checked against
 * the {@link MemoryRegistry} (LOCAL_WRITE) when posted and the region's validity again when data lands.
 *
 * <p>Since every receive-consuming frame names its receive, a SEND that overtakes an earlier message (a
 * WRITE whose last frame, on another subflow, has not come yet) is placed at once; only its completion
 * waits for the messages before it. {@link #DEFERRED} is left for copies of a segment being received.
 *
 * <p><b>Bounded work per frame.</b> Judging a frame is constant work whatever the window (2^15 at most) and
 * the arrival order: its message is found by MSN, its receive by RSN, and whether another message holds
 * that receive, or its neighbours, by an inverse map; a frame offered again while it is still deferred
 * costs no pass over its payload (nothing of it is used until it can be placed, and its ICRC is verified
 * then).
 *
 * <p>Steady state allocates nothing: the window's state, bitmaps, completion queue and read-request ring
 * are arrays sized at construction; placement targets are caller-owned holders. Not thread-safe: owned
 * by one thread (the queue pair's receive loop).
 *
 * <p>This class is the entry point: it checks arguments, validates headers and verifies ICRCs, and hands
 * the rest to package-private parts: {@link MessageSlots} (what is known about each message of the window),
 * {@link FrameJudge} (where a frame may go, changing nothing), {@link DirectPlacements} (reservations, receive
 * holds and pins of placements in flight), {@link MessageCompletion} (in-order completion and back-pressure),
 * {@link QueuePairError} (ERROR and its flush), {@link ExpectedReads} and {@link ReadRequestQueue} (READ
 * responses expected, READ requests to answer).
 */
public final class MessageAssembler {

    /** {@link #onFrame} and {@link #commit} result: the frame was placed (or, for an ACKNOWLEDGE, applied);
     *  {@link #beginPlacement} result: receive the payload into the target, then commit. */
    public static final int ACCEPTED = 1;
    /** Result: the frame repeats a segment already placed, or a completed message; forget it. */
    public static final int DUPLICATE = 2;
    /**
     * Result: the frame cannot be placed yet: it is a copy of a segment that a direct placement is receiving
     * right now, and that receive may still fail. Keep it and offer it again (through {@link #onFrame}) once
     * that placement is committed (the copy is then a {@link #DUPLICATE}) or aborted (it is then placed).
     */
    public static final int DEFERRED = 3;

    private final int segmentSize;
    private final boolean icrcEnabled;
    private final MemoryRegistry registry;
    private final ReceiveQueue receives;
    private final CompletionQueue completions;
    private final FlowControl sendFlow;
    private final MessageSlots slots;
    private final ExpectedReads expectedReads;
    private final ReadRequestQueue readRequests;
    private final FrameJudge judge;
    private final DirectPlacements placements;
    private final QueuePairError failure;
    private final MessageCompletion completion;
    private final FrameHeader header = new FrameHeader();
    /** The SEND_ONLY frame header a message of a packed frame stands for, when the judge must see one. */
    private final MemorySegment unpacked = Arena.ofAuto().allocate(FrameHeader.LENGTH + UntaggedExtension.LENGTH, 8);
    private final Icrc icrc;
    private final int maxReceiveSge;
    /** The one piece of a receive posted by key, offset and length. */
    private final SgeList single = new SgeList(1);
    private final SgeCursor spans = new SgeCursor();

    private int peerError = FrameError.OK;
    private int peerFailedMsn = NegativeAcknowledge.NO_MESSAGE;
    private long framesAccepted;
    private long duplicates;
    /** The MSN of the last frame that asked for an acknowledgement, while that is not yet answered. */
    private boolean ackRequested;
    private int ackRequestedMsn;
    /** Passes of the ICRC over a frame: a work counter for tests, never timed. */
    private long icrcPasses;

    /**
     * An assembler whose receives are one piece each; see the full constructor.
     *
     * @param config negotiated segment size, ICRC and window
     * @param registry regions that tagged frames and read requests may name
     * @param receiveCapacity posted receives at most outstanding, a power of two
     * @param completions where completed receives and reads are reported
     * @param sendFlow this queue pair's send direction, which ACKNOWLEDGEs update
     */
    public MessageAssembler(FramingConfig config, MemoryRegistry registry, int receiveCapacity,
                            CompletionQueue completions, FlowControl sendFlow) {
        this(config, registry, receiveCapacity, 1, completions, sendFlow);
    }

    /**
     * An assembler for one queue pair's receive direction. Owner thread only, like the connection that
     * feeds it frames.
     *
     * @param config          negotiated segment size, ICRC and window
     * @param registry        regions that tagged frames and read requests may name
     * @param receiveCapacity posted receives at most outstanding, a power of two
     * @param maxReceiveSge   pieces one posted receive may be scattered over, at least 1 (the
     *                        {@code max_recv_sge} of a verbs queue pair)
     * @param completions     where completions go, owned by this assembler: a receive or read is accepted
     *                        only while the queue has room for a completion of every one outstanding, so
     *                        neither a success nor a flush is ever lost; size it to {@code receiveCapacity}
     *                        plus the reads you keep outstanding
     * @param sendFlow        the opposite direction's flow control, which ACKNOWLEDGE frames update
     */
    public MessageAssembler(FramingConfig config, MemoryRegistry registry, int receiveCapacity, int maxReceiveSge,
                            CompletionQueue completions, FlowControl sendFlow) {
        this(config, registry, receiveCapacity, maxReceiveSge, completions, sendFlow, new Icrc());
    }

    /**
     * An assembler as the constructor above makes it, checking ICRCs with {@code icrc}, which the owner thread's
     * other framers may share.
     *
     * @param config          negotiated segment size, ICRC and window
     * @param registry        regions that tagged frames and read requests may name
     * @param receiveCapacity posted receives at most outstanding, a power of two
     * @param maxReceiveSge   pieces one posted receive may be scattered over, at least 1
     * @param completions     where completions go, owned by this assembler (see the constructor above)
     * @param sendFlow        the opposite direction's flow control, which ACKNOWLEDGE frames update
     * @param icrc            the owner thread's calculator
     */
    public MessageAssembler(FramingConfig config, MemoryRegistry registry, int receiveCapacity, int maxReceiveSge,
                            CompletionQueue completions, FlowControl sendFlow, Icrc icrc) {
        if (config == null || registry == null || completions == null || sendFlow == null || icrc == null) {
            throw new IllegalArgumentException("config, registry, completions, sendFlow and icrc are required");
        }
        this.icrc = icrc;
        if (maxReceiveSge < 1) {
            throw new IllegalArgumentException("maxReceiveSge must be at least 1, got " + maxReceiveSge);
        }
        this.segmentSize = config.segmentSize();
        this.icrcEnabled = config.icrcEnabled();
        this.registry = registry;
        this.maxReceiveSge = maxReceiveSge;
        this.receives = new ReceiveQueue(receiveCapacity, maxReceiveSge);
        this.completions = completions;
        this.sendFlow = sendFlow;
        this.slots = new MessageSlots(config.messageWindow(), segmentSize, receives.capacity());
        this.expectedReads = new ExpectedReads(config.messageWindow());
        this.readRequests = new ReadRequestQueue(config.messageWindow());
        this.judge = new FrameJudge(config, registry, receives, slots, expectedReads);
        this.placements = new DirectPlacements(slots, segmentSize);
        this.failure = new QueuePairError(slots, receives, expectedReads, completions, placements);
        this.completion = new MessageCompletion(segmentSize, slots, receives, expectedReads, readRequests, completions,
                failure);
    }

    // ---------------------------------------------------------------- posting

    /**
     * Posts a receive of {@code length} bytes at {@code offset} of the region whose local key is
     * {@code lkey} (an {@code ibv_sge} of ibv_post_recv(3)): {@link #postReceive(long, SgeList)} with one
     * piece.
     *
     * @param workRequestId reported in the receive's completion
     * @param lkey the local key of a region that grants {@link Access#LOCAL_WRITE}
     * @param offset where the receive starts in the region
     * @param length the most bytes the receive takes
     * @return false, posting nothing, when the receive queue is full
     */
    public boolean postReceive(long workRequestId, int lkey, long offset, long length) {
        return postReceive(workRequestId, single.clear().add(lkey, offset, length));
    }

    /**
     * Posts a receive scattered over the pieces of {@code sges}, each named by local key (the {@code sg_list}
     * of ibv_post_recv(3)); SEND messages fill receives in posting order, and each receive's pieces in list
     * order: a message longer than all of them together fails with
     * {@link CompletionStatus#LOCAL_LENGTH_ERROR}. Every piece's region must grant
     * {@link Access#LOCAL_WRITE}. The list is resolved in place and copied, so it may be refilled at once. In
     * ERROR the receive is completed with {@link CompletionStatus#FLUSH_ERROR}, as verbs do: at once, or
     * with the flush still waiting for placements in flight, in posting order. Deregistering a region while
     * the receive is outstanding makes the message that lands in it fail with
     * {@link CompletionStatus#LOCAL_PROTECTION_ERROR}.
     *
     * @return false if the receive queue is full, or the completion queue has no room to spare for one more
     *         receive's completion (poll it): nothing posted
     * @param workRequestId reported in the receive's completion
     * @param sges the receive's pieces, named by local keys
     * @throws IllegalArgumentException if the list has no piece or more than {@code maxReceiveSge}, a piece
     *                                  is given as memory rather than by key, or a key does not name a live
     *                                  local region with LOCAL_WRITE holding its range
     */
    public boolean postReceive(long workRequestId, SgeList sges) {
        checkReceive(workRequestId, sges);
        if (!completionReserved()) {
            return false;
        }
        if (failure.isSet() && !failure.owesFlush()) {
            return completions.offer(workRequestId, CompletionStatus.FLUSH_ERROR, -1, 0, 0, -1);
        }
        return receives.offer(workRequestId, sges);
    }

    /**
     * {@return the empty list of the next receive, to fill in place with pieces named by local keys and then post
     * with {@link #postClaimedReceive}; null when {@link #postReceive(long, SgeList)} would return false for want
     * of room} For a caller that reads receives from a ring of its own: it spares {@code postReceive}'s copy of
     * the list. Claiming again before posting hands out the same list, emptied again.
     */
    public SgeList claimReceive() {
        return completionReserved() ? receives.claim() : null;
    }

    /**
     * Posts the receive whose list {@link #claimReceive()} handed out, as {@link #postReceive(long, SgeList)}
     * posts a list: checked and resolved in place, completed with {@link CompletionStatus#FLUSH_ERROR} in ERROR.
     *
     * @param workRequestId reported in the receive's completion
     * @return false, posting nothing and giving the list back, if the room the claim saw was taken since
     * @throws IllegalArgumentException as {@link #postReceive(long, SgeList)}; nothing is posted, and the claim
     *                                  stays open
     * @throws IllegalStateException if no list was claimed since the last receive was posted
     */
    public boolean postClaimedReceive(long workRequestId) {
        SgeList sges = receives.claimed();
        checkReceive(workRequestId, sges);
        if (!completionReserved()) {
            receives.unclaim(); // room taken since the claim (a READ's response expected in between)
            return false;
        }
        if (failure.isSet() && !failure.owesFlush()) {
            receives.unclaim();
            return completions.offer(workRequestId, CompletionStatus.FLUSH_ERROR, -1, 0, 0, -1);
        }
        receives.post(workRequestId);
        return true;
    }

    /** Checks a receive's pieces as verbs checks an ibv_post_recv(3) list, and resolves them in place. */
    private void checkReceive(long workRequestId, SgeList sges) {
        if (sges == null || sges.count() < 1 || sges.count() > maxReceiveSge) {
            throw new IllegalArgumentException("receive " + workRequestId + " has " + (sges == null ? 0 : sges.count())
                    + " scatter elements; this queue pair takes 1.." + maxReceiveSge);
        }
        int status = sges.resolve(registry, Access.LOCAL_WRITE);
        if (status != AccessStatus.OK) {
            int refused = sges.refused();
            throw new IllegalArgumentException("receive " + workRequestId + ": element " + refused + " (lkey 0x"
                    + Integer.toHexString(sges.key(refused)) + " range " + sges.offset(refused) + "+"
                    + sges.length(refused) + ") refused: " + AccessStatus.name(status));
        }
        for (int i = 0; i < sges.count(); i++) {
            if (sges.region(i) == null) {
                throw new IllegalArgumentException("receive " + workRequestId + ": element " + i
                        + " is memory, not a registered region named by key");
            }
        }
    }

    /**
     * Whether the completion queue can take one more receive or read on top of those outstanding: each
     * outstanding one has a free entry kept for it, so its completion (success or flush) is never dropped.
     */
    private boolean completionReserved() {
        return completions.remaining() > receives.size() + expectedReads.size();
    }

    /**
     * Registers a READ this side requested, so the responses naming {@code sinkRkey} from {@code sinkOffset}
     * for {@code length} bytes are accepted; responses complete in the order reads were expected, carrying
     * {@code workRequestId}. Call it once per READ_REQUEST frame sent.
     *
     * <p>{@code sinkRkey} is the sink region's <em>remote</em> key, the {@code sink_rkey} the READ_REQUEST
     * carries (docs/wire-format.md, section 9): a local key never goes on the wire. A response is placed
     * only if it falls inside a read registered here, so that match is the authorisation and the sink needs
     * {@link Access#LOCAL_WRITE} only, not {@link Access#REMOTE_WRITE} (as an ibv_post_send(3) RDMA READ's
     * scatter list needs local write access only).
     *
     * @return false if a window of reads is already outstanding, or the completion queue has no room to
     *         spare for one more completion (poll it)
     * @param workRequestId reported in the READ's completion
     * @param sinkRkey the sink region's remote key, as the READ_REQUEST carries it
     * @param sinkOffset where the response lands in the sink region
     * @param length the bytes the READ_REQUEST asks for
     * @throws IllegalArgumentException if {@code sinkRkey} names no live region with LOCAL_WRITE, or the range
     *                                  is negative, longer than a message or outside the region
     */
    public boolean expectReadResponse(long workRequestId, int sinkRkey, long sinkOffset, int length) {
        if (sinkOffset < 0 || length < 0 || length > FramingConfig.MAX_MESSAGE_SIZE) {
            throw new IllegalArgumentException("sink range " + sinkOffset + "+" + length + " invalid");
        }
        MemoryRegion sink = registry.lookupRemote(sinkRkey);
        if (sink == null || !Access.grants(sink.access(), Access.LOCAL_WRITE) || sinkOffset > sink.size() - length) {
            throw new IllegalArgumentException("read " + workRequestId + ": sink rkey 0x" + Integer.toHexString(sinkRkey)
                    + " range " + sinkOffset + "+" + length + " does not name a live LOCAL_WRITE region range: " + sink);
        }
        if (expectedReads.isFull() || !completionReserved()) {
            return false;
        }
        expectedReads.add(workRequestId, sinkRkey, sinkOffset, length);
        return true;
    }

    /**
     * Takes the oldest validated READ request this side must answer (in MSN order). Taking one makes room
     * for a request held back because the queue was full, which is then retired (and acknowledged).
     *
     * @return false when none is waiting
     * @param into the holder to fill
     */
    public boolean pollReadRequest(ReadRequest into) {
        if (into == null) {
            throw new IllegalArgumentException("into is null");
        }
        if (!readRequests.poll(into)) {
            return false;
        }
        if (completion.isHeldBack() && !failure.isSet()) {
            completion.retire();
        }
        return true;
    }

    /**
     * Retires the messages held back because the completion queue (or the READ request queue) was full;
     * call it after polling the completion queue. Does nothing when nothing is held back.
     *
     * @return {@link #ACCEPTED}, or the negative {@link FrameError} that completing a message raised (the
     *         queue pair is then in ERROR)
     */
    public int resumeCompletions() {
        if (failure.isSet()) {
            return FrameError.QUEUE_PAIR_IN_ERROR;
        }
        return completion.isHeldBack() ? completion.retire() : ACCEPTED;
    }

    /** {@return whether a complete message waits for room in the completion or READ request queue} */
    public boolean isHeldBack() {
        return completion.isHeldBack();
    }

    // ---------------------------------------------------------------- frames, payload supplied

    /**
     * {@link #onFrame(MemorySegment, long, long, MemorySegment, long)} for a contiguous frame.
     *
     * @param frame the memory holding the frame
     * @param offset where the frame starts
     * @param available how many bytes from {@code offset} have arrived
     * @return as {@link #onFrame(MemorySegment, long, long, MemorySegment, long)}
     */
    public int onFrame(MemorySegment frame, long offset, long available) {
        if (frame == null || offset < 0 || available < 0 || offset > frame.byteSize() || available > frame.byteSize() - offset) {
            throw new IllegalArgumentException("range " + offset + "+" + available + " outside the frame segment");
        }
        if (available < FrameHeader.LENGTH) {
            return FrameError.TRUNCATED;
        }
        long payloadAt = offset + FrameHeader.LENGTH + (frame.get(WireLayouts.U16, offset + FrameHeader.EXT_LENGTH_OFFSET) & 0xFFFF);
        return onFrame(frame, offset, available, frame, Math.min(payloadAt, offset + available));
    }

    /**
     * Validates one frame whose header and extension are at {@code offset} of {@code frame}
     * ({@code available} bytes there) and whose payload is at {@code payloadOffset} of {@code payload},
     * and copies the payload to its place: the path for small segments already in a buffer.
     *
     * @return {@link #ACCEPTED}, {@link #DUPLICATE} or {@link #DEFERRED}; {@link FrameError#TRUNCATED} if
     *         the bytes the header announces are not all supplied (nothing changed); any other negative
     *         {@link FrameError}: the frame was refused and the queue pair is now in ERROR
     * @param frame the memory holding the header and extension
     * @param offset where the header starts
     * @param available how many bytes of header and extension from {@code offset} have arrived
     * @param payload the memory holding the payload
     * @param payloadOffset where the payload starts
     */
    public int onFrame(MemorySegment frame, long offset, long available, MemorySegment payload, long payloadOffset) {
        if (frame == null || payload == null) {
            throw new IllegalArgumentException("segments must not be null");
        }
        if (offset < 0 || available < 0 || offset > frame.byteSize() || available > frame.byteSize() - offset
                || payloadOffset < 0 || payloadOffset > payload.byteSize()) {
            throw new IllegalArgumentException("offsets outside their segments");
        }
        if (failure.isSet()) {
            return FrameError.QUEUE_PAIR_IN_ERROR;
        }
        if (available < FrameHeader.LENGTH) {
            return FrameError.TRUNCATED;
        }
        header.wrap(frame, offset).load();
        int result = FrameValidator.validateHeader(header, segmentSize);
        if (result != FrameError.OK) {
            return failure.fail(result, -1, -1);
        }
        int ext = header.extLength();
        long length = header.length();
        boolean contiguous = payload == frame;
        if (available < FrameHeader.LENGTH + ext + (contiguous ? length : 0)
                || length > payload.byteSize() - payloadOffset) {
            return FrameError.TRUNCATED;
        }
        if (Opcode.isPacked(header.opcode())) {
            return onPacked(frame, offset, payload, payloadOffset, (int) length);
        }
        long extOffset = offset + FrameHeader.LENGTH;
        if (completions.remaining() > 0 && judge.isWholeOldestSend(header, frame, extOffset, (int) length)) {
            return count(placeWholeOldestSend(frame, offset, payload, payloadOffset, (int) length));
        }
        // Judging changes nothing, so it may come before the ICRC: nothing judged is used unverified.
        result = judge.judge(header, frame, extOffset, (int) length);
        if (result == DEFERRED) {
            // Nothing of it is used until its segment's placement ends, so it costs no pass over its payload.
            return DEFERRED;
        }
        if (icrcEnabled) {
            icrcPasses++;
            if (!icrc.verify(frame, offset, payload, payloadOffset)) {
                return failure.fail(FrameError.ICRC_MISMATCH, -1, -1);
            }
        }
        return count(place(result, frame, extOffset, payload, payloadOffset, (int) length));
    }

    /** Carries out a judgement: copies an accepted payload and applies the frame, or fails on a violation. */
    private int place(int judged, MemorySegment headers, long extOffset, MemorySegment payload, long payloadOffset,
                      int length) {
        if (judged == ACCEPTED) {
            int result = copyPayload(payload, payloadOffset, length);
            return result == ACCEPTED ? apply(headers, extOffset, length) : result;
        }
        return judged < 0 ? failure.fail(judged, judge.slot, judge.receive) : judged;
    }

    /**
     * A {@link Opcode#SEND_PACKED} frame, whose base header {@link #header} holds: its records are checked
     * and its ICRC verified before any is used, then each message is placed as a SEND_ONLY frame with its
     * numbers would be. A record the judge defers defers the whole frame; kept and offered again, the records
     * before it are duplicates by then.
     */
    private int onPacked(MemorySegment frame, long offset, MemorySegment payload, long payloadOffset, int length) {
        int records = PackedSends.count(payload, payloadOffset, length);
        if (records < 0) {
            return failure.fail(records, -1, -1);
        }
        if (icrcEnabled) {
            icrcPasses++;
            if (!icrc.verify(frame, offset, payload, payloadOffset)) {
                return failure.fail(FrameError.ICRC_MISMATCH, -1, -1);
            }
        }
        int msn = header.msn();
        int rsn = frame.get(WireLayouts.U32, offset + FrameHeader.LENGTH + UntaggedExtension.RSN_OFFSET);
        boolean askAcknowledge = header.ackRequest();
        boolean placed = false;
        long at = payloadOffset;
        for (int k = 0; k < records; k++) {
            int descriptor = PackedSends.descriptor(payload, at);
            boolean immediate = PackedSends.hasImmediate(descriptor);
            int imm = immediate ? PackedSends.immediate(payload, at) : 0;
            int bytes = PackedSends.messageLength(descriptor);
            long bytesAt = at + PackedSends.headerBytes(descriptor);
            int result = placePacked(msn, rsn, immediate, imm, payload, bytesAt, bytes);
            if (result < 0 || result == DEFERRED) {
                return result;
            }
            placed |= result == ACCEPTED;
            msn = Msn.add(msn, 1);
            rsn++;
            at = bytesAt + bytes;
        }
        if (placed) {
            framesAccepted++;
        } else {
            duplicates++;
        }
        if (askAcknowledge) {
            // As for any frame, a repeat asks too; the request is for the frame's last message.
            ackRequested = true;
            ackRequestedMsn = Msn.add(msn, -1);
        }
        return placed ? ACCEPTED : DUPLICATE;
    }

    /**
     * One message of a packed frame: straight into the oldest receive when it is the next to complete, else
     * judged and placed as the SEND_ONLY frame it stands for, written into {@link #unpacked} for the judge.
     */
    private int placePacked(int msn, int rsn, boolean immediate, int imm, MemorySegment payload, long at, int length) {
        int opcode = immediate ? Opcode.SEND_ONLY_WITH_IMMEDIATE : Opcode.SEND_ONLY;
        if (completions.remaining() > 0 && judge.isWholeOldestSend(msn, rsn, length)) {
            int result = copyPayload(payload, at, length);
            return result == ACCEPTED ? completion.completeWholeOldestSend(opcode, imm, length) : result;
        }
        header.wrap(unpacked, 0).fill(FrameHeader.VERSION << FrameHeader.VERSION_SHIFT, opcode, msn, 0, 0, imm, length,
                UntaggedExtension.LENGTH);
        unpacked.set(WireLayouts.U32, FrameHeader.LENGTH + UntaggedExtension.RSN_OFFSET, rsn);
        header.load();
        int judged = judge.judge(header, unpacked, FrameHeader.LENGTH, length);
        return judged == DEFERRED ? DEFERRED : place(judged, unpacked, FrameHeader.LENGTH, payload, at, length);
    }

    /**
     * The whole of the next message to complete, a SEND into the oldest receive: verified, copied and completed
     * straight away, as the general path would, without recording it in its slot first.
     */
    private int placeWholeOldestSend(MemorySegment frame, long offset, MemorySegment payload, long payloadOffset,
                                     int length) {
        if (icrcEnabled) {
            icrcPasses++;
            if (!icrc.verify(frame, offset, payload, payloadOffset)) {
                return failure.fail(FrameError.ICRC_MISMATCH, -1, -1);
            }
        }
        int result = copyPayload(payload, payloadOffset, length);
        return result == ACCEPTED ? completion.completeWholeOldestSend(header, length) : result;
    }

    /** Copies an accepted payload to its place: one destination, or the pieces of a receive it straddles. */
    private int copyPayload(MemorySegment payload, long payloadOffset, int length) {
        if (length == 0) {
            return ACCEPTED;
        }
        try {
            if (judge.scatter == null) {
                MemorySegment.copy(payload, payloadOffset, judge.destination, judge.destinationOffset, length);
                return ACCEPTED;
            }
            spans.over(judge.scatter, judge.scatterPosition, length);
            for (long at = payloadOffset; spans.next(); at += spans.length()) {
                MemorySegment.copy(payload, at, spans.segment(), spans.offset(), spans.length());
            }
            return ACCEPTED;
        } catch (IllegalStateException | WrongThreadException gone) {
            // The destination's memory was freed concurrently (registration refuses confined memory, so a
            // wrong thread cannot happen; caught all the same): an access error, not a crash of the loop.
            return failure.fail(memoryGone(header.opcode()), judge.slot, judge.receive);
        }
    }

    /** The access error of a payload whose memory vanished: the posted receive's, or the peer's region's. */
    private static int memoryGone(int opcode) {
        return Opcode.isTagged(opcode) ? FrameError.REMOTE_ACCESS : FrameError.LOCAL_PROTECTION;
    }

    private int count(int result) {
        if (result == ACCEPTED) {
            framesAccepted++;
        } else if (result == DUPLICATE) {
            duplicates++;
        }
        if (header.ackRequest() && (result == ACCEPTED || result == DUPLICATE)) {
            // A duplicate asks too: its sender may have lost the acknowledgement with a failed subflow.
            ackRequested = true;
            ackRequestedMsn = header.msn();
        }
        return result;
    }

    /**
     * {@return whether a frame asked for an acknowledgement ({@link FrameHeader#FLAG_ACK_REQUEST}) that
     * {@link #acknowledgedMsn()} now gives and that was not yet sent}: the sender waits for it, so it should
     * not wait for a frame of this side to ride on.
     */
    public boolean isAcknowledgeRequested() {
        return ackRequested && Msn.distance(ackRequestedMsn, acknowledgedMsn()) < Msn.MODULUS / 2;
    }

    /**
     * Notes that an ACKNOWLEDGE of {@code ackMsn} was sent: a request for a message up to it is answered.
     *
     * @param ackMsn the MSN the acknowledgement carried
     */
    public void acknowledgeSent(int ackMsn) {
        if (ackRequested && Msn.distance(ackRequestedMsn, ackMsn) < Msn.MODULUS / 2) {
            ackRequested = false;
        }
    }

    // ---------------------------------------------------------------- frames, direct placement

    /**
     * Phase 1 of direct placement: validates the header and extension at {@code offset} of
     * {@code headers} ({@code available} bytes there; the payload is not needed) and says in
     * {@code target} where the payload must be received. The caller then receives exactly
     * {@code target.length()} bytes of the stream into {@code target.address()} (with {@code MSG_WAITALL}:
     * the kernel's copy is the only one) and calls {@link #commit} or, if that receive fails,
     * {@link #abort}.
     *
     * <p>Nothing that a failed payload receive could leave wrong is changed here: the segment is only
     * <em>reserved</em>, so that another copy of it (a retransmission on another subflow) is not written
     * over the first while the kernel fills it but {@link #DEFERRED}, kept by the caller until this
     * placement ends, and the receive the frame names is only held, until {@code commit} or {@code abort};
     * its bytes count, and its message can complete, only at {@code commit}. The header and extension are
     * copied into {@code target}, so {@code headers} may be reused at once. With the ICRC negotiated, it is
     * checked at {@code commit}, once the payload is in.
     *
     * <p><b>Straddling frames are staged.</b> A SEND frame whose bytes fall on two or more pieces of a
     * receive scattered over several ({@link #postReceive(long, SgeList)}) has no one place to be received
     * into: {@code target} then names the drain ({@link PlacementTarget#isStaged()}), and {@code commit}
     * copies the payload from there into the pieces, piece by piece, after the same checks as any other.
     * A frame is at most one segment, so only frames across a piece boundary pay that copy, at most one per
     * boundary; every frame within one piece still lands where the kernel puts it. Naming several pieces
     * instead would cost a receive per piece anyway (one {@code recv} takes one buffer) and a pin per
     * region, for the few frames that straddle.
     *
     * @return {@link #ACCEPTED}: {@code target} names the place in a posted receive or a registered region
     *         (for frames without payload, 0 bytes of the drain; for a staged frame, the drain) and is
     *         pending;
     *         {@link #DUPLICATE}: a copy of a placed segment, or of a completed message: {@code target}
     *         names the drain, receive the payload there and forget it;
     *         {@link #DEFERRED}: a copy of a segment another placement is receiving: {@code target} names
     *         the drain; keep the payload (there or in a buffer of your own) and offer the whole frame to
     *         {@link #onFrame(MemorySegment, long, long, MemorySegment, long)} after that placement's commit
     *         or abort;
     *         {@link FrameError#TRUNCATED}: fewer than the header and extension bytes were given (nothing
     *         changed); any other negative {@link FrameError}: refused, the queue pair is now in ERROR. A
     *         {@link Opcode#SEND_PACKED} frame has no one place and is {@link FrameError#BAD_OPCODE} here: it is
     *         at most {@link PackedSends#MAX_LENGTH} bytes, so a receiver cuts it whole (FrameReceiver does)
     * @param headers the memory holding the header and extension
     * @param offset where the header starts
     * @param available how many bytes from {@code offset} have arrived
     * @param target filled with where the payload must be received
     * @throws IllegalArgumentException if an argument is null or out of range, or the target's drain is
     *                                  smaller than the segment size
     * @throws IllegalStateException    if {@code target} still holds a placement not committed or aborted
     */
    public int beginPlacement(MemorySegment headers, long offset, long available, PlacementTarget target) {
        placements.checkBegin(headers, offset, available, target);
        target.clear();
        if (failure.isSet()) {
            return FrameError.QUEUE_PAIR_IN_ERROR;
        }
        if (available < FrameHeader.LENGTH) {
            return FrameError.TRUNCATED;
        }
        header.wrap(headers, offset);
        int result = FrameValidator.validateHeader(header, segmentSize);
        if (result != FrameError.OK) {
            return failure.fail(result, -1, -1);
        }
        if (Opcode.isPacked(header.opcode())) {
            return failure.fail(FrameError.BAD_OPCODE, -1, -1);
        }
        int headerBytes = FrameHeader.LENGTH + header.extLength();
        if (available < headerBytes) {
            return FrameError.TRUNCATED;
        }
        MemorySegment copy = target.headerCopy;
        MemorySegment.copy(headers, offset, copy, 0, headerBytes);
        header.wrap(copy, 0);
        int length = (int) header.length();
        result = judge.judge(header, copy, FrameHeader.LENGTH, length);
        if (result == ACCEPTED) {
            if (!placements.start(this, target, judge, header, length)) {
                // Deregistered since the judgement: nothing may be received into it.
                return failure.fail(memoryGone(header.opcode()), judge.slot, judge.receive);
            }
            return ACCEPTED;
        }
        if (result == DUPLICATE || result == DEFERRED) {
            target.describe(target.drain, 0, length);
            return result == DUPLICATE ? count(result) : result;
        }
        return failure.fail(result, judge.slot, judge.receive);
    }

    /**
     * Phase 2 of direct placement: the payload that {@link #beginPlacement} asked for has been received
     * into {@code target}. Verifies the ICRC (if negotiated) over the header copy and the received bytes,
     * judges the frame again against the state as it is now (frames committed meanwhile may contradict
     * it), marks the segment placed and completes every message that is now complete, in MSN order,
     * exactly as {@link #onFrame} does.
     *
     * @return {@link #ACCEPTED}; {@link FrameError#QUEUE_PAIR_IN_ERROR} if the queue pair failed meanwhile;
     *         any other negative {@link FrameError}: refused, the queue pair is now in ERROR (the received
     *         bytes stay where they are: inside the posted receive or permitted region)
     * @param target the holder {@link #beginPlacement} filled
     * @throws IllegalStateException if {@code target} holds no placement of this assembler
     */
    public int commit(PlacementTarget target) {
        end(target);
        if (failure.isSet()) {
            return FrameError.QUEUE_PAIR_IN_ERROR;
        }
        MemorySegment copy = target.headerCopy;
        header.wrap(copy, 0);
        if (icrcEnabled) {
            int verified = verifyPlaced(copy, target);
            if (verified != ACCEPTED) {
                return verified;
            }
        }
        // The reservation kept every other copy of this segment out, and the hold on the receive its RSN
        // names every other message: the judgement yields the same place, or an error.
        int result = judge.judge(header, copy, FrameHeader.LENGTH, target.length);
        if (result == ACCEPTED) {
            // A staged payload was received into the drain: the same judgement scatters it over the same pieces.
            result = target.staged ? copyPayload(target.drain, 0, target.length) : ACCEPTED;
            if (result == ACCEPTED) {
                result = apply(copy, FrameHeader.LENGTH, target.length);
            }
        } else if (result < 0) {
            return failure.fail(result, judge.slot, judge.receive);
        }
        return count(result);
    }

    /**
     * Verifies the ICRC of a committed frame over the bytes in its destination, whose memory may have been
     * freed meanwhile: that is an access error (the receive's LOCAL_PROTECTION, a region's REMOTE_ACCESS),
     * never an exception escaping into the receive loop.
     */
    private int verifyPlaced(MemorySegment copy, PlacementTarget target) {
        int gone = memoryGone(header.opcode());
        if (target.length > 0 && !target.segment.scope().isAlive()) {
            return failure.fail(gone, target.slot, target.receive);
        }
        try {
            icrcPasses++;
            return icrc.verify(copy, 0, target.segment, target.offset) ? ACCEPTED : failure.fail(FrameError.ICRC_MISMATCH, -1, -1);
        } catch (IllegalStateException | WrongThreadException closedMeanwhile) {
            return failure.fail(gone, target.slot, target.receive);
        }
    }

    /**
     * Gives up a placement whose payload receive failed (the subflow broke, the receive was cancelled):
     * the segment's reservation is dropped and nothing else changes, so a copy of the frame kept meanwhile
     * ({@link #DEFERRED}) or still to come is placed normally. Bytes the failed receive wrote stay inside the
     * target, which that copy overwrites. In ERROR, aborting the last placement in flight emits the flush
     * that waited for it.
     *
     * @param target the holder {@link #beginPlacement} filled
     * @throws IllegalStateException if {@code target} holds no placement of this assembler
     */
    public void abort(PlacementTarget target) {
        int slot = end(target);
        target.clear();
        if (slot >= 0 && !failure.isSet()) {
            completion.completeIfDone(slot);
        }
    }

    /** Ends a placement's reservation and pin; in ERROR, flushes once none is left. Returns its slot. */
    private int end(PlacementTarget target) {
        int slot = placements.end(this, target);
        if (failure.isSet()) {
            failure.flushIfIdle();
        }
        return slot;
    }

    /** {@return how many placements {@link #beginPlacement} handed out that are not yet committed or aborted} */
    public int pendingPlacements() {
        return placements.pending();
    }

    /**
     * Applies a frame that the judge accepted and whose payload is in place: an ACKNOWLEDGE updates the
     * send direction's flow control, any other frame counts in its message.
     */
    private int apply(MemorySegment headers, long extOffset, int length) {
        if (header.opcode() == Opcode.ACKNOWLEDGE) {
            boolean negative = NegativeAcknowledge.isNegative(header);
            // A NAK's imm_data names a message, not a credit limit: the limit stays what it was.
            int r = sendFlow.onAcknowledge(header.msn(), negative ? sendFlow.creditLimit() : header.immData());
            if (r != FrameError.OK) {
                return failure.fail(r, -1, -1);
            }
            if (negative) {
                peerError = NegativeAcknowledge.frameError(header);
                peerFailedMsn = NegativeAcknowledge.failedMsn(header);
                return failure.fail(FrameError.TERMINATED_BY_PEER, -1, -1);
            }
            return ACCEPTED;
        }
        return completion.placed(header, headers, extOffset, length, judge.slot, judge.receive);
    }

    // ---------------------------------------------------------------- state

    /**
     * Moves the queue pair to ERROR for a reason outside the frames (every connection was lost, the owner
     * closed it): outstanding receives and expected reads are flushed in posting order exactly as after a
     * violation, and later frames are refused. Does nothing if the queue pair is in ERROR already.
     */
    public void failTransport() {
        if (!failure.isSet()) {
            failure.fail(FrameError.QUEUE_PAIR_IN_ERROR, -1, -1);
        }
    }

    /**
     * {@return whether, in ERROR, the flush of the outstanding receives still waits for a placement in flight to
     * end} A receive completed by the caller in the meantime would overtake those flushes: post it here instead,
     * which queues its flush behind them.
     */
    public boolean owesFlush() {
        return failure.isSet() && failure.owesFlush();
    }

    /** {@return whether a violation has moved the queue pair to ERROR} */
    public boolean isInError() {
        return failure.isSet();
    }

    /** {@return the {@link FrameError} that moved the queue pair to ERROR, or {@link FrameError#OK}} */
    public int error() {
        return failure.code();
    }

    /**
     * {@return the MSN of the message whose frame moved the queue pair to ERROR (a frame of it was refused), or
     * {@link NegativeAcknowledge#NO_MESSAGE} when the error names none: what this side's NAK names}
     */
    public int failedMsn() {
        return failure.failedMsn();
    }

    /**
     * {@return the {@link FrameError} the peer's NAK reported}, after {@link FrameError#TERMINATED_BY_PEER} ({@link
     * FrameError#QUEUE_PAIR_IN_ERROR} if it ended the queue pair for a reason of its own); otherwise {@link
     * FrameError#OK}.
     */
    public int peerError() {
        return peerError;
    }

    /**
     * {@return the MSN of this side's send direction that the peer's NAK names, or {@link
     * NegativeAcknowledge#NO_MESSAGE}}, after {@link FrameError#TERMINATED_BY_PEER}.
     */
    public int peerFailedMsn() {
        return peerFailedMsn;
    }

    /** {@return the last MSN completed in order: what an ACKNOWLEDGE carries in {@code msn}} */
    public int acknowledgedMsn() {
        return Msn.add(slots.oldestMsn(), Msn.MASK);
    }

    /**
     * {@return how many receives were ever posted, mod 2^32}: the cumulative credit limit an ACKNOWLEDGE carries in
     * {@code imm_data}.
     */
    public int creditLimit() {
        return (int) receives.posted();
    }

    /** {@return how many posted receives are not yet completed} */
    public int postedReceives() {
        return receives.size();
    }

    /** {@return how many frames were accepted} */
    public long framesAccepted() {
        return framesAccepted;
    }

    /** {@return how many frames were dropped as repeats of frames already placed} */
    public long duplicates() {
        return duplicates;
    }

    /** Passes of the ICRC over a frame so far: for tests that bound the work per frame. */
    long icrcPasses() {
        return icrcPasses;
    }

    @Override
    public String toString() {
        return "MessageAssembler[" + (failure.isSet() ? "ERROR " + FrameError.name(failure.code()) : "READY")
                + " expectedMsn=" + slots.oldestMsn() + " receives=" + receives.size() + "/" + receives.capacity()
                + " placementsInFlight=" + placements.pending()
                + " accepted=" + framesAccepted + " duplicates=" + duplicates + "]";
    }
}
