package io.zcnet.rx;

import io.zcnet.framing.FrameError;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.Opcode;
import io.zcnet.framing.PlacementTarget;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.MsgFlags;

import java.lang.foreign.MemorySegment;

/**
 * The receive side of one TCP connection: cuts the byte stream into frames and hands them to a
 * {@link MessageAssembler}, which places them. Two strategies, chosen per frame and visible in
 * {@link ReceiverCounters}:
 *
 * <ol>
 *   <li><b>Provided buffer ring.</b> While frames are small the connection keeps one multishot receive
 *   armed on a {@link BufferRing}: the kernel copies whatever arrives into a pool buffer it picks, every
 *   whole frame in it goes to {@link MessageAssembler#onFrame} (one copy, into the posted receive), and a
 *   frame that straddles two buffers is joined in a small carry buffer first. An empty ring
 *   ({@code ENOBUFS}) loses nothing: the data stays in the socket and the receive is armed again.</li>
 *   <li><b>Direct placement</b> (a header split in software). A header announcing a payload of at least
 *   {@link ReceiverConfig#directThreshold()} bytes goes to {@link MessageAssembler#beginPlacement}, which
 *   names the payload's final bytes; the kernel receives the rest of the payload there
 *   ({@code MSG_WAITALL}) and the frame is committed. Since a multishot receive would read the next
 *   payloads ahead into pool buffers, the connection then cancels it and reads each next header with a
 *   small single receive ({@link ReceiverConfig#headerPeek()} bytes, into the carry buffer); after
 *   {@link ReceiverConfig#smallFramesToStream()} small frames in a row it arms the multishot receive
 *   again. Payload bytes that arrived with their header are copied; the rest the kernel writes in place
 *   ({@link ReceiverCounters#directShare()}).</li>
 * </ol>
 *
 * <p>Frames the assembler cannot place yet ({@link MessageAssembler#DEFERRED}: copies of a segment another
 * subflow is receiving directly) are kept whole in a {@link DeferredFrames} store and offered again after
 * every frame placed and every placement aborted. A stream that breaks the
 * protocol fails the queue pair (the assembler's ERROR) and stops this receiver; a stream that breaks
 * (EOF inside a frame, a receive error) or exceeds the deferred store fails only this connection. Either
 * way nothing is written outside a posted receive, a permitted region, the drain or this receiver's own
 * buffers, and the loop and other connections carry on.
 *
 * <p><b>Memory held only while needed.</b> The carry buffer is held while part of a frame is carried between
 * receives or a header read is in flight into it: a small one ({@code 2 x} {@link ReceiverConfig#headerPeek()})
 * while the frame in hand fits, one of {@code 64 +} segment size {@code +} header peek once it does not. The
 * drain (one segment) is held while a payload is received into it: a duplicate's, or one staged for a receive
 * scattered over several pieces. Both come from {@link ReceiveBuffers}, shared by the loop's connections, and go
 * back once no receive can write into them any more; {@link #heldBytes()} says what is held now. An idle
 * connection holds nothing, or the small carry its next header read goes into after a direct placement.
 *
 * <p>Owner thread of the event loop only. Nothing allocates per frame: a buffer is a pop from the pool's free
 * list, and the placement target is made once.
 */
public final class FrameReceiver implements AutoCloseable {
    private static final int TAG_STREAM = 1;
    private static final int TAG_PEEK = 2;
    private static final int TAG_PAYLOAD = 3;
    private static final int TAG_CANCEL = 4;
    private static final int TAG_RETRY = 5;
    /** How long an empty buffer ring is left to refill before the multishot receive is armed again. */
    private static final long REFILL_WAIT_NANOS = 50_000;

    /** Where the payload of the frame being received goes. */
    private static final int SINK_NONE = 0;
    /** A direct placement: commit at the end. */
    private static final int SINK_PLACEMENT = 1;
    /** A duplicate's payload: forgotten. */
    private static final int SINK_DRAIN = 2;
    /** A deferred frame's payload, behind its header in a slot of the deferred store. */
    private static final int SINK_DEFERRED = 3;

    private final EventLoop loop;
    private final int socket;
    private final BufferRing ring;
    private final MessageAssembler assembler;
    private final DeferredFrames deferred;
    private final ReceiverConfig config;
    private final ReceiveListener listener;
    private final int handlerId;
    private final ReceiverCounters counters = new ReceiverCounters();
    private final FrameHeader header = new FrameHeader();
    private final PlacementTarget target = new PlacementTarget();
    private final ReceiveBuffers buffers;
    /** Whether {@link #buffers} is this receiver's alone, freed with it. */
    private final boolean ownsBuffers;
    /** Bytes of the small carry: a header read's and whatever it left of the frame before. */
    private final long smallCarrySize;
    /** Bytes of the large carry: the longest frame a header read may have to join, and a header read after it. */
    private final long largeCarrySize;
    private final long drainSize;

    /** Bytes of a frame not yet whole (or of header reads) kept between receives; null while none are. */
    private ReceiveBuffers.Block carryBlock;
    private MemorySegment carry;
    private int carryLength;
    /** Whether the single receive in flight reads a header into the carry. */
    private boolean readingHeader;
    /** Where duplicate and staged payloads are received; null while none is. */
    private ReceiveBuffers.Block drain;
    /** Bytes the frame at the start of the carry needs before it can be taken. */
    private int need = FrameHeader.LENGTH;
    /** The frame being taken was joined in the carry from more than one receive. */
    private boolean joined;

    private int sink = SINK_NONE;
    private MemorySegment sinkSegment;
    private long sinkOffset;
    private int sinkLength;
    private int sinkFilled;
    private int sinkSlot = -1;

    private boolean streaming = true;
    private boolean multishotArmed;
    private long multishotId;
    private boolean switchRequested;
    private boolean singleInFlight;
    private long singleId;
    private boolean retryPending;
    private long retryId;
    private int smallInARow;

    private int peerTimestamp;
    private int timestampEcho;
    private boolean peerQuiet;
    private long messageFrames;
    private long timestampsSeen;

    private boolean placedThisTurn;
    private boolean stopped;
    private int failureError;
    private int failureErrno;
    private String failureReason;
    private boolean cleanEnd;
    private boolean reported;
    private boolean closing;
    private boolean freed;

    /**
     * A receiver for {@code socket}, a connected socket of {@code loop}, with buffers of its own: each kind,
     * once used, is kept until {@link #close()}. It starts receiving at once.
     *
     * @param ring      the loop's provided buffer ring for this connection's multishot receive (may be
     *                  shared by the loop's connections); the receiver gives every buffer back at once
     * @param assembler the queue pair direction the frames belong to (several receivers may feed one)
     * @param deferred  the assembler's store of frames waiting for earlier ones
     * @param framing   what the queue pair negotiated (the segment size bounds a frame)
     * @param loop the event loop the connection belongs to; the receiver runs on its owner thread
     * @param socket a connected socket of {@code loop}
     * @param config when to place payloads directly and how to read headers
     * @param listener told when frames were taken and when the connection ends
     * @throws IllegalArgumentException if an argument is missing or {@code socket} is negative
     */
    public FrameReceiver(EventLoop loop, int socket, BufferRing ring, MessageAssembler assembler,
            DeferredFrames deferred, FramingConfig framing, ReceiverConfig config, ReceiveListener listener) {
        this(loop, socket, ring, assembler, deferred, framing, config, listener, new ReceiveBuffers(1), true);
    }

    /**
     * A receiver for {@code socket}, a connected socket of {@code loop}, that leases its carry buffer and drain
     * from {@code buffers} only while it needs them. It starts receiving at once.
     *
     * @param ring      the loop's provided buffer ring for this connection's multishot receive (may be
     *                  shared by the loop's connections); the receiver gives every buffer back at once
     * @param assembler the queue pair direction the frames belong to (several receivers may feed one)
     * @param deferred  the assembler's store of frames waiting for earlier ones
     * @param framing   what the queue pair negotiated (the segment size bounds a frame)
     * @param loop the event loop the connection belongs to; the receiver runs on its owner thread
     * @param socket a connected socket of {@code loop}
     * @param config when to place payloads directly and how to read headers
     * @param listener told when frames were taken and when the connection ends
     * @param buffers the loop's receive buffers; must outlive this receiver's {@link #close()}
     * @throws IllegalArgumentException if an argument is missing or {@code socket} is negative
     */
    public FrameReceiver(EventLoop loop, int socket, BufferRing ring, MessageAssembler assembler,
            DeferredFrames deferred, FramingConfig framing, ReceiverConfig config, ReceiveListener listener,
            ReceiveBuffers buffers) {
        this(loop, socket, ring, assembler, deferred, framing, config, listener, buffers, false);
    }

    private FrameReceiver(EventLoop loop, int socket, BufferRing ring, MessageAssembler assembler,
            DeferredFrames deferred, FramingConfig framing, ReceiverConfig config, ReceiveListener listener,
            ReceiveBuffers buffers, boolean ownsBuffers) {
        if (loop == null || ring == null || assembler == null || deferred == null || framing == null
                || config == null || listener == null || buffers == null) {
            throw new IllegalArgumentException(
                    "loop, ring, assembler, deferred, framing, config, listener and buffers are required");
        }
        if (socket < 0) {
            throw new IllegalArgumentException("socket handle must be >= 0, got " + socket);
        }
        this.loop = loop;
        this.socket = socket;
        this.ring = ring;
        this.assembler = assembler;
        this.deferred = deferred;
        this.config = config;
        this.listener = listener;
        this.buffers = buffers;
        this.ownsBuffers = ownsBuffers;
        this.drainSize = framing.segmentSize();
        this.largeCarrySize = DeferredFrames.MAX_HEADER + drainSize + config.headerPeek();
        this.smallCarrySize = Math.min(2L * config.headerPeek(), largeCarrySize);
        // A method reference, not this: the loop's callback stays out of the public API.
        this.handlerId = loop.registerHandler(this::onCompletion);
        pump();
    }

    /** {@return the decisions and volumes of this receiver so far} */
    public ReceiverCounters counters() {
        return counters;
    }

    /**
     * {@return whether the connection currently keeps a multishot receive on the buffer ring (else: direct placement)}
     */
    public boolean streaming() {
        return streaming;
    }

    /**
     * {@return bytes of native memory this receiver holds now}: its carry buffer while part of a frame is carried or
     * a header read is in flight, its drain while a payload is received into it; 0 when idle on the buffer ring.
     * With buffers of its own (no {@link ReceiveBuffers} given), also those kept idle for later frames. The
     * deferred store is the queue pair's ({@link DeferredFrames#allocatedBytes()}).
     */
    public long heldBytes() {
        return (carry == null ? 0 : carry.byteSize()) + (drain == null ? 0 : drain.memory.byteSize())
                + (ownsBuffers ? buffers.idleBytes() : 0);
    }

    /**
     * Stops receiving: cancels what is in flight; a placement whose payload was not all received is
     * aborted once its receive has completed (the kernel may be writing into it until then). Buffers go
     * back when nothing is in flight any more; the socket stays the caller's to close.
     */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        stopped = true;
        cancelInFlight();
        freeWhenIdle();
    }

    // ---------------------------------------------------------------- completions

    private void onCompletion(int op, int tag, int result, int flags) {
        switch (tag) {
            case TAG_STREAM -> onStream(result, flags);
            case TAG_PEEK -> onHeaderRead(result);
            case TAG_PAYLOAD -> onPayload(result);
            case TAG_RETRY -> retryPending = false;
            default -> { } // a cancel's own result: the target's completion says what happened
        }
        if (!freeWhenIdle()) {
            pump();
        }
        // Even once freed: the abort of a closed receiver's placement may have placed a kept copy.
        report();
    }

    private void onStream(int result, int flags) {
        boolean switching = switchRequested;
        if (!CqeFlags.hasMore(flags)) {
            multishotArmed = false;
            if (switching) {
                switchRequested = false;
                streaming = false;
            }
        }
        if (CqeFlags.hasBuffer(flags)) {
            int id = CqeFlags.bufferId(flags);
            try {
                counters.bufferCompletions++;
                if (result > 0 && !stopped) {
                    consume(ring.buffer(id), result);
                }
            } finally {
                ring.recycle(id);
            }
        } else if (result == 0) {
            endOfStream();
        } else if (result == -Errno.ENOBUFS) {
            counters.noBuffers++;
        } else if (result < 0 && !(result == -Errno.ECANCELED && switching)) {
            // A cancel we did not ask for comes from the loop closing: receiving stops, nothing is re-armed.
            failStream(-result, "receive failed: " + Errno.name(-result));
        }
    }

    private void onHeaderRead(int result) {
        singleInFlight = false;
        readingHeader = false;
        if (stopped) {
            return;
        }
        if (result > 0) {
            counters.bytesReceived += result;
            carryLength += result;
            takeCarry();
        } else if (result == 0) {
            endOfStream();
        } else {
            failStream(-result, "header receive failed: " + Errno.name(-result));
        }
    }

    private void onPayload(int result) {
        singleInFlight = false;
        if (result > 0) {
            counters.bytesReceived += result;
            sinkFilled += result;
            if (sink == SINK_PLACEMENT && target.isStaged()) {
                counters.payloadBytesCopied += result; // into the drain, copied to its pieces at commit
            } else if (sink == SINK_PLACEMENT) {
                counters.payloadBytesDirect += result;
            }
        }
        if (stopped) {
            releaseSink();
        } else if (sinkFilled == sinkLength) {
            finishSink();
        } else if (result < 0) {
            failStream(-result, "payload receive failed: " + Errno.name(-result));
        } else {
            endOfStream();
        }
    }

    // ---------------------------------------------------------------- cutting frames

    /** Takes {@code length} bytes a pool buffer brought: finishes the frame in hand, then cuts whole ones. */
    private void consume(MemorySegment buffer, int length) {
        counters.bytesReceived += length;
        long offset = 0;
        long left = length;
        while (left > 0 && !stopped) {
            long used;
            if (sink != SINK_NONE) {
                used = toSink(buffer, offset, left);
            } else if (carryLength > 0) {
                used = Math.min(left, need - carryLength);
                MemorySegment.copy(buffer, offset, carry, carryLength, used);
                carryLength += (int) used;
                if (carryLength >= need) {
                    joined = true;
                    takeCarry();
                    joined = false;
                }
            } else {
                used = cut(buffer, offset, left);
                if (used < left && sink == SINK_NONE && !stopped && holdCarry(need)) {
                    // An incomplete frame: keep its bytes for the next buffer.
                    MemorySegment.copy(buffer, offset + used, carry, 0, left - used);
                    carryLength = (int) (left - used);
                    used = left;
                }
            }
            offset += used;
            left -= used;
        }
    }

    /** Takes what the carry holds: whole frames, and payload bytes of a frame being placed. */
    private void takeCarry() {
        long at = 0;
        while (!stopped && at < carryLength) {
            long used = sink != SINK_NONE ? toSink(carry, at, carryLength - at) : cut(carry, at, carryLength - at);
            if (used == 0) {
                break;
            }
            at += used;
        }
        if (at > 0) {
            MemorySegment.copy(carry, at, carry, 0, carryLength - at);
            carryLength -= (int) at;
        }
        if (carryLength == 0) {
            need = FrameHeader.LENGTH;
            giveBackCarry();
        } else if (!stopped) {
            // The header now whole may announce a frame longer than the small carry.
            holdCarry(need);
        }
    }

    /**
     * Makes the carry hold at least {@code bytes}, keeping what it carries: the small one while that is enough.
     * Returns false, the connection failed, if there is no memory for it.
     */
    private boolean holdCarry(long bytes) {
        if (carry != null && carry.byteSize() >= bytes) {
            return true;
        }
        ReceiveBuffers.Block larger = lease(bytes <= smallCarrySize ? smallCarrySize : largeCarrySize);
        if (larger == null) {
            return false;
        }
        if (carryLength > 0) {
            MemorySegment.copy(carry, 0, larger.memory, 0, carryLength);
        }
        if (carryBlock != null) {
            buffers.giveBack(carryBlock);
        }
        carryBlock = larger;
        carry = larger.memory;
        return true;
    }

    /** Gives the carry back once it carries nothing and no header read can still write into it. */
    private void giveBackCarry() {
        if (carryBlock != null && carryLength == 0 && !readingHeader) {
            buffers.giveBack(carryBlock);
            carryBlock = null;
            carry = null;
        }
    }

    /**
     * A buffer of {@code bytes} from the loop's pool, or null with the connection failed: a lack of memory for
     * it fails this connection, not the loop thread.
     */
    private ReceiveBuffers.Block lease(long bytes) {
        try {
            return buffers.lease(bytes);
        } catch (OutOfMemoryError e) {
            failStream(0, "no memory for a receive buffer of " + bytes + " bytes");
            return null;
        }
    }

    /** Cuts whole frames from {@code available} bytes at {@code offset}; stops at an incomplete one or a payload to place. */
    private long cut(MemorySegment bytes, long offset, long available) {
        long at = 0;
        while (at < available && sink == SINK_NONE && !stopped) {
            int used = frameAt(bytes, offset + at, available - at);
            if (used <= 0) {
                break;
            }
            at += used;
        }
        return at;
    }

    /**
     * Takes the frame at {@code offset}: hands a whole small one to the assembler, or begins the placement
     * of a large one. Returns the bytes used (the header only, for a placement), 0 if more bytes are needed
     * ({@link #need} says how many), -1 if the receiver stopped.
     */
    private int frameAt(MemorySegment bytes, long offset, long available) {
        if (available < FrameHeader.LENGTH) {
            need = FrameHeader.LENGTH;
            return 0;
        }
        header.wrap(bytes, offset).load();
        long length = header.length();
        int headerBytes = FrameHeader.LENGTH + header.extLength();
        // A packed frame is several messages with no one place: always cut whole (it is bounded to fit the carry).
        boolean direct = config.directThreshold() > 0 && length >= config.directThreshold()
                && !Opcode.isPacked(header.opcode());
        long frameBytes = direct ? headerBytes : headerBytes + length;
        if (available < frameBytes) {
            // The lengths are the peer's word: the assembler validates the header before any is trusted.
            int verdict = assembler.onFrame(bytes, offset, available);
            if (verdict != FrameError.TRUNCATED) {
                failProtocol(verdict < 0 ? verdict : FrameError.INCONSISTENT_MESSAGE);
                return -1;
            }
            need = (int) frameBytes;
            return 0;
        }
        noteTimestamps();
        peerQuiet = header.quiet();
        if (header.opcode() != Opcode.ACKNOWLEDGE) {
            messageFrames++;
        }
        if (direct) {
            return beginDirect(bytes, offset, headerBytes, (int) length) ? headerBytes : -1;
        }
        int result = assembler.onFrame(bytes, offset, frameBytes);
        switch (result) {
            case MessageAssembler.ACCEPTED -> {
                counters.framesFromBuffers++;
                counters.payloadBytesCopied += length;
                if (joined && bytes == carry) {
                    counters.framesStraddling++;
                }
                if (!streaming) {
                    smallInARow++;
                }
                placed();
            }
            case MessageAssembler.DUPLICATE -> counters.framesDuplicate++;
            case MessageAssembler.DEFERRED -> keep(bytes, offset, (int) frameBytes);
            default -> failProtocol(result < 0 ? result : FrameError.INCONSISTENT_MESSAGE);
        }
        return stopped ? -1 : (int) frameBytes;
    }

    /**
     * Keeps the timestamps of the frame under {@link #header} (whole: its lengths are about to be judged).
     * They are the peer's word and steer nothing but the owner's RTT estimate, so they are taken unjudged.
     */
    private void noteTimestamps() {
        if (header.timestampPresent()) {
            peerTimestamp = header.timestamp();
            timestampEcho = header.timestampEcho();
            timestampsSeen++;
        }
    }

    /**
     * {@return whether the last frame taken was a quiet ACKNOWLEDGE ({@link FrameHeader#FLAG_QUIET}): the peer has
     * nothing in flight and sends no heartbeats on this connection until it has} The peer's word, judged by the
     * assembler with the rest of the header; it steers only the owner's silence check.
     */
    public boolean peerQuiet() {
        return peerQuiet;
    }

    /** {@return the frames taken that belong to messages: every frame but ACKNOWLEDGEs (heartbeats among them)} */
    public long messageFrames() {
        return messageFrames;
    }

    /**
     * {@return the {@code timestamp} of the last frame that carried timestamps ({@code timestamp_present}): what the
     * owner echoes back on this connection, so the peer can measure its round trip}
     */
    public int peerTimestamp() {
        return peerTimestamp;
    }

    /** {@return the {@code timestamp_echo} of the last frame that carried timestamps: the owner's round-trip sample} */
    public int timestampEcho() {
        return timestampEcho;
    }

    /**
     * {@return how many frames carried timestamps so far}: tells the owner whether {@link #peerTimestamp()} is fresh.
     */
    public long timestampsSeen() {
        return timestampsSeen;
    }

    private boolean beginDirect(MemorySegment bytes, long offset, int headerBytes, int length) {
        // Whether the payload goes to the drain is the assembler's answer, which needs one to give.
        drain = lease(drainSize);
        if (drain == null) {
            return false;
        }
        target.drain(drain.memory);
        int result = assembler.beginPlacement(bytes, offset, headerBytes, target);
        boolean intoDrain = result == MessageAssembler.DUPLICATE
                || result == MessageAssembler.ACCEPTED && target.segment() == drain.memory;
        if (!intoDrain) {
            giveBackDrain();
        }
        switch (result) {
            case MessageAssembler.ACCEPTED -> {
                startSink(SINK_PLACEMENT, target.segment(), target.offset(), target.length());
                smallInARow = 0;
                leaveStreaming();
            }
            case MessageAssembler.DUPLICATE -> {
                counters.framesDuplicate++;
                startSink(SINK_DRAIN, target.segment(), target.offset(), target.length());
            }
            case MessageAssembler.DEFERRED -> {
                int slot = deferred.reserve(headerBytes + length);
                if (slot < 0) {
                    failStream(0, deferred.whyFull());
                    return false;
                }
                MemorySegment.copy(bytes, offset, deferred.slot(slot), 0, headerBytes);
                sinkSlot = slot;
                startSink(SINK_DEFERRED, deferred.slot(slot), headerBytes, length);
            }
            default -> {
                failProtocol(result < 0 ? result : FrameError.INCONSISTENT_MESSAGE);
                return false;
            }
        }
        return true;
    }

    /** Once a payload is placed directly, a multishot receive would only read the next ones ahead: stop it. */
    private void leaveStreaming() {
        if (!streaming || switchRequested) {
            return;
        }
        counters.switchesToDirect++;
        if (multishotArmed) {
            switchRequested = true;
            loop.cancel(handlerId, TAG_CANCEL, multishotId);
        } else {
            streaming = false;
        }
    }

    private void keep(MemorySegment bytes, long offset, int frameBytes) {
        int slot = deferred.reserve(frameBytes);
        if (slot < 0) {
            failStream(0, deferred.whyFull());
            return;
        }
        MemorySegment.copy(bytes, offset, deferred.slot(slot), 0, frameBytes);
        deferred.completed(slot);
        counters.framesDeferred++;
    }

    // ---------------------------------------------------------------- payloads

    private void startSink(int kind, MemorySegment segment, long offset, int length) {
        sink = kind;
        sinkSegment = segment;
        sinkOffset = offset;
        sinkLength = length;
        sinkFilled = 0;
        if (length == 0) {
            finishSink();
        }
    }

    /** Copies payload bytes that arrived in a buffer to where the frame being received goes. */
    private long toSink(MemorySegment bytes, long offset, long available) {
        int n = (int) Math.min(available, sinkLength - sinkFilled);
        MemorySegment.copy(bytes, offset, sinkSegment, sinkOffset + sinkFilled, n);
        sinkFilled += n;
        if (sink == SINK_PLACEMENT) {
            counters.payloadBytesCopied += n;
        }
        if (sinkFilled == sinkLength) {
            finishSink();
        }
        return n;
    }

    private void finishSink() {
        int kind = sink;
        sink = SINK_NONE;
        sinkSegment = null;
        if (kind == SINK_PLACEMENT) {
            int result = assembler.commit(target);
            // A staged payload is copied out of the drain at commit: nothing reads it any more.
            giveBackDrain();
            if (result < 0) {
                failProtocol(result);
                return;
            }
            counters.framesPlaced++;
            placed();
        } else if (kind == SINK_DRAIN) {
            giveBackDrain();
        } else if (kind == SINK_DEFERRED) {
            deferred.completed(sinkSlot);
            sinkSlot = -1;
            counters.framesDeferred++;
            offerDeferred();
        }
    }

    /** A frame was placed: frames kept for later may now fit, and the owner has completions to poll. */
    private void placed() {
        placedThisTurn = true;
        offerDeferred();
    }

    /** Offers the kept frames again; one placed now (or refused, which flushes) is news for the owner too. */
    private void offerDeferred() {
        int result = deferred.offerAgain();
        if (result != 0) {
            placedThisTurn = true;
        }
        if (result < 0) {
            failProtocol(result);
        }
    }

    /** Gives up the frame in hand once no receive can be writing into it any more. */
    private void releaseSink() {
        if (singleInFlight) {
            return;
        }
        if (sink == SINK_PLACEMENT && target.isPending()) {
            assembler.abort(target);
            // A copy of the segment kept while this placement was in flight is now the one to place.
            offerDeferred();
            // The abort may have released completions (in ERROR, the flush that waited for it): the owner is
            // told as for any placement, also while closing, or they wait for its next unrelated turn.
            placedThisTurn = true;
        } else if (sink == SINK_DEFERRED) {
            deferred.release(sinkSlot);
            sinkSlot = -1;
        }
        sink = SINK_NONE;
        sinkSegment = null;
        giveBackDrain();
    }

    private void giveBackDrain() {
        if (drain != null) {
            target.drain(null);
            buffers.giveBack(drain);
            drain = null;
        }
    }

    // ---------------------------------------------------------------- what to receive next

    private void pump() {
        if (stopped) {
            return;
        }
        if (streaming) {
            if (!multishotArmed && !switchRequested && !retryPending && !singleInFlight) {
                armMultishot();
            }
            return;
        }
        if (singleInFlight || multishotArmed) {
            return;
        }
        if (sink != SINK_NONE) {
            singleInFlight = true;
            counters.receives++;
            singleId = loop.recv(handlerId, TAG_PAYLOAD, socket, sinkSegment, sinkOffset + sinkFilled,
                    sinkLength - sinkFilled, MsgFlags.WAITALL);
        } else if (smallInARow >= config.smallFramesToStream()) {
            smallInARow = 0;
            streaming = true;
            counters.switchesToStreaming++;
            armMultishot();
        } else if (holdCarry(Math.min(largeCarrySize, Math.max(carryLength + (long) config.headerPeek(), need)))) {
            int ask = (int) Math.min(carry.byteSize() - carryLength,
                    Math.max(config.headerPeek(), need - carryLength));
            singleInFlight = true;
            readingHeader = true;
            counters.receives++;
            singleId = loop.recv(handlerId, TAG_PEEK, socket, carry, carryLength, ask, MsgFlags.NONE);
        }
    }

    private void armMultishot() {
        if (ring.available() == 0) {
            // Every buffer is lent out (the ring is shared): arming now would only answer ENOBUFS again.
            retryPending = true;
            retryId = loop.timeout(handlerId, TAG_RETRY, REFILL_WAIT_NANOS);
            return;
        }
        multishotArmed = true;
        counters.multishotArms++;
        multishotId = loop.recvMultishot(handlerId, TAG_STREAM, socket, ring);
    }

    // ---------------------------------------------------------------- ending

    private void endOfStream() {
        if (carryLength == 0 && sink == SINK_NONE) {
            stopped = true;
            cleanEnd = true;
            cancelInFlight();
        } else if (sink != SINK_NONE) {
            failStream(0, "end of stream inside a payload, " + (sinkLength - sinkFilled) + " bytes missing");
        } else {
            failStream(0, "end of stream inside a frame");
        }
    }

    /** The stream broke: this connection fails, the queue pair does not. */
    private void failStream(int errno, String reason) {
        stop(0, errno, reason);
    }

    /** The stream broke the protocol: the assembler has moved the queue pair to ERROR. */
    private void failProtocol(int frameError) {
        stop(frameError, 0, "frame refused: " + FrameError.name(frameError));
    }

    private void stop(int frameError, int errno, String reason) {
        if (stopped) {
            return;
        }
        stopped = true;
        failureError = frameError;
        failureErrno = errno;
        failureReason = reason;
        releaseSink();
        cancelInFlight();
    }

    private void cancelInFlight() {
        if (multishotArmed) {
            loop.cancel(handlerId, TAG_CANCEL, multishotId);
        }
        if (singleInFlight) {
            loop.cancel(handlerId, TAG_CANCEL, singleId);
        }
        if (retryPending) {
            loop.cancel(handlerId, TAG_CANCEL, retryId);
        }
    }

    /** Tells the owner what this turn brought, each ending at most once. */
    private void report() {
        if (placedThisTurn) {
            placedThisTurn = false;
            listener.onReceived();
        }
        if (stopped && !reported && !closing) {
            reported = true;
            if (cleanEnd) {
                listener.onClosed();
            } else {
                listener.onFailed(failureError, failureErrno, failureReason);
            }
        }
    }

    /**
     * Once a stopped receiver has nothing in flight, no receive can write into its buffers: they go back, and a
     * closed one lets go of the loop. Returns whether it is closed and let go.
     */
    private boolean freeWhenIdle() {
        if (!stopped || freed || multishotArmed || singleInFlight || retryPending || loop.inFlight(handlerId) > 0) {
            return freed;
        }
        releaseSink();
        carryLength = 0;
        giveBackCarry();
        if (!closing) {
            return false;
        }
        freed = true;
        loop.unregisterHandler(handlerId);
        if (ownsBuffers) {
            buffers.close();
        }
        return true;
    }

    @Override
    public String toString() {
        return "FrameReceiver[socket=" + socket + (streaming ? " streaming" : " direct")
                + (stopped ? " stopped" : "") + (closing ? " closing" : "") + " carry=" + carryLength
                + " held=" + heldBytes()
                + (sink != SINK_NONE ? " payload " + sinkFilled + "/" + sinkLength : "") + " " + counters + "]";
    }
}
