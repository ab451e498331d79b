package io.zcnet.framing;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.MemorySegment;

/**
 * Receive side of one queue pair direction: validates frames, places their payload and completes
 * messages in MSN order, as the DDP untagged and tagged models do (RFC 5041 sections 4.1 and 4.2) and
 * with the completion and error semantics of verbs (ibv_post_recv(3), ibv_poll_cq(3)).
 *
 * <ul>
 *   <li><b>Placement.</b> SEND frames go to the posted receive their message consumes, at the frame's
 *   message offset; tagged frames (RDMA WRITE, READ RESPONSE) go to the region their extension names,
 *   after the registry has checked key, rights and bounds. A frame is placed whole or not at all, and
 *   nothing is ever written outside a posted buffer or a permitted region.</li>
 *   <li><b>Any order, any number of times.</b> Each message in the window has a preallocated bitmap of
 *   its segments (every frame sits at a segment-aligned offset), so a retransmitted frame is recognised
 *   and ignored, and a message completes exactly once, when its last segment is placed.</li>
 *   <li><b>In-order completion.</b> Completions are emitted strictly in MSN order (which is posting
 *   order of the receives), each with status, opcode, byte count and immediate data. Receive-consuming
 *   messages (SEND, SEND and WRITE with immediate) take posted receives in MSN order.</li>
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
 * place: for small segments that arrived in a buffer anyway. <b>Direct placement</b> (DESIGN.md, zc-rx
 * strategy 3) takes the header first: {@link #beginPlacement} judges it and names, in a reusable
 * {@link PlacementTarget}, the exact bytes of the posted receive or registered region the payload belongs
 * in; the caller has the kernel receive the payload there ({@code recv} with {@code MSG_WAITALL}) and then
 * calls {@link #commit} (or {@link #abort} if that receive failed). Both ways share one judgement and one
 * bookkeeping, so they may be mixed, even for the segments of one message. A placement in flight
 * <em>reserves</em> its segment: a message with a reservation never completes, and a LAST frame below a
 * reserved segment contradicts it ({@link FrameError#INCONSISTENT_MESSAGE}), so no payload can land in a
 * buffer that was already completed; and it {@linkplain MemoryRegion#pin() pins} its region, so the region
 * cannot be deregistered under the kernel's write.
 *
 * <p>Receives are posted as verbs posts them, by local key, offset and length; the key is checked against
 * the {@link MemoryRegistry} (LOCAL_WRITE) when posted and the region's validity again when data lands.
 *
 * <p>A SEND frame can only be placed once it is known which receive its message takes, that is once a
 * frame of every earlier message in the window has been seen (for a WRITE, its last frame: only that
 * says whether it carries immediate data). Until then the frame is {@link #DEFERRED}: nothing is placed
 * and the caller offers it again after later frames, typically holding its payload in a pool buffer (the
 * single extra copy happens only on reordering across message boundaries). {@link #onFrame} records the
 * deferred frame's opcode, which can resolve later messages' receives; {@link #beginPlacement} records
 * nothing (with the ICRC on, the header is not verified before its payload is in).
 *
 * <p>Steady state allocates nothing: the window's state, bitmaps, completion queue and read-request ring
 * are arrays sized at construction; placement targets are caller-owned holders. Not thread-safe: owned
 * by one thread (the queue pair's receive loop).
 */
public final class MessageAssembler {

    /** {@link #onFrame} and {@link #commit} result: the frame was placed (or, for an ACKNOWLEDGE, applied);
     *  {@link #beginPlacement} result: receive the payload into the target, then commit. */
    public static final int ACCEPTED = 1;
    /** Result: the frame repeats a segment already placed, or a completed message; ignored. */
    public static final int DUPLICATE = 2;
    /**
     * Result: keep the frame and offer it again later (through {@link #onFrame}): a SEND frame whose receive
     * is not known yet, or a copy of a segment that a direct placement on another subflow is receiving
     * right now (offer it again once that placement is committed or aborted: if it was aborted, this copy
     * is what keeps the segment from being lost).
     */
    public static final int DEFERRED = 3;

    // completeMessage: the completion or read-request queue is full; the message waits, complete.
    private static final int HELD_BACK = 1;

    static final int STATE_READY = 0;
    static final int STATE_ERROR = 1;

    // Whether a slot's message consumes a receive.

    final int segmentSize;
    final boolean icrcEnabled;
    private final int window;
    private final int slotMask;
    private final MemoryRegistry registry;
    private final ReceiveQueue receives;
    private final CompletionQueue completions;
    private final FlowControl sendFlow;
    final FrameHeader header = new FrameHeader();
    private final TaggedExtension tagged = new TaggedExtension();
    private final ReadRequestExtension readExtension = new ReadRequestExtension();
    final Icrc icrc = new Icrc();

    /** Every message in the window, slot = msn & slotMask. */
    final MessageSlots slots;
    private final ReadTracker reads;
    private final DirectPlacement placements = new DirectPlacement(this);

    // What check() found out about the frame it judged, for placing it or for failing the queue pair.
    int checkedSlot;
    long checkedReceive;
    MemorySegment destination;
    long destinationOffset;
    MemoryRegion destinationRegion;

    // Targets handed out by beginPlacement and not yet committed or aborted.
    // What fail() recorded for the flush, which waits while placements are pending.
    private boolean flushOwed;
    private long failedReceive = -1;
    private int failedStatus;
    private int failedOpcode = -1;
    private int failedMsn = -1;

    private int expectedMsn;
    private boolean heldBack;
    private long receivesRetired;
    /** {@link #receiveFor}'s cursor: the first message it has not passed, and that message's receive. */
    private int scanMsn;
    private long scanIndex;
    /** Messages the cursor has stepped over, for the test that bounds the work per frame. */
    long receiveScanSteps;
    int state = STATE_READY;
    private int error = FrameError.OK;
    private long framesAccepted;
    private long duplicates;

    /**
     * @param config          negotiated segment size, ICRC and window
     * @param registry        regions that tagged frames and read requests may name
     * @param receiveCapacity posted receives at most outstanding, a power of two
     * @param completions     where completions go, owned by this assembler: a receive or read is accepted
     *                        only while the queue has room for a completion of every one outstanding, so
     *                        neither a success nor a flush is ever lost; size it to {@code receiveCapacity}
     *                        plus the reads you keep outstanding
     * @param sendFlow        the opposite direction's flow control, which ACKNOWLEDGE frames update
     */
    public MessageAssembler(FramingConfig config, MemoryRegistry registry, int receiveCapacity,
                            CompletionQueue completions, FlowControl sendFlow) {
        if (config == null || registry == null || completions == null || sendFlow == null) {
            throw new IllegalArgumentException("config, registry, completions and sendFlow are required");
        }
        this.segmentSize = config.segmentSize();
        this.icrcEnabled = config.icrcEnabled();
        this.window = config.messageWindow();
        this.slotMask = window - 1;
        this.registry = registry;
        this.receives = new ReceiveQueue(receiveCapacity);
        this.completions = completions;
        this.sendFlow = sendFlow;
        this.slots = new MessageSlots(window, FramingConfig.bitmapWordsPerMessage(segmentSize));
        this.reads = new ReadTracker(window);
    }

    // ---------------------------------------------------------------- posting

    /**
     * Posts a receive of {@code length} bytes at {@code offset} of the region whose local key is
     * {@code lkey} (an {@code ibv_sge} of ibv_post_recv(3)); SEND messages fill receives in posting order.
     * The region must grant {@link Access#LOCAL_WRITE}. In ERROR the receive is completed with
     * {@link CompletionStatus#FLUSH_ERROR}, as verbs do: at once, or with the flush still waiting for
     * placements in flight, in posting order. Deregistering the region while the receive is
     * outstanding makes the message that lands in it fail with {@link CompletionStatus#LOCAL_PROTECTION_ERROR}.
     *
     * @return false if the receive queue is full, or the completion queue has no room to spare for one more
     *         receive's completion (poll it): nothing posted
     * @throws IllegalArgumentException if the key does not name a live local region with LOCAL_WRITE, or
     *                                  the range is negative or outside it
     */
    public boolean postReceive(long workRequestId, int lkey, long offset, long length) {
        int status = registry.checkLocal(lkey, offset, length, Access.LOCAL_WRITE);
        MemoryRegion region = status == AccessStatus.OK ? registry.lookupLocal(lkey) : null;
        if (region == null) {
            throw new IllegalArgumentException("receive " + workRequestId + ": lkey 0x" + Integer.toHexString(lkey)
                    + " range " + offset + "+" + length + " refused: "
                    + AccessStatus.name(status == AccessStatus.OK ? AccessStatus.DEREGISTERED : status));
        }
        if (!completionReserved()) {
            return false;
        }
        if (state == STATE_ERROR && !flushOwed) {
            return completions.offer(workRequestId, CompletionStatus.FLUSH_ERROR, -1, 0, 0, -1);
        }
        return receives.offer(workRequestId, region, offset, length);
    }

    /**
     * Whether the completion queue can take one more receive or read on top of those outstanding: each
     * outstanding one has a free entry kept for it, so its completion (success or flush) is never dropped.
     */
    private boolean completionReserved() {
        return completions.remaining() > receives.size() + reads.expected();
    }

    /**
     * Registers a READ this side requested, so the responses naming {@code sinkRkey} from {@code sinkOffset}
     * for {@code length} bytes are accepted; responses complete in the order reads were expected, carrying
     * {@code workRequestId}. Call it once per READ_REQUEST frame sent.
     *
     * <p>{@code sinkRkey} is the sink region's <em>remote</em> key, the {@code sink_rkey} the READ_REQUEST
     * carries (DESIGN.md): a local key never goes on the wire. A response is placed only if it falls inside
     * a read registered here, so that match is the authorisation and the sink needs
     * {@link Access#LOCAL_WRITE} only, not {@link Access#REMOTE_WRITE} (as an ibv_post_send(3) RDMA READ's
     * scatter list needs local write access only).
     *
     * @return false if a window of reads is already outstanding, or the completion queue has no room to
     *         spare for one more completion (poll it)
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
        return completionReserved() && reads.expect(workRequestId, sinkRkey, sinkOffset, length);
    }

    /**
     * Takes the oldest validated READ request this side must answer (in MSN order). Taking one makes room
     * for a request held back because the queue was full, which is then retired (and acknowledged).
     *
     * @return false when none is waiting
     */
    public boolean pollReadRequest(ReadRequest into) {
        if (into == null) {
            throw new IllegalArgumentException("into is null");
        }
        if (!reads.poll(into)) {
            return false;
        }
        if (heldBack && state == STATE_READY) {
            retire();
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
        if (!heldBack || state == STATE_ERROR) {
            return state == STATE_ERROR ? FrameError.QUEUE_PAIR_IN_ERROR : ACCEPTED;
        }
        return retire();
    }

    /** Whether a complete message waits for room in the completion or READ request queue. */
    public boolean isHeldBack() {
        return heldBack;
    }

    // ---------------------------------------------------------------- frames, payload supplied

    /** {@link #onFrame(MemorySegment, long, long, MemorySegment, long)} for a contiguous frame. */
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
     */
    public int onFrame(MemorySegment frame, long offset, long available, MemorySegment payload, long payloadOffset) {
        if (frame == null || payload == null) {
            throw new IllegalArgumentException("segments must not be null");
        }
        if (offset < 0 || available < 0 || offset > frame.byteSize() || available > frame.byteSize() - offset
                || payloadOffset < 0 || payloadOffset > payload.byteSize()) {
            throw new IllegalArgumentException("offsets outside their segments");
        }
        if (state == STATE_ERROR) {
            return FrameError.QUEUE_PAIR_IN_ERROR;
        }
        if (available < FrameHeader.LENGTH) {
            return FrameError.TRUNCATED;
        }
        header.wrap(frame, offset);
        int result = FrameValidator.validateHeader(header, segmentSize);
        if (result != FrameError.OK) {
            return fail(result, -1, -1);
        }
        int ext = header.extLength();
        long length = header.length();
        boolean contiguous = payload == frame;
        if (available < FrameHeader.LENGTH + ext + (contiguous ? length : 0)
                || length > payload.byteSize() - payloadOffset) {
            return FrameError.TRUNCATED;
        }
        if (icrcEnabled && !icrc.verify(frame, offset, payload, payloadOffset)) {
            return fail(FrameError.ICRC_MISMATCH, -1, -1);
        }
        long extOffset = offset + FrameHeader.LENGTH;
        result = check(frame, extOffset, (int) length);
        if (result == ACCEPTED) {
            result = copyPayload(payload, payloadOffset, (int) length);
            if (result == ACCEPTED) {
                result = apply(frame, extOffset, (int) length);
            }
        } else if (result == DEFERRED) {
            // The frame is verified: its opcode may already tell which later messages take which receive.
            classify(checkedSlot, header.opcode());
        } else if (result < 0) {
            return fail(result, checkedSlot, checkedReceive);
        }
        return count(result);
    }

    private int copyPayload(MemorySegment payload, long payloadOffset, int length) {
        if (length == 0) {
            return ACCEPTED;
        }
        try {
            MemorySegment.copy(payload, payloadOffset, destination, destinationOffset, length);
            return ACCEPTED;
        } catch (IllegalStateException | WrongThreadException gone) {
            // The destination's memory was freed concurrently (registration refuses confined memory, so a
            // wrong thread cannot happen; caught all the same): an access error, not a crash of the loop.
            return fail(checkedReceive >= 0 ? FrameError.LOCAL_PROTECTION : FrameError.REMOTE_ACCESS,
                    checkedSlot, checkedReceive);
        }
    }

    int count(int result) {
        if (result == ACCEPTED) {
            framesAccepted++;
        } else if (result == DUPLICATE) {
            duplicates++;
        }
        return result;
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
     * <em>reserved</em>, so that another copy of it (a retransmission on another subflow) is kept by the
     * caller ({@link #DEFERRED}) instead of being written over the first while the kernel fills it, and is
     * placed if this placement is aborted; its bytes count, and its message can
     * complete, only at {@code commit}. The header and extension are copied into {@code target}, so
     * {@code headers} may be reused at once. With the ICRC negotiated, it is checked at {@code commit},
     * once the payload is in.
     *
     * @return {@link #ACCEPTED}: {@code target} names the place in a posted receive or a registered region
     *         (for frames without payload, 0 bytes of the drain) and is pending;
     *         {@link #DUPLICATE}: a copy of a placed segment, or of a completed message:
     *         {@code target} names the drain, receive the payload there and forget it;
     *         {@link #DEFERRED}: a SEND frame whose receive is not known yet, or a copy of a segment another
     *         placement is receiving: {@code target} names the
     *         drain; keep the payload (there or in a buffer of your own) and offer the whole frame to
     *         {@link #onFrame(MemorySegment, long, long, MemorySegment, long)} after later frames;
     *         {@link FrameError#TRUNCATED}: fewer than the header and extension bytes were given (nothing
     *         changed); any other negative {@link FrameError}: refused, the queue pair is now in ERROR
     * @throws IllegalArgumentException if an argument is null or out of range, or the target's drain is
     *                                  smaller than the segment size
     * @throws IllegalStateException    if {@code target} still holds a placement not committed or aborted
     */
    public int beginPlacement(MemorySegment headers, long offset, long available, PlacementTarget target) {
        return placements.begin(headers, offset, available, target);
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
     * @throws IllegalStateException if {@code target} holds no placement of this assembler
     */
    public int commit(PlacementTarget target) {
        return placements.commit(target);
    }

    /**
     * Gives up a placement whose payload receive failed (the subflow broke, the receive was cancelled):
     * the segment's reservation is dropped and nothing else changes, so a copy kept meanwhile
     * ({@link #DEFERRED}) or a later retransmission of the frame is placed normally. Bytes the failed
     * receive wrote stay inside the target, which that copy overwrites. In ERROR, aborting the last placement in flight emits the flush that waited for it.
     *
     * @throws IllegalStateException if {@code target} holds no placement of this assembler
     */
    public void abort(PlacementTarget target) {
        placements.abort(target);
    }

    /** Placements handed out by {@link #beginPlacement} and not yet committed or aborted. */
    public int pendingPlacements() {
        return placements.pending();
    }

    // ---------------------------------------------------------------- judging and placing

    /**
     * Judges a validated frame (header in {@link #header}, extension at {@code extOffset} of
     * {@code headers}) against the queue pair's state without changing anything: window, message
     * consistency, duplicates, the receive a SEND takes, keys, rights and bounds. On {@link #ACCEPTED}
     * {@link #destination} and {@link #destinationOffset} say where the payload goes (null for frames
     * without payload); {@link #checkedSlot} and {@link #checkedReceive} are set as far as they were
     * determined, for {@link #fail}.
     */
    int check(MemorySegment headers, long extOffset, int length) {
        checkedSlot = -1;
        checkedReceive = -1;
        destination = null;
        destinationOffset = 0;
        destinationRegion = null;
        int opcode = header.opcode();
        if (opcode == Opcode.ACKNOWLEDGE) {
            return ACCEPTED;
        }
        int msn = header.msn();
        int ahead = Msn.distance(expectedMsn, msn);
        if (ahead >= window) {
            return Msn.MODULUS - ahead <= window ? DUPLICATE : FrameError.MSN_OUT_OF_WINDOW;
        }
        int slot = msn & slotMask;
        checkedSlot = slot;
        checkedReceive = slots.receiveIndexes[slot]; // the receive the message holds, which an error must complete
        int family = family(Opcode.kind(opcode));
        if (slots.kinds[slot] != 0 && slots.kinds[slot] != family) {
            return FrameError.INCONSISTENT_MESSAGE;
        }
        int messageOffset = header.messageOffset();
        int segment = messageOffset / segmentSize;
        if (Opcode.isLast(opcode)) {
            if ((slots.segmentsExpected[slot] >= 0 && slots.totalLengths[slot] != messageOffset + length) || slots.highestSegment[slot] > segment) {
                return FrameError.INCONSISTENT_MESSAGE;
            }
        } else if (slots.segmentsExpected[slot] >= 0 && segment >= slots.segmentsExpected[slot] - 1) {
            return FrameError.INCONSISTENT_MESSAGE;
        }
        if (slots.isPlaced(slot, segment)) {
            return DUPLICATE;
        }
        if (slots.isReserved(slot, segment)) {
            // Another subflow's kernel is receiving this very segment and may still fail. Dropping this copy
            // would lose the segment with that subflow; writing it now would race the kernel's write. It is
            // kept by the caller instead and offered again once the placement is committed or aborted.
            return DEFERRED;
        }
        return switch (family) {
            case Opcode.KIND_SEND -> checkSend(slot, msn, messageOffset, length);
            case Opcode.KIND_WRITE -> checkWrite(headers, extOffset, length);
            case Opcode.KIND_READ_RESPONSE -> checkReadResponse(slot, messageOffset, headers, extOffset, length);
            default -> checkReadRequest(headers, extOffset);
        };
    }

    /** SEND, SEND with immediate and WRITE with immediate share the message families SEND and WRITE. */
    private static int family(int kind) {
        return switch (kind) {
            case Opcode.KIND_SEND_WITH_IMMEDIATE -> Opcode.KIND_SEND;
            case Opcode.KIND_WRITE_WITH_IMMEDIATE -> Opcode.KIND_WRITE;
            default -> kind;
        };
    }

    private int checkSend(int slot, int msn, int messageOffset, int length) {
        long receive = slots.receiveIndexes[slot];
        if (receive < 0) {
            receive = receiveFor(msn);
            if (receive < 0) {
                return DEFERRED;
            }
            if (!receives.isPosted(receive)) {
                return FrameError.RECEIVER_NOT_READY;
            }
        }
        checkedReceive = receive;
        if ((long) messageOffset + length > receives.length(receive)) {
            return FrameError.LOCAL_LENGTH;
        }
        MemoryRegion region = receives.region(receive);
        if (!region.isValid() || !region.segment().scope().isAlive()) {
            return FrameError.LOCAL_PROTECTION;
        }
        destination = region.segment();
        destinationOffset = receives.offset(receive) + messageOffset;
        destinationRegion = region;
        return ACCEPTED;
    }

    /**
     * The receive message {@code msn} takes, or -1 while an earlier message's kind is unknown. A cursor
     * walks the window once: every message it passes has a known kind and had its receive index noted,
     * so a SEND frame costs amortised O(1) however deep the window, not a scan of it.
     */
    private long receiveFor(int msn) {
        if (Msn.distance(expectedMsn, scanMsn) > window) { // the window moved past the cursor
            scanMsn = expectedMsn;
            scanIndex = receivesRetired;
        }
        int target = Msn.distance(expectedMsn, msn);
        if (target < Msn.distance(expectedMsn, scanMsn)) {
            return slots.passedIndex[msn & slotMask];
        }
        while (scanMsn != msn) {
            int s = scanMsn & slotMask;
            receiveScanSteps++;
            if (slots.consumers[s] == MessageSlots.CONSUMER_UNKNOWN) {
                return -1;
            }
            slots.passedIndex[s] = scanIndex;
            if (slots.consumers[s] == MessageSlots.CONSUMER_YES) {
                scanIndex++;
            }
            scanMsn = Msn.add(scanMsn, 1);
        }
        return scanIndex;
    }

    private int checkWrite(MemorySegment headers, long extOffset, int length) {
        tagged.wrap(headers, extOffset);
        int key = tagged.rkey();
        long regionOffset = tagged.regionOffset();
        if (registry.checkRemote(key, regionOffset, length, Access.REMOTE_WRITE) != AccessStatus.OK) {
            return FrameError.REMOTE_ACCESS;
        }
        return target(registry.lookupRemote(key), regionOffset, length);
    }

    private int checkReadResponse(int slot, int messageOffset, MemorySegment headers, long extOffset, int length) {
        tagged.wrap(headers, extOffset);
        int key = tagged.rkey();
        long regionOffset = tagged.regionOffset();
        // Every frame of one response names the same sink: key and message start agree.
        if (slots.segmentsPlaced[slot] > 0 && (slots.readRkeys[slot] != key || slots.readSinkOffsets[slot] != regionOffset - messageOffset)) {
            return FrameError.INCONSISTENT_MESSAGE;
        }
        // The sink is named by its remote key; matching a read this side registered is the authorisation,
        // so the region needs LOCAL_WRITE (not REMOTE_WRITE), checked here as it is now.
        if (!reads.covers(key, regionOffset, length)) {
            return FrameError.UNEXPECTED_READ_RESPONSE;
        }
        MemoryRegion sink = registry.lookupRemote(key);
        if (sink == null || !Access.grants(sink.access(), Access.LOCAL_WRITE) || !sink.segment().scope().isAlive()) {
            return FrameError.REMOTE_ACCESS;
        }
        return target(sink, regionOffset, length);
    }

    /** Points {@link #destination} into {@code region} after the registry's check. */
    private int target(MemoryRegion region, long regionOffset, int length) {
        // The region may have been deregistered between check and lookup; re-check the bounds we write.
        if (region == null || regionOffset < 0 || regionOffset > region.segment().byteSize() - length) {
            return FrameError.REMOTE_ACCESS;
        }
        destination = region.segment();
        destinationOffset = regionOffset;
        destinationRegion = region;
        return ACCEPTED;
    }

    private int checkReadRequest(MemorySegment headers, long extOffset) {
        readExtension.wrap(headers, extOffset);
        long length = readExtension.readLength();
        if (length > FramingConfig.MAX_MESSAGE_SIZE) {
            return FrameError.MESSAGE_TOO_LONG;
        }
        if (registry.checkRemote(readExtension.rkey(), readExtension.regionOffset(), length, Access.REMOTE_READ)
                != AccessStatus.OK || readExtension.sinkOffset() < 0) {
            return FrameError.REMOTE_ACCESS;
        }
        return ACCEPTED;
    }

    /** Records what a frame of {@code opcode} says about the message in {@code slot}. */
    private void classify(int slot, int opcode) {
        int kind = Opcode.kind(opcode);
        int family = family(kind);
        if (slots.kinds[slot] == 0) {
            slots.kinds[slot] = (byte) family;
        }
        // A WRITE takes a receive only if it carries immediate data, which only its last frame says.
        if (slots.consumers[slot] == MessageSlots.CONSUMER_UNKNOWN && (family != Opcode.KIND_WRITE || Opcode.isLast(opcode))) {
            slots.consumers[slot] = Opcode.consumesReceive(kind) ? MessageSlots.CONSUMER_YES : MessageSlots.CONSUMER_NO;
        }
    }

    /**
     * Marks a frame that {@link #check} accepted (and whose payload is in place) as placed, and completes
     * what is now complete.
     */
    int apply(MemorySegment headers, long extOffset, int length) {
        int opcode = header.opcode();
        if (opcode == Opcode.ACKNOWLEDGE) {
            int r = sendFlow.onAcknowledge(header.msn(), header.immData());
            return r == FrameError.OK ? ACCEPTED : fail(r, -1, -1);
        }
        int slot = checkedSlot;
        classify(slot, opcode);
        int messageOffset = header.messageOffset();
        switch (slots.kinds[slot]) {
            case Opcode.KIND_SEND -> slots.receiveIndexes[slot] = checkedReceive;
            case Opcode.KIND_READ_RESPONSE -> {
                tagged.wrap(headers, extOffset);
                slots.readRkeys[slot] = tagged.rkey();
                slots.readSinkOffsets[slot] = tagged.regionOffset() - messageOffset;
            }
            case Opcode.KIND_READ_REQUEST -> {
                readExtension.wrap(headers, extOffset);
                slots.readRkeys[slot] = readExtension.rkey();
                slots.readOffsets[slot] = readExtension.regionOffset();
                slots.readLengths[slot] = (int) readExtension.readLength();
                slots.readSinkRkeys[slot] = readExtension.sinkRkey();
                slots.readSinkOffsets[slot] = readExtension.sinkOffset();
            }
            default -> { }
        }
        int segment = messageOffset / segmentSize;
        slots.place(slot, segment);
        if (Opcode.isLast(opcode)) {
            slots.segmentsExpected[slot] = segment + 1;
            slots.totalLengths[slot] = messageOffset + length;
            slots.finalOpcodes[slot] = opcode;
            slots.immediates[slot] = Opcode.hasImmediate(opcode) ? header.immData() : 0;
        }
        return completeIfDone(slot);
    }

    /**
     * Marks the slot's message complete once every segment is placed and no placement into it is in flight
     * (the kernel may still be writing into its buffer), and completes it if it is the oldest.
     */
    int completeIfDone(int slot) {
        if (!slots.complete[slot] && slots.reservations[slot] == 0 && slots.segmentsPlaced[slot] == slots.segmentsExpected[slot]) {
            slots.complete[slot] = true;
            if (slot == (expectedMsn & slotMask)) {
                return retire();
            }
        }
        return ACCEPTED;
    }

    // ---------------------------------------------------------------- completion

    /** Completes every complete message from the oldest on, in MSN order. */
    private int retire() {
        heldBack = false;
        int slot = expectedMsn & slotMask;
        while (slots.complete[slot]) {
            int r = completeMessage(slot);
            if (r == HELD_BACK) {
                // Not acknowledged, so the peer's MSN window stops it until the application makes room.
                heldBack = true;
                return ACCEPTED;
            }
            if (r != FrameError.OK) {
                return r;
            }
            slots.reset(slot);
            expectedMsn = Msn.add(expectedMsn, 1);
            slot = expectedMsn & slotMask;
        }
        return ACCEPTED;
    }

    private int completeMessage(int slot) {
        int msn = expectedMsn;
        switch (slots.kinds[slot]) {
            case Opcode.KIND_SEND, Opcode.KIND_WRITE -> {
                if (slots.consumers[slot] != MessageSlots.CONSUMER_YES) {
                    return FrameError.OK;
                }
                if (!receives.isPosted(receivesRetired)) {
                    return fail(FrameError.RECEIVER_NOT_READY, slot, slots.receiveIndexes[slot]);
                }
                if (completions.remaining() == 0) {
                    return HELD_BACK; // only if the queue is shared: the reservation kept a slot otherwise
                }
                long id = receives.workRequestId(receivesRetired);
                receives.consume();
                receivesRetired++;
                completions.offer(id, CompletionStatus.SUCCESS, slots.finalOpcodes[slot], slots.totalLengths[slot], slots.immediates[slot], msn);
            }
            case Opcode.KIND_READ_RESPONSE -> {
                if (!reads.oldestIs(slots.readRkeys[slot], slots.readSinkOffsets[slot], slots.totalLengths[slot])) {
                    return fail(FrameError.UNEXPECTED_READ_RESPONSE, slot, slots.receiveIndexes[slot]);
                }
                if (completions.remaining() == 0) {
                    return HELD_BACK;
                }
                completions.offer(reads.takeOldest(), CompletionStatus.SUCCESS, slots.finalOpcodes[slot], slots.totalLengths[slot], 0, msn);
            }
            case Opcode.KIND_READ_REQUEST -> {
                if (reads.pendingFull()) {
                    return HELD_BACK;
                }
                ReadRequest r = reads.nextPending();
                r.msn = msn;
                r.rkey = slots.readRkeys[slot];
                r.regionOffset = slots.readOffsets[slot];
                r.length = slots.readLengths[slot];
                r.sinkRkey = slots.readSinkRkeys[slot];
                r.sinkOffset = slots.readSinkOffsets[slot];
            }
            default -> throw new IllegalStateException("complete slot " + slot + " has kind " + slots.kinds[slot]);
        }
        return FrameError.OK;
    }

    /** The MSN of the in-window message held by {@code slot}. */
    private int slotMsn(int slot) {
        return Msn.add(expectedMsn, (slot - expectedMsn) & slotMask);
    }

    // ---------------------------------------------------------------- errors

    /**
     * Moves to ERROR: the failing message's receive (if it has one) completes with the error's status,
     * every other outstanding receive and expected read response is flushed, in posting order, as soon as
     * no direct placement is in flight.
     */
    int fail(int code, int slot, long receive) {
        state = STATE_ERROR;
        error = code;
        failedReceive = receive;
        failedStatus = FrameError.completionStatus(code);
        failedOpcode = slot >= 0 ? slots.finalOpcodes[slot] : -1;
        failedMsn = slot >= 0 ? slotMsn(slot) : -1;
        flushOwed = true;
        flushIfIdle();
        return code;
    }

    /** Flushes what fail() owes unless a placement may still be writing into a receive or sink. */
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
        while (reads.expected() > 0) {
            completions.offer(reads.takeOldest(), CompletionStatus.FLUSH_ERROR, -1, 0, 0, -1);
        }
    }

    // ---------------------------------------------------------------- state

    /** Whether a violation has moved the queue pair to ERROR. */
    public boolean isInError() {
        return state == STATE_ERROR;
    }

    /** The {@link FrameError} that moved the queue pair to ERROR, or {@link FrameError#OK}. */
    public int error() {
        return error;
    }

    /** The last MSN completed in order: what an ACKNOWLEDGE carries in {@code msn}. */
    public int acknowledgedMsn() {
        return Msn.add(expectedMsn, Msn.MASK);
    }

    /** Receives ever posted, mod 2^32: the cumulative credit limit an ACKNOWLEDGE carries in {@code imm_data}. */
    public int creditLimit() {
        return (int) receives.posted();
    }

    /** Posted receives not yet completed. */
    public int postedReceives() {
        return receives.size();
    }

    public long framesAccepted() {
        return framesAccepted;
    }

    public long duplicates() {
        return duplicates;
    }

    @Override
    public String toString() {
        return "MessageAssembler[" + (state == STATE_ERROR ? "ERROR " + FrameError.name(error) : "READY")
                + " expectedMsn=" + expectedMsn + " receives=" + receives.size() + "/" + receives.capacity()
                + " placementsInFlight=" + placements.pending()
                + " accepted=" + framesAccepted + " duplicates=" + duplicates + "]";
    }
}
