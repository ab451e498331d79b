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
 *   <li><b>Window.</b> At most {@link FramingConfig#messageWindow()} messages are tracked; an MSN up to a
 *   window behind the oldest incomplete message is a duplicate of a completed one and is ignored, one
 *   further ahead than the window is a protocol error. MSNs wrap at 2^16.</li>
 *   <li><b>Errors.</b> The first violation moves the queue pair to ERROR: the message that failed gets its
 *   error status if it owns a receive, every other outstanding receive and read is flushed, in posting
 *   order, and later frames are refused with {@link FrameError#QUEUE_PAIR_IN_ERROR}.</li>
 * </ul>
 *
 * <p>A SEND frame can only be placed once it is known which receive its message takes, that is once a
 * frame of every earlier message in the window has been seen (for a WRITE, its last frame: only that
 * says whether it carries immediate data). Until then {@link #onFrame} answers {@link #DEFERRED} and
 * changes nothing; the caller keeps the frame and offers it again after later frames, typically holding
 * its payload in a pool buffer (the single extra copy happens only on reordering across message
 * boundaries).
 *
 * <p>Steady state allocates nothing: the window's state, bitmaps, completion queue and read-request ring
 * are arrays sized at construction. Not thread-safe: owned by one thread (the queue pair's receive loop).
 */
public final class MessageAssembler {

    /** {@link #onFrame} result: the frame was placed (or, for an ACKNOWLEDGE, applied). */
    public static final int ACCEPTED = 1;
    /** {@link #onFrame} result: the frame repeats one already placed, or a completed message; ignored. */
    public static final int DUPLICATE = 2;
    /** {@link #onFrame} result: a SEND frame whose receive is not known yet; offer it again later. */
    public static final int DEFERRED = 3;

    private static final int STATE_READY = 0;
    private static final int STATE_ERROR = 1;

    // Whether a slot's message consumes a receive.
    private static final byte CONSUMER_UNKNOWN = 0;
    private static final byte CONSUMER_YES = 1;
    private static final byte CONSUMER_NO = 2;

    private final int segmentSize;
    private final boolean icrcEnabled;
    private final int window;
    private final int slotMask;
    private final int wordsPerMessage;
    private final MemoryRegistry registry;
    private final ReceiveQueue receives;
    private final CompletionQueue completions;
    private final FlowControl sendFlow;
    private final FrameHeader header = new FrameHeader();
    private final TaggedExtension tagged = new TaggedExtension();
    private final ReadRequestExtension readExtension = new ReadRequestExtension();
    private final Icrc icrc = new Icrc();

    // Per-slot state of the messages in the window; slot = msn & slotMask. kind 0 = nothing seen.
    private final byte[] kinds;
    private final byte[] consumers;
    private final boolean[] complete;
    private final int[] segmentsPlaced;
    private final int[] segmentsExpected;
    private final int[] highestSegment;
    private final int[] totalLengths;
    private final int[] immediates;
    private final int[] finalOpcodes;
    private final long[] receiveIndexes;
    private final long[] bitmaps;
    private final int[] readRkeys;
    private final long[] readOffsets;
    private final int[] readLengths;
    private final int[] readSinkRkeys;
    private final long[] readSinkOffsets;

    // Validated read requests waiting for the responder to answer (ring of window entries).
    private final int[] pendingReadSlots;
    private final ReadRequest[] pendingReads;
    private long pendingReadHead;
    private long pendingReadTail;

    // Reads this side issued, whose responses it expects, in request order (ring of window entries).
    private final long[] outstandingReadIds;
    private final int[] outstandingReadKeys;
    private final long[] outstandingReadOffsets;
    private final int[] outstandingReadLengths;
    private long outstandingReadHead;
    private long outstandingReadTail;

    private int expectedMsn;
    private long receivesRetired;
    private int state = STATE_READY;
    private int error = FrameError.OK;
    private long framesAccepted;
    private long duplicates;

    /**
     * @param config          negotiated segment size, ICRC and window
     * @param registry        regions that tagged frames and read requests may name
     * @param receiveCapacity posted receives at most outstanding, a power of two
     * @param completions     where completions go; size it to at least {@code receiveCapacity} plus the
     *                        window and poll it, or the queue pair fails with
     *                        {@link FrameError#COMPLETION_QUEUE_OVERFLOW}
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
        this.wordsPerMessage = FramingConfig.bitmapWordsPerMessage(segmentSize);
        this.registry = registry;
        this.receives = new ReceiveQueue(receiveCapacity);
        this.completions = completions;
        this.sendFlow = sendFlow;
        kinds = new byte[window];
        consumers = new byte[window];
        complete = new boolean[window];
        segmentsPlaced = new int[window];
        segmentsExpected = new int[window];
        highestSegment = new int[window];
        totalLengths = new int[window];
        immediates = new int[window];
        finalOpcodes = new int[window];
        receiveIndexes = new long[window];
        bitmaps = new long[window * wordsPerMessage];
        readRkeys = new int[window];
        readOffsets = new long[window];
        readLengths = new int[window];
        readSinkRkeys = new int[window];
        readSinkOffsets = new long[window];
        pendingReadSlots = new int[window];
        pendingReads = new ReadRequest[window];
        for (int i = 0; i < window; i++) {
            pendingReads[i] = new ReadRequest();
            resetSlot(i);
        }
        outstandingReadIds = new long[window];
        outstandingReadKeys = new int[window];
        outstandingReadOffsets = new long[window];
        outstandingReadLengths = new int[window];
    }

    // ---------------------------------------------------------------- posting

    /**
     * Posts a receive buffer; SEND messages fill receives in posting order. In ERROR the receive is
     * completed at once with {@link CompletionStatus#FLUSH_ERROR}, as verbs do.
     *
     * @return false if the receive queue is full (nothing posted)
     * @throws IllegalArgumentException if {@code buffer} is null or longer than a message can be
     */
    public boolean postReceive(long workRequestId, MemorySegment buffer) {
        if (buffer == null) {
            throw new IllegalArgumentException("buffer is null");
        }
        if (state == STATE_ERROR) {
            return completions.offer(workRequestId, CompletionStatus.FLUSH_ERROR, -1, 0, 0, -1);
        }
        return receives.offer(workRequestId, buffer);
    }

    /**
     * Registers a READ this side requested, so the responses naming local key {@code sinkKey} from
     * {@code sinkOffset} for {@code length} bytes are accepted; responses complete in the order reads were
     * expected, carrying {@code workRequestId}. Call it once per READ_REQUEST frame sent.
     *
     * @return false if a window of reads is already outstanding
     */
    public boolean expectReadResponse(long workRequestId, int sinkKey, long sinkOffset, int length) {
        if (sinkOffset < 0 || length < 0 || length > FramingConfig.MAX_MESSAGE_SIZE) {
            throw new IllegalArgumentException("sink range " + sinkOffset + "+" + length + " invalid");
        }
        if (outstandingReadTail - outstandingReadHead >= window) {
            return false;
        }
        int i = (int) outstandingReadTail & slotMask;
        outstandingReadIds[i] = workRequestId;
        outstandingReadKeys[i] = sinkKey;
        outstandingReadOffsets[i] = sinkOffset;
        outstandingReadLengths[i] = length;
        outstandingReadTail++;
        return true;
    }

    /**
     * Takes the oldest validated READ request this side must answer (in MSN order).
     *
     * @return false when none is waiting
     */
    public boolean pollReadRequest(ReadRequest into) {
        if (into == null) {
            throw new IllegalArgumentException("into is null");
        }
        if (pendingReadHead == pendingReadTail) {
            return false;
        }
        ReadRequest r = pendingReads[(int) pendingReadHead++ & slotMask];
        into.msn = r.msn;
        into.rkey = r.rkey;
        into.regionOffset = r.regionOffset;
        into.length = r.length;
        into.sinkRkey = r.sinkRkey;
        into.sinkOffset = r.sinkOffset;
        return true;
    }

    // ---------------------------------------------------------------- frames

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
     * Validates and places one frame whose header and extension are at {@code offset} of {@code frame}
     * ({@code available} bytes there) and whose payload is at {@code payloadOffset} of {@code payload}.
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
            return fail(result, -1);
        }
        int ext = header.extLength();
        long length = header.length();
        boolean contiguous = payload == frame;
        if (available < FrameHeader.LENGTH + ext + (contiguous ? length : 0)
                || length > payload.byteSize() - payloadOffset) {
            return FrameError.TRUNCATED;
        }
        if (icrcEnabled && !icrc.verify(frame, offset, payload, payloadOffset)) {
            return fail(FrameError.ICRC_MISMATCH, -1);
        }
        result = place(frame, offset + FrameHeader.LENGTH, payload, payloadOffset, (int) length);
        if (result == ACCEPTED) {
            framesAccepted++;
        } else if (result == DUPLICATE) {
            duplicates++;
        }
        return result;
    }

    private int place(MemorySegment frame, long extOffset, MemorySegment payload, long payloadOffset, int length) {
        int opcode = header.opcode();
        if (opcode == Opcode.ACKNOWLEDGE) {
            int r = sendFlow.onAcknowledge(header.msn(), header.immData());
            return r == FrameError.OK ? ACCEPTED : fail(r, -1);
        }
        int msn = header.msn();
        int ahead = Msn.distance(expectedMsn, msn);
        if (ahead >= window) {
            return Msn.MODULUS - ahead <= window ? DUPLICATE : fail(FrameError.MSN_OUT_OF_WINDOW, -1);
        }
        int slot = msn & slotMask;
        int kind = Opcode.kind(opcode);
        int family = family(kind);
        boolean last = Opcode.isLast(opcode);
        if (kinds[slot] == 0) {
            kinds[slot] = (byte) family;
        } else if (kinds[slot] != family) {
            return fail(FrameError.INCONSISTENT_MESSAGE, slot);
        }
        int messageOffset = header.messageOffset();
        int segment = messageOffset / segmentSize;
        if (last) {
            int total = messageOffset + length;
            if ((segmentsExpected[slot] >= 0 && totalLengths[slot] != total) || highestSegment[slot] > segment) {
                return fail(FrameError.INCONSISTENT_MESSAGE, slot);
            }
        } else if (segmentsExpected[slot] >= 0 && segment >= segmentsExpected[slot] - 1) {
            return fail(FrameError.INCONSISTENT_MESSAGE, slot);
        }
        if (consumers[slot] == CONSUMER_UNKNOWN && (family != Opcode.KIND_WRITE || last)) {
            consumers[slot] = Opcode.consumesReceive(kind) ? CONSUMER_YES : CONSUMER_NO;
        }
        int word = slot * wordsPerMessage + (segment >>> 6);
        long bit = 1L << segment;
        if ((bitmaps[word] & bit) != 0) {
            return DUPLICATE;
        }
        int r = switch (family) {
            case Opcode.KIND_SEND -> placeSend(slot, msn, messageOffset, payload, payloadOffset, length);
            case Opcode.KIND_WRITE -> placeTagged(slot, messageOffset, frame, extOffset, payload, payloadOffset, length, false);
            case Opcode.KIND_READ_RESPONSE -> placeTagged(slot, messageOffset, frame, extOffset, payload, payloadOffset, length, true);
            default -> acceptReadRequest(slot, msn, frame, extOffset);
        };
        if (r != ACCEPTED) {
            return r;
        }
        bitmaps[word] |= bit;
        segmentsPlaced[slot]++;
        if (segment > highestSegment[slot]) {
            highestSegment[slot] = segment;
        }
        if (last) {
            segmentsExpected[slot] = segment + 1;
            totalLengths[slot] = messageOffset + length;
            finalOpcodes[slot] = opcode;
            immediates[slot] = Opcode.hasImmediate(opcode) ? header.immData() : 0;
        }
        if (segmentsPlaced[slot] == segmentsExpected[slot]) {
            complete[slot] = true;
            if (slot == (expectedMsn & slotMask)) {
                return retire();
            }
        }
        return ACCEPTED;
    }

    /** SEND, SEND with immediate and WRITE with immediate share the message families SEND and WRITE. */
    private static int family(int kind) {
        return switch (kind) {
            case Opcode.KIND_SEND_WITH_IMMEDIATE -> Opcode.KIND_SEND;
            case Opcode.KIND_WRITE_WITH_IMMEDIATE -> Opcode.KIND_WRITE;
            default -> kind;
        };
    }

    private int placeSend(int slot, int msn, int messageOffset, MemorySegment payload, long payloadOffset, int length) {
        long receive = receiveIndexes[slot];
        if (receive < 0) {
            receive = receiveFor(msn);
            if (receive < 0) {
                return DEFERRED;
            }
            if (!receives.isPosted(receive)) {
                return fail(FrameError.RECEIVER_NOT_READY, slot);
            }
            receiveIndexes[slot] = receive;
        }
        MemorySegment buffer = receives.buffer(receive);
        if ((long) messageOffset + length > buffer.byteSize()) {
            return fail(FrameError.LOCAL_LENGTH, slot);
        }
        if (length > 0) {
            MemorySegment.copy(payload, payloadOffset, buffer, messageOffset, length);
        }
        return ACCEPTED;
    }

    /** The receive message {@code msn} takes, or -1 while an earlier message's kind is unknown. */
    private long receiveFor(int msn) {
        long index = receivesRetired;
        for (int m = expectedMsn; m != msn; m = Msn.add(m, 1)) {
            int s = m & slotMask;
            if (consumers[s] == CONSUMER_UNKNOWN) {
                return -1;
            }
            if (consumers[s] == CONSUMER_YES) {
                index++;
            }
        }
        return index;
    }

    private int placeTagged(int slot, int messageOffset, MemorySegment frame, long extOffset, MemorySegment payload,
                            long payloadOffset, int length, boolean readResponse) {
        tagged.wrap(frame, extOffset);
        int key = tagged.rkey();
        long regionOffset = tagged.regionOffset();
        MemoryRegion region;
        if (readResponse) {
            // Every frame of one response names the same sink: key and message start agree.
            long start = regionOffset - messageOffset;
            if (segmentsPlaced[slot] > 0 && (readRkeys[slot] != key || readSinkOffsets[slot] != start)) {
                return fail(FrameError.INCONSISTENT_MESSAGE, slot);
            }
            if (!withinOutstandingRead(key, regionOffset, length)) {
                return fail(FrameError.UNEXPECTED_READ_RESPONSE, slot);
            }
            readRkeys[slot] = key;
            readSinkOffsets[slot] = start;
            if (registry.checkLocal(key, regionOffset, length, Access.LOCAL_WRITE) != AccessStatus.OK) {
                return fail(FrameError.REMOTE_ACCESS, slot);
            }
            region = registry.lookupLocal(key);
        } else {
            if (registry.checkRemote(key, regionOffset, length, Access.REMOTE_WRITE) != AccessStatus.OK) {
                return fail(FrameError.REMOTE_ACCESS, slot);
            }
            region = registry.lookupRemote(key);
        }
        // The region may have been deregistered between check and lookup; re-check the bounds we write.
        if (region == null || regionOffset > region.segment().byteSize() - length) {
            return fail(FrameError.REMOTE_ACCESS, slot);
        }
        if (length > 0) {
            try {
                MemorySegment.copy(payload, payloadOffset, region.segment(), regionOffset, length);
            } catch (IllegalStateException closed) {
                // The region's memory was freed concurrently: an access error, not a crash of the loop.
                return fail(FrameError.REMOTE_ACCESS, slot);
            }
        }
        return ACCEPTED;
    }

    private boolean withinOutstandingRead(int key, long offset, int length) {
        for (long i = outstandingReadHead; i < outstandingReadTail; i++) {
            int s = (int) i & slotMask;
            long start = outstandingReadOffsets[s];
            if (outstandingReadKeys[s] == key && offset >= start
                    && offset - start <= outstandingReadLengths[s] - (long) length) {
                return true;
            }
        }
        return false;
    }

    private int acceptReadRequest(int slot, int msn, MemorySegment frame, long extOffset) {
        readExtension.wrap(frame, extOffset);
        long length = readExtension.readLength();
        if (length > FramingConfig.MAX_MESSAGE_SIZE) {
            return fail(FrameError.MESSAGE_TOO_LONG, slot);
        }
        if (registry.checkRemote(readExtension.rkey(), readExtension.regionOffset(), length, Access.REMOTE_READ)
                != AccessStatus.OK) {
            return fail(FrameError.REMOTE_ACCESS, slot);
        }
        if (readExtension.sinkOffset() < 0) {
            return fail(FrameError.REMOTE_ACCESS, slot);
        }
        readRkeys[slot] = readExtension.rkey();
        readOffsets[slot] = readExtension.regionOffset();
        readLengths[slot] = (int) length;
        readSinkRkeys[slot] = readExtension.sinkRkey();
        readSinkOffsets[slot] = readExtension.sinkOffset();
        return ACCEPTED;
    }

    // ---------------------------------------------------------------- completion

    /** Completes every complete message from the oldest on, in MSN order. */
    private int retire() {
        int slot = expectedMsn & slotMask;
        while (complete[slot]) {
            int r = completeMessage(slot);
            if (r != FrameError.OK) {
                return r;
            }
            resetSlot(slot);
            expectedMsn = Msn.add(expectedMsn, 1);
            slot = expectedMsn & slotMask;
        }
        return ACCEPTED;
    }

    private int completeMessage(int slot) {
        int msn = expectedMsn;
        switch (kinds[slot]) {
            case Opcode.KIND_SEND, Opcode.KIND_WRITE -> {
                if (consumers[slot] != CONSUMER_YES) {
                    return FrameError.OK;
                }
                if (!receives.isPosted(receivesRetired)) {
                    return fail(FrameError.RECEIVER_NOT_READY, slot);
                }
                if (completions.remaining() == 0) {
                    return fail(FrameError.COMPLETION_QUEUE_OVERFLOW, slot);
                }
                long id = receives.workRequestId(receivesRetired);
                receives.consume();
                receivesRetired++;
                completions.offer(id, CompletionStatus.SUCCESS, finalOpcodes[slot], totalLengths[slot], immediates[slot], msn);
            }
            case Opcode.KIND_READ_RESPONSE -> {
                int s = (int) outstandingReadHead & slotMask;
                if (outstandingReadHead == outstandingReadTail || outstandingReadKeys[s] != readRkeys[slot]
                        || outstandingReadOffsets[s] != readSinkOffsets[slot]
                        || outstandingReadLengths[s] != totalLengths[slot]) {
                    return fail(FrameError.UNEXPECTED_READ_RESPONSE, slot);
                }
                if (completions.remaining() == 0) {
                    return fail(FrameError.COMPLETION_QUEUE_OVERFLOW, slot);
                }
                outstandingReadHead++;
                completions.offer(outstandingReadIds[s], CompletionStatus.SUCCESS, finalOpcodes[slot], totalLengths[slot], 0, msn);
            }
            case Opcode.KIND_READ_REQUEST -> {
                if (pendingReadTail - pendingReadHead >= window) {
                    return fail(FrameError.READ_QUEUE_OVERFLOW, slot);
                }
                ReadRequest r = pendingReads[(int) pendingReadTail++ & slotMask];
                r.msn = msn;
                r.rkey = readRkeys[slot];
                r.regionOffset = readOffsets[slot];
                r.length = readLengths[slot];
                r.sinkRkey = readSinkRkeys[slot];
                r.sinkOffset = readSinkOffsets[slot];
            }
            default -> throw new IllegalStateException("complete slot " + slot + " has kind " + kinds[slot]);
        }
        return FrameError.OK;
    }

    /** The MSN of the in-window message held by {@code slot}. */
    private int slotMsn(int slot) {
        return Msn.add(expectedMsn, (slot - expectedMsn) & slotMask);
    }

    private void resetSlot(int slot) {
        int words = segmentsExpected[slot] > 0 ? (segmentsExpected[slot] + 63) >>> 6 : wordsPerMessage;
        int base = slot * wordsPerMessage;
        for (int w = 0; w < words; w++) {
            bitmaps[base + w] = 0;
        }
        kinds[slot] = 0;
        consumers[slot] = CONSUMER_UNKNOWN;
        complete[slot] = false;
        segmentsPlaced[slot] = 0;
        segmentsExpected[slot] = -1;
        highestSegment[slot] = -1;
        totalLengths[slot] = -1;
        immediates[slot] = 0;
        finalOpcodes[slot] = -1;
        receiveIndexes[slot] = -1;
        readRkeys[slot] = 0;
        readSinkOffsets[slot] = 0;
    }

    // ---------------------------------------------------------------- errors

    /**
     * Moves to ERROR: the failing message's receive (if it has one) completes with the error's status,
     * every other outstanding receive and expected read response is flushed, in posting order.
     */
    private int fail(int code, int slot) {
        state = STATE_ERROR;
        error = code;
        long failedReceive = slot >= 0 ? receiveIndexes[slot] : -1;
        int failedStatus = FrameError.completionStatus(code);
        while (receives.size() > 0) {
            long index = receives.consume();
            boolean failed = index == failedReceive;
            int opcode = failed ? finalOpcodes[slot] : -1;
            completions.offer(receives.workRequestId(index), failed ? failedStatus : CompletionStatus.FLUSH_ERROR,
                    opcode, 0, 0, failed ? slotMsn(slot) : -1);
        }
        while (outstandingReadHead < outstandingReadTail) {
            int s = (int) outstandingReadHead++ & slotMask;
            completions.offer(outstandingReadIds[s], CompletionStatus.FLUSH_ERROR, -1, 0, 0, -1);
        }
        return code;
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
                + " accepted=" + framesAccepted + " duplicates=" + duplicates + "]";
    }
}
