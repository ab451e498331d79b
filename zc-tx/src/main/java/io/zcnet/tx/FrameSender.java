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
 * Headers are copied into (or written straight into, {@link #offerFrame}) slots the sender owns, or with
 * their payload into the staging buffer; other payloads are referenced and must stay alive and unchanged
 * until their token is reported sent. A frame of one
 * payload slice keeps it beside its header; the slices of a frame of several wait in a FIFO of pieces,
 * released with their frames, which holds twice as many pieces as the sender holds frames.
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
    private final Arena arena = Arena.ofShared();
    private final MemorySegment headers;
    private final MemorySegment staging;
    private final GatherList batch;
    private final GatherList rest;
    private final boolean zeroCopyAvailable;

    // Frames by token & mask. A frame's payload is one slice (payload, payloadOffset) when pieceCount is 0,
    // else pieceCount slices in the piece FIFO from firstPiece; payloadLength is the total either way.
    private final int mask;
    private final int[] headerLength;
    private final MemorySegment[] payload;
    private final long[] payloadOffset;
    private final int[] payloadLength;
    private final int[] pieceCount;
    private final long[] firstPiece;
    /** Where the frame's header and payload were copied into staging when offered, or -1 (copied when batched). */
    private final long[] stagedAt;

    // The slices of payloads gathered from several, by piece number & pieceMask, in frame order.
    private final int pieceMask;
    private final MemorySegment[] pieceSegment;
    private final long[] pieceOffset;
    private final long[] pieceLength;
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

    // Batches sent or being sent, oldest first, until their frames are released: a FIFO by batch number.
    private final long[] batchEnd;
    private final long[] batchBytes;
    private final int[] notificationsDue;
    private final boolean[] fullySent;
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
     * A sender for {@code socket}, a connected socket of {@code loop}. Owner thread of the loop.
     *
     * @param loop the event loop the connection belongs to
     * @param socket a connected socket of {@code loop}
     * @param config queue bounds, copy and zero-copy thresholds
     * @param listener told when frames have left, when there is room again, and when the connection fails
     * @throws IllegalArgumentException if an argument is missing or {@code socket} is negative
     */
    public FrameSender(EventLoop loop, int socket, SenderConfig config, SendListener listener) {
        if (loop == null || config == null || listener == null) {
            throw new IllegalArgumentException("loop, config and listener are required");
        }
        if (socket < 0) {
            throw new IllegalArgumentException("socket handle must be >= 0, got " + socket);
        }
        this.loop = loop;
        this.socket = socket;
        this.config = config;
        this.listener = listener;
        int frames = config.queueFrames();
        this.mask = frames - 1;
        this.headerLength = new int[frames];
        this.payload = new MemorySegment[frames];
        this.payloadOffset = new long[frames];
        this.payloadLength = new int[frames];
        this.pieceCount = new int[frames];
        this.firstPiece = new long[frames];
        this.stagedAt = new long[frames];
        this.pieceMask = 2 * frames - 1;
        this.pieceSegment = new MemorySegment[2 * frames];
        this.pieceOffset = new long[2 * frames];
        this.pieceLength = new long[2 * frames];
        this.batchEnd = new long[frames];
        this.batchBytes = new long[frames];
        this.notificationsDue = new int[frames];
        this.fullySent = new boolean[frames];
        this.headers = arena.allocate((long) frames * MAX_HEADER, 64);
        this.staging = arena.allocate(config.stagingBytes(), 64);
        // A batch takes a header and a slice a frame (more for a gathered payload) plus one staging run;
        // UIO_MAXIOV bounds a sendmsg.
        int pieces = Math.min(1024, 2 * frames + 1);
        this.batch = GatherList.allocate(arena, pieces);
        this.rest = GatherList.allocate(arena, pieces);
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
        long refused = admit(headerLength + (long) payloadLength);
        if (refused != 0) {
            return refused;
        }
        long at = stagingSpot(headerLength + payloadLength);
        if (at >= 0) {
            MemorySegment.copy(header, headerOffset, staging, at, headerLength);
            MemorySegment.copy(payload, payloadOffset, staging, at + headerLength, payloadLength);
            return queue(headerLength, null, 0, payloadLength, 0, at);
        }
        MemorySegment.copy(header, headerOffset, headers, slot(tail), headerLength);
        return queue(headerLength, payload, payloadOffset, payloadLength, 0, -1);
    }

    /**
     * Where in staging a frame of {@code bytes} is copied now rather than when its batch is made, or -1: it is
     * small, no send or zero-copy notification holds the staging buffer, and every frame before it waiting for
     * a batch was staged too (staged frames are always the oldest of those, side by side, so they stay one run,
     * in order, and it goes right after the last). Copied now, its header needs no slot and its batch no second
     * pass; a frame offered while a send is in flight waits for the batch as before.
     */
    private long stagingSpot(int bytes) {
        if (sending || stagingHeldBy >= 0 || bytes > config.copyThreshold()) {
            return -1;
        }
        long at = 0; // nothing waiting and nothing in flight: the whole buffer is free
        if (unbatched != tail) {
            int last = (int) ((tail - 1) & mask);
            if (stagedAt[last] < 0) {
                return -1;
            }
            at = stagedAt[last] + headerLength[last] + payloadLength[last];
        }
        return at + bytes <= staging.byteSize() ? at : -1;
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
                    : offer(header, headerOffset, headerLength, headers, 0, 0);
        }
        checkRange(header, headerOffset, headerLength, "header");
        if (headerLength < 1 || headerLength > MAX_HEADER) {
            throw new IllegalArgumentException("header length must be in [1, " + MAX_HEADER + "], got " + headerLength);
        }
        long refused = admit(headerLength + (long) payloadLength);
        if (refused != 0) {
            return refused;
        }
        MemorySegment.copy(header, headerOffset, headers, slot(tail), headerLength);
        return queueGathered(headerLength, payload, position, payloadLength);
    }

    /**
     * Where a whole frame of {@code bytes} (header and payload) may be written in place, in
     * {@link #stagingBuffer()}, to be queued by {@link #queueStaged} before anything else is offered: the offset, or
     * -1 when it must be offered instead (no room in the buffer or the queue, a send holds the buffer, the frame
     * is above the copy threshold, or the sender is closed; {@code offer} then tells which). Spares a small frame
     * the copy of its header from wherever it was written.
     *
     * @param bytes the frame's header, extension and payload bytes
     * @return the offset in the staging buffer, or -1
     */
    public long stagingRoom(int bytes) {
        if (bytes < 1 || admit(bytes) != 0) {
            return -1;
        }
        return stagingSpot(bytes);
    }

    /** {@return the memory {@link #stagingRoom} offsets point into} */
    public MemorySegment stagingBuffer() {
        return staging;
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
                || at != stagingSpot(headerBytes + payloadBytes)) {
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
        return Math.min(batch.capacity() - 2, pieceSegment.length);
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
        int written = segmenter.writeFrame(index, headers, slot(tail));
        int length = segmenter.payloadLength();
        if (!segmenter.isPayloadContiguous()) {
            return queueGathered(written, segmenter.sources(), segmenter.payloadPosition(), length);
        }
        MemorySegment source = length == 0 ? headers : segmenter.source();
        long offset = length == 0 ? 0 : segmenter.payloadOffset();
        checkPayload(source, offset, length);
        if (heldBytes > 0 && heldBytes + written + length > config.queueBytes()) {
            return backPressure();
        }
        return queue(written, source, offset, length, 0, -1);
    }

    /** Sends what is queued, unless a send is in flight (then it follows that one). */
    public void flush() {
        if (!sending && !failed && !freed) {
            sendBatch();
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
     * Stops taking frames. Memory the kernel may still read (a send in flight, notifications due) is
     * freed when the last completion arrives; the socket stays the caller's to close.
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
        if (tail - released == headerLength.length || (heldBytes > 0 && heldBytes + bytes > config.queueBytes())) {
            return backPressure();
        }
        return 0;
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
        if (pieceTail + pieces - pieceReleased > pieceSegment.length
                || heldBytes > 0 && heldBytes + headerBytes + length > config.queueBytes()) {
            return backPressure();
        }
        for (spans.over(list, position, length); spans.next(); pieceTail++) {
            int p = (int) (pieceTail & pieceMask);
            pieceSegment[p] = spans.segment();
            pieceOffset[p] = spans.offset();
            pieceLength[p] = spans.length();
        }
        return queue(headerBytes, null, 0, length, pieces, -1);
    }

    private long queue(int headerBytes, MemorySegment source, long offset, int length, int pieces, long staged) {
        int i = (int) (tail & mask);
        stagedAt[i] = staged;
        headerLength[i] = headerBytes;
        payload[i] = source;
        payloadOffset[i] = offset;
        payloadLength[i] = length;
        pieceCount[i] = pieces;
        firstPiece[i] = pieceTail - pieces;
        heldBytes += headerBytes + (long) length;
        return tail++;
    }

    private long slot(long token) {
        return (token & mask) * MAX_HEADER;
    }

    // ---------------------------------------------------------------- sending

    private void sendBatch() {
        if (unbatched == tail || nextBatch - firstBatch == batchEnd.length) {
            return;
        }
        batch.clear();
        boolean stagingFree = stagingHeldBy < 0;
        long token = unbatched;
        // Frames staged when offered lead, side by side: the run starts at the first of them.
        long stagingUsed = Math.max(0, stagedAt[(int) (token & mask)]);
        long runStart = stagingUsed;
        long bytes = 0;
        boolean large = false;
        while (token < tail) {
            int i = (int) (token & mask);
            // A staging run, the header and the payload's pieces must fit.
            if (batch.count() + 2 + Math.max(1, pieceCount[i]) > batch.capacity()) {
                break;
            }
            int h = headerLength[i];
            int p = payloadLength[i];
            if (stagedAt[i] >= 0) {
                stagingUsed += h + p;
                counters.framesCopied++;
            } else if (stagingFree && h + p <= config.copyThreshold() && stagingUsed + h + p <= staging.byteSize()) {
                MemorySegment.copy(headers, slot(token), staging, stagingUsed, h);
                copyPayload(i, stagingUsed + h);
                stagingUsed += h + p;
                counters.framesCopied++;
            } else {
                if (stagingUsed > runStart) {
                    batch.add(staging, runStart, stagingUsed - runStart);
                    runStart = stagingUsed;
                }
                batch.add(headers, slot(token), h);
                gatherPayload(i);
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
        int b = (int) (number & mask);
        batchEnd[b] = token;
        batchBytes[b] = bytes;
        notificationsDue[b] = 0;
        fullySent[b] = false;
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
    private void copyPayload(int i, long at) {
        if (pieceCount[i] == 0) {
            MemorySegment.copy(payload[i], payloadOffset[i], staging, at, payloadLength[i]);
            return;
        }
        for (long k = firstPiece[i], end = k + pieceCount[i]; k < end; k++) {
            int q = (int) (k & pieceMask);
            MemorySegment.copy(pieceSegment[q], pieceOffset[q], staging, at, pieceLength[q]);
            at += pieceLength[q];
        }
    }

    /** Adds the payload of frame slot {@code i} to the batch by reference, a piece per slice. */
    private void gatherPayload(int i) {
        if (pieceCount[i] == 0) {
            if (payloadLength[i] > 0) {
                batch.add(payload[i], payloadOffset[i], payloadLength[i]);
            }
            return;
        }
        for (long k = firstPiece[i], end = k + pieceCount[i]; k < end; k++) {
            int q = (int) (k & pieceMask);
            batch.add(pieceSegment[q], pieceOffset[q], pieceLength[q]);
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
        } else if (op == Op.SENDMSG || op == Op.SENDMSG_ZC) {
            onSendResult(tag, result, flags);
        }
        release();
        freeWhenIdle();
    }

    private void onSendResult(int tag, int result, int flags) {
        sending = false;
        long number = batchNumber(tag);
        int b = (int) (number & mask);
        if (CqeFlags.hasMore(flags)) {
            notificationsDue[b]++;
        }
        if (result < 0) {
            fail(-result);
            return;
        }
        sentOfBatch += result;
        counters.bytesSent += result;
        if (sentOfBatch < batchBytes[b]) {
            counters.shortSends++;
            rest.clear();
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
        fullySent[b] = true;
        if (!failed && !closing) {
            sendBatch();
        }
    }

    private void onNotification(int tag, int result) {
        long number = batchNumber(tag);
        notificationsDue[(int) (number & mask)]--;
        if (stagingHeldBy == number && notificationsDue[(int) (number & mask)] == 0) {
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
        while (firstBatch < nextBatch) {
            int b = (int) (firstBatch & mask);
            if (!fullySent[b] || notificationsDue[b] != 0) {
                break;
            }
            for (long t = released; t < batchEnd[b]; t++) {
                int i = (int) (t & mask);
                payload[i] = null; // keep no user segment reachable
                for (int k = 0; k < pieceCount[i]; k++) {
                    pieceSegment[(int) (pieceReleased++ & pieceMask)] = null;
                }
            }
            released = batchEnd[b];
            heldBytes -= batchBytes[b];
            firstBatch++;
        }
        if (released != before) {
            counters.framesSent += released - before;
            listener.onSent(released - 1);
            if (backPressured && !failed && !closing) {
                backPressured = false;
                listener.onWritable();
            }
            if (!sending && !failed && !closing) {
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

    private void freeWhenIdle() {
        if (freed || !(closing || failed) || sending) {
            return;
        }
        for (long n = firstBatch; n < nextBatch; n++) {
            if (notificationsDue[(int) (n & mask)] != 0) {
                return; // the kernel may still read this batch's memory
            }
        }
        if (!closing) {
            return; // failed: the owner still has to close us
        }
        freed = true;
        loop.unregisterHandler(handlerId);
        arena.close();
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
                + (sending ? " sending" + (sendingZeroCopy ? "-zc" : "") : "") + " zeroCopy=" + zeroCopyMode
                + (failed ? " failed" : "") + (closing ? " closing" : "") + " " + counters + "]";
    }
}
