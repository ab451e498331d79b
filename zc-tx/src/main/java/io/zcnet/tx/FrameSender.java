package io.zcnet.tx;

import io.zcnet.framing.Segmenter;
import io.zcnet.framing.SgeCursor;
import io.zcnet.framing.SgeList;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.GatherList;
import io.zcnet.ring.MsgFlags;
import io.zcnet.ring.Op;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.IntUnaryOperator;

/**
 * The send side of one TCP connection: frames (a header, then a payload slice) go out as one byte stream,
 * in the order offered, in as few system calls and copies as the kernel allows.
 *
 * <h2>Batches</h2>
 * Frames offered between two {@link #flush()} calls (one loop turn) leave in one {@code sendmsg}: a frame
 * of at most {@link SenderConfig#copyThreshold()} bytes is copied into a staging buffer beside its
 * neighbours (as it is offered when no send holds the buffer, else when its batch is made), a larger one
 * contributes its header and its payload slice by reference. A payload may be
 * one slice or several ({@link #offer(MemorySegment, long, int, SgeList, long, int)}: a frame whose bytes lie
 * in several elements of a scatter/gather list), each gathered by reference as its own piece of the
 * {@code sendmsg}, up to {@link #maxPayloadPieces()} per frame. Only one send is in
 * flight at a time, and a short one is finished (the rest of the same gather list) before anything behind
 * it goes, so no two sends can interleave their bytes.
 *
 * <h2>Zero copy, when it pays</h2>
 * A batch holding a payload of at least {@link SenderConfig#zeroCopyThreshold()} bytes goes out as
 * {@code SENDMSG_ZC}; its frames are reported sent ({@link SendListener#onSent}) only when the kernel's
 * notification says it no longer reads them. Each notification tells whether the kernel copied anyway
 * ({@code IORING_NOTIF_USAGE_ZC_COPIED}: loopback, veth, devices without scatter-gather); after
 * {@link SenderConfig#copiedToSwitch()} such reports in a row the connection sends large batches by copy,
 * which is cheaper than a zero copy that copies, and every {@link SenderConfig#reprobeEvery()} large batches
 * tries zero copy once more in case the route changed. Every decision is counted ({@link SenderCounters}).
 *
 * <h2>Back-pressure, not buffering</h2>
 * A sender holds at most {@link SenderConfig#queueFrames()} frames and {@link SenderConfig#queueBytes()}
 * bytes; past that {@link #offer} answers {@link #BACK_PRESSURED} and {@link SendListener#onWritable()}
 * follows once there is room. Nothing allocates per frame.
 *
 * <h2>Memory</h2>
 * Headers are copied into (or written straight into, {@link #offerFrame}) header slots, or with
 * their payload into the staging buffer; other payloads are referenced and must stay alive and unchanged
 * until their token is reported sent. A frame of one
 * payload slice keeps it beside its header; the slices of a frame of several wait in a FIFO of pieces,
 * released with their frames, which holds twice as many pieces as the sender holds frames.
 *
 * <p>All of that storage, everything the configuration sizes, is a space lent by a {@link SenderSpaces}
 * pool: taken when a frame is offered to a sender that holds none, given back once the sender is idle
 * (every frame reported sent, no send in flight, no zero-copy notification due) and, if it was busy, once its
 * owner's {@link #onTick} finds it quiet, so an idle connection
 * costs a few hundred bytes, not its queue. Tokens, counters and the zero-copy adaptation are the sender's
 * and go on across spaces. A sender made without a pool has one of its own, which keeps its space while
 * it is idle.
 *
 * <p>Owner thread of the event loop only, like the loop itself.
 */
public final class FrameSender implements AutoCloseable {
    /** {@link #offer} result: the sender is full; retry after {@link SendListener#onWritable()}. */
    public static final long BACK_PRESSURED = -1;
    /** {@link #offer} result: the sender failed or was closed. */
    public static final long CLOSED = -2;
    /** Header and extension bytes one frame may carry: the 32-byte base header plus at most 28. */
    public static final int MAX_HEADER = 64;

    private final EventLoop loop;
    private final int socket;
    private final SenderConfig config;
    private final SendListener listener;
    private final int handlerId;
    private final SenderCounters counters = new SenderCounters();
    private final SenderSpaces spaces;
    /** The pool is this sender's alone (none was given): closed with the sender. */
    private final boolean ownsSpaces;
    private final boolean zeroCopyAvailable;

    // Slots of the space by token & mask, pieces by piece number & pieceMask, batches by number & mask: the sizes
    // of the space held now.
    private int mask;
    private int pieceMask;
    /** The space filled up and a larger one is to be had: it moves into one once no batch is out. */
    private boolean wantLarger;
    private final int maxPayloadPieces;
    /** Where the sender works while it has something to send; null while it is idle. */
    private SenderSpace space;
    /** Batches sent since the owner's last {@link #onTick}: more than one, and an idle sender keeps its space. */
    private int batchesSinceTick;
    /**
     * A header-only frame offered to a sender that held no space waits here, not in a space: sent from here by the
     * next {@link #flush} if it is still alone, moved into a space if another frame joins it first. So a heartbeat
     * or an acknowledgement on an idle connection costs no space.
     */
    private final MemorySegment controlFrame = Arena.ofAuto().allocate(MAX_HEADER, 8);
    private int controlLength;
    /** The token of the frame in {@link #controlFrame}, or -1 when it holds none. */
    private long controlToken = -1;
    private boolean controlSending;
    private int controlSent;

    /** The next piece number to hand out. */
    private long pieceTail;
    /** The oldest piece whose frame is not yet reported sent. */
    private long pieceReleased;
    private final SgeCursor spans = new SgeCursor();
    /** The next token to hand out. */
    private long tail;
    /** The first frame not yet in a batch. */
    private long unbatched;
    /** The first token not yet reported sent. */
    private long released;
    private long heldBytes;

    // The FIFO of batches in the space: the oldest not yet released, and the next number to hand out.
    private long firstBatch;
    private long nextBatch;

    // The batch in flight.
    private boolean sending;
    private boolean sendingZeroCopy;
    private long sentOfBatch;
    /** A zero-copy batch used the staging buffer: it is the kernel's until that batch's notifications. */
    private long stagingHeldBy = -1;

    private boolean zeroCopyMode;
    private int copiedInARow;
    private int largeBatchesByCopy;
    private boolean backPressured;
    private boolean failed;
    private boolean closing;
    private boolean freed;
    /** Test seam: rewrites a notification's result before the adaptation reads it. */
    private IntUnaryOperator notificationFilter = IntUnaryOperator.identity();

    /**
     * A sender for {@code socket}, a connected socket of {@code loop}, with a pool of its own that keeps its
     * one space while it is idle: the memory of a sender that never lets go of it. Owner thread of the loop.
     *
     * @param loop the event loop the connection belongs to
     * @param socket a connected socket of {@code loop}
     * @param config queue bounds, copy and zero-copy thresholds
     * @param listener told when frames have left, when there is room again, and when the connection fails
     * @throws IllegalArgumentException if an argument is missing or {@code socket} is negative
     */
    public FrameSender(EventLoop loop, int socket, SenderConfig config, SendListener listener) {
        this(loop, socket, config, listener, config == null ? null : new SenderSpaces(config, 1), true);
    }

    /**
     * A sender for {@code socket}, a connected socket of {@code loop}, that works in a space of
     * {@code spaces} only while it has something to send. Owner thread of the loop.
     *
     * @param loop the event loop the connection belongs to
     * @param socket a connected socket of {@code loop}
     * @param config queue bounds, copy and zero-copy thresholds
     * @param listener told when frames have left, when there is room again, and when the connection fails
     * @param spaces the pool of {@code loop}'s senders, its spaces of {@code config}'s sizes; stays open
     *               when this sender closes
     * @throws IllegalArgumentException if an argument is missing, {@code socket} is negative, or the spaces
     *                                  are of other sizes than {@code config}'s
     */
    public FrameSender(EventLoop loop, int socket, SenderConfig config, SendListener listener, SenderSpaces spaces) {
        this(loop, socket, config, listener, spaces, false);
    }

    private FrameSender(EventLoop loop, int socket, SenderConfig config, SendListener listener, SenderSpaces spaces,
            boolean ownsSpaces) {
        if (loop == null || config == null || listener == null || spaces == null) {
            throw new IllegalArgumentException("loop, config, listener and spaces are required");
        }
        if (socket < 0) {
            throw new IllegalArgumentException("socket handle must be >= 0, got " + socket);
        }
        if (!spaces.fits(config)) {
            throw new IllegalArgumentException("sender of " + config.queueFrames() + " frames and "
                    + config.stagingBytes() + " staging bytes cannot work in " + spaces);
        }
        this.loop = loop;
        this.socket = socket;
        this.config = config;
        this.listener = listener;
        this.spaces = spaces;
        this.ownsSpaces = ownsSpaces;
        // What the smallest space a sender works in gathers: a frame of more pieces would fit no space it starts in.
        int frames = spaces.startFrames();
        this.maxPayloadPieces = Math.min(SenderSpace.gatherCapacity(frames) - 2, 2 * frames);
        this.zeroCopyAvailable = config.zeroCopyThreshold() > 0 && loop.supports(Op.SENDMSG_ZC);
        this.zeroCopyMode = zeroCopyAvailable;
        // A method reference, not this: the loop's callback stays out of the public API.
        this.handlerId = loop.registerHandler(this::onCompletion);
    }

    /**
     * Queues a frame: {@code headerLength} bytes of {@code header} (copied now) followed by
     * {@code payloadLength} bytes of {@code payload} (referenced until reported sent).
     *
     * @return the frame's token (0, 1, 2, ... in offer order), {@link #BACK_PRESSURED} or {@link #CLOSED}
     * @param header the memory holding the header and extension
     * @param headerOffset where the header starts
     * @param headerLength header and extension bytes, 1 to {@link #MAX_HEADER}
     * @param payload the memory holding the payload, unchanged until reported sent (may be null when empty)
     * @param payloadOffset where the payload starts
     * @param payloadLength payload bytes
     * @throws IllegalArgumentException if the header is empty or longer than {@link #MAX_HEADER}, or a range
     *                                  lies outside its segment, or the payload is not alive native memory
     */
    public long offer(MemorySegment header, long headerOffset, int headerLength, MemorySegment payload,
            long payloadOffset, int payloadLength) {
        checkRange(header, headerOffset, headerLength, "header");
        if (headerLength < 1 || headerLength > MAX_HEADER) {
            throw new IllegalArgumentException("header length must be in [1, " + MAX_HEADER + "], got " + headerLength);
        }
        checkPayload(payload, payloadOffset, payloadLength);
        if (payloadLength == 0 && space == null && controlToken < 0 && released == tail && !sending && !failed
                && !closing) {
            MemorySegment.copy(header, headerOffset, controlFrame, 0, headerLength);
            controlLength = headerLength;
            controlToken = tail;
            heldBytes += headerLength;
            unbatched = tail + 1; // the frame is sent from here, not in a batch
            return tail++;
        }
        long refused = admit(headerLength + (long) payloadLength);
        if (refused != 0) {
            return refused;
        }
        SenderSpace s = space;
        long at = stagingSpot(s, headerLength + payloadLength);
        if (at >= 0) {
            MemorySegment.copy(header, headerOffset, s.staging, at, headerLength);
            MemorySegment.copy(payload, payloadOffset, s.staging, at + headerLength, payloadLength);
            return queue(headerLength, null, 0, payloadLength, 0, at);
        }
        MemorySegment.copy(header, headerOffset, s.headers, slot(tail), headerLength);
        return queue(headerLength, payload, payloadOffset, payloadLength, 0, -1);
    }

    /**
     * Where in staging a frame of {@code bytes} is copied now rather than when its batch is made, or -1: it is
     * small, no send or zero-copy notification holds the staging buffer, and every frame before it waiting for
     * a batch was staged too (staged frames are always the oldest of those, side by side, so they stay one run,
     * in order, and it goes right after the last). Copied now, its header needs no slot and its batch no second
     * pass; a frame offered while a send is in flight waits for the batch as before.
     */
    private long stagingSpot(SenderSpace s, int bytes) {
        if (sending || stagingHeldBy >= 0 || bytes > config.copyThreshold()) {
            return -1;
        }
        long at = 0; // nothing waiting and nothing in flight: the whole buffer is free
        if (unbatched != tail) {
            int last = (int) ((tail - 1) & mask);
            if (s.stagedAt[last] < 0) {
                return -1;
            }
            at = s.stagedAt[last] + s.headerLength[last] + s.payloadLength[last];
        }
        return at + bytes <= s.staging.byteSize() ? at : -1;
    }

    /**
     * Queues a frame whose payload is bytes {@code [position, position + payloadLength)} of the message
     * {@code payload} lays over its elements: the header is copied now, each element's slice is referenced
     * (until reported sent) and gathered as a piece of its own, so no payload byte is copied here. A payload
     * in one element takes the path of {@link #offer(MemorySegment, long, int, MemorySegment, long, int)}.
     *
     * @return the frame's token, {@link #BACK_PRESSURED} (also when the FIFO of pieces is full) or
     *         {@link #CLOSED}
     * @param header the memory holding the header and extension
     * @param headerOffset where the header starts
     * @param headerLength header and extension bytes, 1 to {@link #MAX_HEADER}
     * @param payload the message's elements, their memory unchanged until reported sent
     * @param position where the frame's payload starts in the message
     * @param payloadLength payload bytes
     * @throws IllegalArgumentException as the other {@code offer}, or if the range lies outside the list, an
     *                                  element it touches is not alive native memory, or it touches more
     *                                  than {@link #maxPayloadPieces()} elements
     */
    public long offer(MemorySegment header, long headerOffset, int headerLength, SgeList payload, long position,
            int payloadLength) {
        if (payload == null) {
            throw new IllegalArgumentException("payload list is null");
        }
        spans.over(payload, position, payloadLength);
        if (payload.spans(position, payloadLength) <= 1) {
            return spans.next() ? offer(header, headerOffset, headerLength, spans.segment(), spans.offset(), payloadLength)
                    : offer(header, headerOffset, headerLength, MemorySegment.NULL, 0, 0);
        }
        checkRange(header, headerOffset, headerLength, "header");
        if (headerLength < 1 || headerLength > MAX_HEADER) {
            throw new IllegalArgumentException("header length must be in [1, " + MAX_HEADER + "], got " + headerLength);
        }
        long refused = admit(headerLength + (long) payloadLength);
        if (refused != 0) {
            return refused;
        }
        MemorySegment.copy(header, headerOffset, space.headers, slot(tail), headerLength);
        return queueGathered(headerLength, payload, position, payloadLength);
    }

    /**
     * Where a whole frame of {@code bytes} (header and payload) may be written in place, in
     * {@link #stagingBuffer()}, to be queued by {@link #queueStaged} before anything else is offered: the offset, or
     * -1 when it must be offered instead (no room in the buffer or the queue, a send holds the buffer, the frame
     * is above the copy threshold, or the sender is closed; {@code offer} then tells which). Spares a small frame
     * the copy of its header from wherever it was written. An idle sender takes a space to answer; if no frame
     * is queued after all, the next {@link #flush()} gives it back.
     *
     * @param bytes the frame's header, extension and payload bytes
     * @return the offset in the staging buffer, or -1
     */
    public long stagingRoom(int bytes) {
        if (bytes < 1 || bytes > config.copyThreshold() || admit(bytes) != 0) {
            return -1;
        }
        return stagingSpot(space, bytes);
    }

    /**
     * {@return the memory {@link #stagingRoom} offsets point into}: the staging buffer of the space this sender
     * holds, taken now if it holds none (as {@link #stagingRoom} does). Valid until the sender is idle again.
     *
     * @throws IllegalStateException if the sender is closed or failed and holds no space
     */
    public MemorySegment stagingBuffer() {
        if (space == null) {
            if (failed || closing) {
                throw new IllegalStateException("a closed or failed sender has no staging buffer");
            }
            useSpace(spaces.take());
        }
        return space.staging;
    }

    /**
     * Queues the frame written at {@code at} of the staging buffer, where {@link #stagingRoom} said it could go.
     *
     * @param at the offset {@link #stagingRoom} returned for this frame
     * @param headerBytes header and extension bytes, 1 to {@link #MAX_HEADER}
     * @param payloadBytes payload bytes after them
     * @return the frame's token
     * @throws IllegalArgumentException if {@code at} is not where the next staged frame goes, or the lengths do
     *                                  not fit
     */
    public long queueStaged(long at, int headerBytes, int payloadBytes) {
        if (headerBytes < 1 || headerBytes > MAX_HEADER || payloadBytes < 0
                || space == null || at != stagingSpot(space, headerBytes + payloadBytes)) {
            throw new IllegalArgumentException("no staged frame of " + headerBytes + "+" + payloadBytes
                    + " bytes was made room for at " + at);
        }
        return queue(headerBytes, null, 0, payloadBytes, 0, at);
    }

    /**
     * {@return the pieces one frame's payload may be gathered from: what one {@code sendmsg} of this sender takes
     * beside a header}
     */
    public int maxPayloadPieces() {
        return maxPayloadPieces;
    }

    /**
     * Queues frame {@code index} of the work request {@code segmenter} describes: the header is written
     * straight into the sender's slot, the payload is the segmenter's source slice.
     *
     * @return the frame's token, {@link #BACK_PRESSURED} or {@link #CLOSED}
     * @param segmenter a segmenter with a work request begun
     * @param index the frame's number in the work request
     */
    public long offerFrame(Segmenter segmenter, long index) {
        if (segmenter == null) {
            throw new IllegalArgumentException("segmenter is null");
        }
        // The payload length is known only once the frame is written: admit the largest it can be.
        long refused = admit(MAX_HEADER);
        if (refused != 0) {
            return refused;
        }
        int written = segmenter.writeFrame(index, space.headers, slot(tail));
        int length = segmenter.payloadLength();
        if (!segmenter.isPayloadContiguous()) {
            return queueGathered(written, segmenter.sources(), segmenter.payloadPosition(), length);
        }
        MemorySegment source = length == 0 ? MemorySegment.NULL : segmenter.source();
        long offset = length == 0 ? 0 : segmenter.payloadOffset();
        checkPayload(source, offset, length);
        if (heldBytes > 0 && heldBytes + written + length > config.queueBytes()) {
            return backPressure();
        }
        return queue(written, source, offset, length, 0, -1);
    }

    /**
     * Sends what is queued, unless a send is in flight (then it follows that one). With nothing queued or
     * in flight, gives back a space {@link #stagingRoom} took for a frame that was never queued.
     */
    public void flush() {
        if (!sending && !failed && !freed) {
            if (controlToken >= 0) {
                sendControlFrame();
                return;
            }
            sendNext();
            giveBackIfIdle();
        }
    }

    /** {@return the decisions and volumes of this sender so far} */
    public SenderCounters counters() {
        return counters;
    }

    /** {@return whether large batches currently go out zero-copy} */
    public boolean zeroCopyActive() {
        return zeroCopyMode;
    }

    /**
     * {@return whether some frame offered has not been taken by the kernel yet: queued, or in a send whose
     * completion has not come} Frames the kernel took but still reads from (zero-copy notifications due) do not
     * count: they leave whoever drives the loop.
     */
    public boolean hasUnsent() {
        return sending || unbatched != tail;
    }

    /** {@return how many frames are queued or in flight and not yet reported sent} */
    public int held() {
        return (int) (tail - released);
    }

    /**
     * {@return the bytes (headers and payloads) of the frames {@link #held()}}: by the time
     * {@link SendListener#onSent} runs, those it reports are no longer counted
     */
    public long heldBytes() {
        return heldBytes;
    }

    /**
     * {@return whether the sender holds a space of its pool now}: from the first frame offered (or
     * {@link #stagingRoom} answered) while it held none until every frame is reported sent, no send is in
     * flight and no zero-copy notification is due; a failed sender keeps it until it is closed.
     */
    public boolean holdsSpace() {
        return space != null;
    }

    /**
     * Stops taking frames. Memory the kernel may still read (a send in flight, notifications due) is
     * given back to the pool (or freed, when the pool is the sender's own) when the last completion arrives;
     * the socket stays the caller's to close.
     */
    @Override
    public void close() {
        closing = true;
        freeWhenIdle();
    }

    // ---------------------------------------------------------------- queueing

    private long admit(long bytes) {
        if (failed || closing) {
            return CLOSED;
        }
        if (space == null) {
            useSpace(spaces.take());
            if (controlToken >= 0 && !controlSending) {
                moveControlFrameIntoSpace();
            }
        }
        if (tail - released == mask + 1) {
            return spaceFull();
        }
        if (heldBytes > 0 && heldBytes + bytes > config.queueBytes()) {
            return backPressure();
        }
        return 0;
    }

    private void useSpace(SenderSpace s) {
        space = s;
        mask = s.frames - 1;
        pieceMask = 2 * s.frames - 1;
    }

    /** The space holds as many frames (or pieces) as it can: back-pressure, and a larger space if there is one. */
    private long spaceFull() {
        if (spaces.grows() && !spaces.isLarge(space)) {
            wantLarger = true;
        }
        return backPressure();
    }

    /**
     * Moves into a large space if the small one filled up, once nothing of it is the kernel's: no batch in flight
     * or waiting for its release or notifications, the staging buffer no zero-copy batch's. The frames queued
     * and not yet batched move with their tokens; the small space goes back to the pool.
     */
    private void growIfWanted() {
        if (!wantLarger || sending || firstBatch != nextBatch || stagingHeldBy >= 0 || space == null) {
            return;
        }
        SenderSpace small = space;
        SenderSpace large = spaces.takeLarge();
        large.takeOver(small, released, tail, pieceReleased, pieceTail, small.staging.byteSize());
        useSpace(large);
        wantLarger = false;
        counters.spacesGrown++;
        spaces.giveBack(small);
    }

    /** Sends the next batch, in a larger space first if the sender is waiting for one. Not while a send is in flight. */
    private void sendNext() {
        growIfWanted();
        sendBatch();
    }

    /** Another frame joins a waiting header-only frame: it goes first in the staging buffer, as if staged when offered. */
    private void moveControlFrameIntoSpace() {
        SenderSpace s = space;
        int i = (int) (controlToken & mask);
        MemorySegment.copy(controlFrame, 0, s.staging, 0, controlLength);
        s.stagedAt[i] = 0;
        s.headerLength[i] = controlLength;
        s.payload[i] = null;
        s.payloadOffset[i] = 0;
        s.payloadLength[i] = 0;
        s.pieceCount[i] = 0;
        s.firstPiece[i] = pieceTail;
        unbatched = controlToken;
        controlToken = -1;
    }

    /** Sends the header-only frame waiting alone, straight from {@link #controlFrame}. */
    private void sendControlFrame() {
        sending = true;
        controlSending = true;
        controlSent = 0;
        counters.sendCalls++;
        loop.send(handlerId, 0, socket, controlFrame, 0, controlLength, MsgFlags.NONE);
    }

    private void onControlSent(int result) {
        if (result < 0) {
            sending = false;
            fail(-result);
            return;
        }
        counters.bytesSent += result;
        controlSent += result;
        if (controlSent < controlLength) {
            counters.shortSends++;
            loop.send(handlerId, 0, socket, controlFrame, controlSent, controlLength - controlSent, MsgFlags.NONE);
            return;
        }
        sending = false;
        controlSending = false;
        long token = controlToken;
        controlToken = -1;
        heldBytes -= controlLength;
        released = token + 1; // every frame before it was reported sent: the sender was idle when it came
        counters.framesSent++;
        counters.framesCopied++;
        listener.onSent(token);
        if (backPressured && !failed && !closing) {
            backPressured = false;
            listener.onWritable();
        }
        // What the callbacks above did may have started a batch already (a listener that offered and flushed).
        if (!sending && !failed && !closing && space != null) {
            sendNext(); // frames offered while it was in flight
        }
    }

    private long backPressure() {
        if (!backPressured) {
            backPressured = true;
            counters.backPressure++;
        }
        return BACK_PRESSURED;
    }

    /**
     * Queues the frame whose header is in the next slot and whose payload spans several elements of
     * {@code list}: its slices go to the FIFO of pieces.
     */
    private long queueGathered(int headerBytes, SgeList list, long position, int length) {
        int pieces = list.spans(position, length);
        if (pieces > maxPayloadPieces()) {
            throw new IllegalArgumentException("a payload of " + pieces + " pieces is more than one sendmsg of this"
                    + " sender gathers beside a header (" + maxPayloadPieces() + ")");
        }
        for (spans.over(list, position, length); spans.next(); ) {
            checkPayload(spans.segment(), spans.offset(), (int) spans.length());
        }
        if (pieceTail + pieces - pieceReleased > pieceMask + 1) {
            return spaceFull();
        }
        if (heldBytes > 0 && heldBytes + headerBytes + length > config.queueBytes()) {
            return backPressure();
        }
        SenderSpace s = space;
        for (spans.over(list, position, length); spans.next(); pieceTail++) {
            int p = (int) (pieceTail & pieceMask);
            s.pieceSegment[p] = spans.segment();
            s.pieceOffset[p] = spans.offset();
            s.pieceLength[p] = spans.length();
        }
        return queue(headerBytes, null, 0, length, pieces, -1);
    }

    private long queue(int headerBytes, MemorySegment source, long offset, int length, int pieces, long staged) {
        SenderSpace s = space;
        int i = (int) (tail & mask);
        s.stagedAt[i] = staged;
        s.headerLength[i] = headerBytes;
        s.payload[i] = source;
        s.payloadOffset[i] = offset;
        s.payloadLength[i] = length;
        s.pieceCount[i] = pieces;
        s.firstPiece[i] = pieceTail - pieces;
        heldBytes += headerBytes + (long) length;
        return tail++;
    }

    private long slot(long token) {
        return (token & mask) * MAX_HEADER;
    }

    // ---------------------------------------------------------------- sending

    private void sendBatch() {
        if (sending || unbatched == tail || nextBatch - firstBatch == mask + 1) {
            return;
        }
        SenderSpace s = space;
        GatherList batch = s.batch.clear();
        MemorySegment staging = s.staging;
        boolean stagingFree = stagingHeldBy < 0;
        long token = unbatched;
        // Frames staged when offered lead, side by side: the run starts at the first of them.
        long stagingUsed = Math.max(0, s.stagedAt[(int) (token & mask)]);
        long runStart = stagingUsed;
        long bytes = 0;
        boolean large = false;
        while (token < tail) {
            int i = (int) (token & mask);
            // A staging run, the header and the payload's pieces must fit.
            if (batch.count() + 2 + Math.max(1, s.pieceCount[i]) > batch.capacity()) {
                break;
            }
            int h = s.headerLength[i];
            int p = s.payloadLength[i];
            if (s.stagedAt[i] >= 0) {
                stagingUsed += h + p;
                counters.framesCopied++;
            } else if (stagingFree && h + p <= config.copyThreshold() && stagingUsed + h + p <= staging.byteSize()) {
                MemorySegment.copy(s.headers, slot(token), staging, stagingUsed, h);
                copyPayload(s, i, stagingUsed + h);
                stagingUsed += h + p;
                counters.framesCopied++;
            } else {
                if (stagingUsed > runStart) {
                    batch.add(staging, runStart, stagingUsed - runStart);
                    runStart = stagingUsed;
                }
                batch.add(s.headers, slot(token), h);
                gatherPayload(s, i);
                counters.framesGathered++;
                large |= config.zeroCopyThreshold() > 0 && p >= config.zeroCopyThreshold();
            }
            bytes += h + p;
            token++;
        }
        if (stagingUsed > runStart) {
            batch.add(staging, runStart, stagingUsed - runStart);
        }
        long number = nextBatch++;
        batchesSinceTick++;
        int b = (int) (number & mask);
        s.batchEnd[b] = token;
        s.batchBytes[b] = bytes;
        s.notificationsDue[b] = 0;
        s.fullySent[b] = false;
        unbatched = token;
        sentOfBatch = 0;
        sendingZeroCopy = large && chooseZeroCopy();
        if (sendingZeroCopy && stagingUsed > 0) {
            stagingHeldBy = number;
        }
        counters.batches++;
        submit(batch, number);
    }

    /** Copies the payload of frame slot {@code i} into the staging buffer at {@code at}. */
    private void copyPayload(SenderSpace s, int i, long at) {
        if (s.pieceCount[i] == 0) {
            MemorySegment.copy(s.payload[i], s.payloadOffset[i], s.staging, at, s.payloadLength[i]);
            return;
        }
        for (long k = s.firstPiece[i], end = k + s.pieceCount[i]; k < end; k++) {
            int q = (int) (k & pieceMask);
            MemorySegment.copy(s.pieceSegment[q], s.pieceOffset[q], s.staging, at, s.pieceLength[q]);
            at += s.pieceLength[q];
        }
    }

    /** Adds the payload of frame slot {@code i} to the batch by reference, a piece per slice. */
    private void gatherPayload(SenderSpace s, int i) {
        if (s.pieceCount[i] == 0) {
            if (s.payloadLength[i] > 0) {
                s.batch.add(s.payload[i], s.payloadOffset[i], s.payloadLength[i]);
            }
            return;
        }
        for (long k = s.firstPiece[i], end = k + s.pieceCount[i]; k < end; k++) {
            int q = (int) (k & pieceMask);
            s.batch.add(s.pieceSegment[q], s.pieceOffset[q], s.pieceLength[q]);
        }
    }

    /** The adaptation: zero copy while it pays, a probe now and then once it stopped paying. */
    private boolean chooseZeroCopy() {
        if (!zeroCopyAvailable) {
            return false;
        }
        if (zeroCopyMode) {
            return true;
        }
        if (++largeBatchesByCopy >= config.reprobeEvery()) {
            largeBatchesByCopy = 0;
            counters.probes++;
            return true;
        }
        return false;
    }

    private void submit(GatherList message, long number) {
        sending = true;
        counters.sendCalls++;
        if (sendingZeroCopy) {
            counters.zeroCopySends++;
            loop.sendMessageZeroCopy(handlerId, (int) number, socket, message, MsgFlags.NONE);
        } else {
            loop.sendMessage(handlerId, (int) number, socket, message, MsgFlags.NONE);
        }
    }

    // ---------------------------------------------------------------- completions

    private void onCompletion(int op, int tag, int result, int flags) {
        if (CqeFlags.isNotification(flags)) {
            onNotification(tag, result);
        } else if (op == Op.SEND && controlSending) {
            onControlSent(result);
        } else if (op == Op.SENDMSG || op == Op.SENDMSG_ZC) {
            onSendResult(tag, result, flags);
        }
        release();
        if (wantLarger && !sending && !failed && !closing) {
            sendNext(); // held back by the two above until the batches were released
        }
        giveBackIfIdle();
        freeWhenIdle();
    }

    private void onSendResult(int tag, int result, int flags) {
        sending = false;
        SenderSpace s = space;
        long number = batchNumber(tag);
        int b = (int) (number & mask);
        if (CqeFlags.hasMore(flags)) {
            s.notificationsDue[b]++;
        }
        if (result < 0) {
            fail(-result);
            return;
        }
        sentOfBatch += result;
        counters.bytesSent += result;
        if (sentOfBatch < s.batchBytes[b]) {
            counters.shortSends++;
            GatherList batch = s.batch;
            GatherList rest = s.rest.clear();
            long skip = sentOfBatch;
            for (int i = 0; i < batch.count(); i++) {
                long length = batch.length(i);
                if (skip >= length) {
                    skip -= length;
                    continue;
                }
                rest.add(batch.buffer(i), batch.offset(i) + skip, length - skip);
                skip = 0;
            }
            submit(rest, number);
            return;
        }
        s.fullySent[b] = true;
        if (!failed && !closing && !wantLarger) {
            sendBatch();
        }
    }

    private void onNotification(int tag, int result) {
        long number = batchNumber(tag);
        int due = --space.notificationsDue[(int) (number & mask)];
        if (stagingHeldBy == number && due == 0) {
            stagingHeldBy = -1;
        }
        boolean copied = (notificationFilter.applyAsInt(result) & CqeFlags.ZC_COPIED) != 0;
        if (copied) {
            counters.zeroCopyCopied++;
            if (zeroCopyMode && ++copiedInARow >= config.copiedToSwitch()) {
                zeroCopyMode = false;
                largeBatchesByCopy = 0;
                counters.switchesToCopy++;
            }
        } else {
            counters.zeroCopyNotCopied++;
            copiedInARow = 0;
            if (!zeroCopyMode) {
                zeroCopyMode = true;
                counters.switchesToZeroCopy++;
            }
        }
    }

    /** The batch a completion's 32-bit tag names: batches in the FIFO span far fewer than 2^31 numbers. */
    private long batchNumber(int tag) {
        return firstBatch + (tag - (int) firstBatch);
    }

    /** Reports the oldest batches whose bytes are sent and whose notifications are all in. */
    private void release() {
        long before = released;
        SenderSpace s = space;
        if (s == null) {
            return; // closed and freed by what the completion led to (a failure the listener closed the sender on)
        }
        while (firstBatch < nextBatch) {
            int b = (int) (firstBatch & mask);
            if (!s.fullySent[b] || s.notificationsDue[b] != 0) {
                break;
            }
            for (long t = released; t < s.batchEnd[b]; t++) {
                int i = (int) (t & mask);
                s.payload[i] = null; // keep no user segment reachable
                for (int k = 0; k < s.pieceCount[i]; k++) {
                    s.pieceSegment[(int) (pieceReleased++ & pieceMask)] = null;
                }
            }
            released = s.batchEnd[b];
            heldBytes -= s.batchBytes[b];
            firstBatch++;
        }
        if (released != before) {
            counters.framesSent += released - before;
            listener.onSent(released - 1);
            if (backPressured && !failed && !closing) {
                backPressured = false;
                listener.onWritable();
            }
            if (!sending && !failed && !closing && !wantLarger) {
                sendBatch(); // a batch may have waited for a free slot in the FIFO
            }
        }
    }

    private void fail(int errno) {
        if (failed) {
            return;
        }
        failed = true;
        counters.failures++;
        listener.onFailed(errno);
    }

    /**
     * Gives the space back once nothing in it is needed any more (every frame reported sent, so no notification is
     * due either, no send in flight, the staging buffer no zero-copy batch's), unless the sender is busy: one that
     * sent more than one batch since the owner's last tick keeps it until a tick finds it quiet, so a connection in
     * a request-reply exchange, idle between its messages for microseconds, does not make and free its space for
     * each of them (at the defaults 352 KiB of native memory, zeroed when made).
     */
    private void giveBackIfIdle() {
        if (batchesSinceTick <= 1 && isIdle()) {
            giveBack();
        }
    }

    private boolean isIdle() {
        return space != null && released == tail && !sending && stagingHeldBy < 0;
    }

    /**
     * The owner's periodic tick (a queue pair's heartbeat period): a sender that sent at most one batch since the
     * last one (a heartbeat, or nothing) and is idle gives its space back now. Owner thread of the loop.
     */
    public void onTick() {
        boolean quiet = batchesSinceTick <= 1;
        batchesSinceTick = 0;
        if (quiet && !freed && isIdle()) {
            giveBack();
        }
    }

    private void giveBack() {
        SenderSpace s = space;
        space = null;
        if (released != tail) {
            s.forgetPayloads();
        }
        spaces.giveBack(s);
    }

    /** Once closed and nothing the kernel may read is left, leaves the loop and gives the space back. */
    private void freeWhenIdle() {
        if (freed || !closing || sending || notificationsDue()) {
            return;
        }
        freed = true;
        loop.unregisterHandler(handlerId);
        if (space != null) {
            giveBack();
        }
        if (ownsSpaces) {
            spaces.close();
        }
    }

    /** {@return whether the kernel may still read the memory of a batch sent zero-copy} */
    private boolean notificationsDue() {
        SenderSpace s = space;
        for (long n = firstBatch; s != null && n < nextBatch; n++) {
            if (s.notificationsDue[(int) (n & mask)] != 0) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- checks and seams

    private static void checkRange(MemorySegment segment, long offset, long length, String what) {
        if (segment == null) {
            throw new IllegalArgumentException(what + " segment is null");
        }
        if (offset < 0 || length < 0 || offset > segment.byteSize() - length) {
            throw new IllegalArgumentException(what + " range [" + offset + ", " + offset + " + " + length
                    + ") is outside its segment of " + segment.byteSize() + " bytes");
        }
    }

    private static void checkPayload(MemorySegment payload, long offset, int length) {
        checkRange(payload, offset, length, "payload");
        if (!payload.isNative() || !payload.scope().isAlive()) {
            throw new IllegalArgumentException("payload must be alive native (off-heap) memory");
        }
    }

    /** Test seam: what the adaptation reads of each notification (loopback always reports copies). */
    void notificationFilter(IntUnaryOperator filter) {
        this.notificationFilter = filter;
    }

    @Override
    public String toString() {
        return "FrameSender[socket=" + socket + " held=" + held() + " unbatched=" + (tail - unbatched)
                + (space == null ? " idle" : "")
                + (sending ? " sending" + (sendingZeroCopy ? "-zc" : "") : "") + " zeroCopy=" + zeroCopyMode
                + (failed ? " failed" : "") + (closing ? " closing" : "") + " " + counters + "]";
    }
}
