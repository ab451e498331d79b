package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * Send side: turns one work request (SEND, SEND with immediate, RDMA WRITE, WRITE with immediate, READ
 * request, READ response) into frames of at most the segment size, without copying payload.
 *
 * <p>A SEND, SEND with immediate or READ RESPONSE is always exactly one message (one MSN, up to
 * {@link FramingConfig#MAX_MESSAGE_SIZE} bytes): the receiver completes a message as one unit, so splitting
 * one would complete a receive with part of the data. Only an RDMA WRITE (with or without immediate) and a
 * READ request are split into messages of at most {@link FramingConfig#messageChunk()} bytes (one MSN
 * each), since their pieces name their own destinations. Each message is cut into segments: every frame but a message's
 * last carries exactly {@code segmentSize} bytes at a segment-aligned offset, the FIRST/MIDDLE/LAST/ONLY
 * opcode and {@code more_segments} say where it sits, immediate data rides on the last frame of the last
 * message only, a tagged frame's extension names <em>its own</em> destination
 * ({@code region offset of the operation + offset of this frame}), and every frame of a message that
 * consumes a posted receive (a SEND, the last frame of a WRITE with immediate) names that receive by its RSN
 * ({@link UntaggedExtension}), so the receiver can place any frame first. Frames are addressed by index
 * ({@link #frameCount()}), so a caller may hand them to several subflows in any interleaving and regenerate
 * any one for a retransmission; {@link #writeFrame} writes
 * the header and extension and describes the payload as a slice of the source
 * ({@link #payloadOffset()}, {@link #payloadLength()}) that the caller gathers behind it. With the ICRC
 * negotiated, {@code writeFrame} computes it over header, extension and that slice; the caller then sets
 * {@code subflow}, the timestamps and {@code timestamp_present}, which the ICRC leaves out.
 *
 * <p>Not thread-safe: one instance per sending thread, reused for every work request without allocation.
 */
public final class Segmenter {

    private final int segmentSize;
    private final int chunk;
    private final long framesPerChunk;
    private final boolean icrcEnabled;
    private final Icrc icrc = new Icrc();
    private final FrameHeader header = new FrameHeader();
    private final TaggedExtension tagged = new TaggedExtension();
    private final ReadRequestExtension readRequest = new ReadRequestExtension();

    // The work request being segmented.
    private int kind;
    private int firstMsn;
    private MemorySegment source;
    private long sourceOffset;
    private long length;
    private int rkey;
    private long regionOffset;
    private int sinkRkey;
    private long sinkOffset;
    private int immediate;
    private int rsn;
    private long frameCount;
    private int messageCount;
    // Message size and frames per message of the current work request: chunk-sized for WRITE and READ
    // requests, the whole operation (one message) for SEND and READ RESPONSE.
    private long messageBytes;
    private long framesPerMessage;
    private long cursor;

    // The frame last written.
    private int frameMsn;
    private long payloadOffset;
    private int payloadLength;

    public Segmenter(FramingConfig config) {
        if (config == null) {
            throw new IllegalArgumentException("config is null");
        }
        this.segmentSize = config.segmentSize();
        this.chunk = config.messageChunk();
        this.framesPerChunk = chunk / segmentSize;
        this.icrcEnabled = config.icrcEnabled();
    }

    /**
     * Starts a SEND of {@code length} bytes of {@code source} from {@code offset}, as message {@code msn}.
     *
     * @param rsn the receive sequence number every frame carries: which of the peer's posted receives the
     *            SEND consumes, the count of receive-consuming messages sent before it mod 2^32 (read
     *            {@link FlowControl#nextReceiveSequence()} before claiming the message)
     */
    public Segmenter beginSend(int msn, int rsn, MemorySegment source, long offset, int length) {
        checkSendLength(length);
        return begin(Opcode.KIND_SEND, msn, source, offset, length, 0, 0, 0, rsn);
    }

    /** Starts a SEND whose last frame carries {@code immediate}; {@code rsn} as for {@link #beginSend}. */
    public Segmenter beginSendWithImmediate(int msn, int rsn, MemorySegment source, long offset, int length,
                                            int immediate) {
        checkSendLength(length);
        return begin(Opcode.KIND_SEND_WITH_IMMEDIATE, msn, source, offset, length, 0, 0, immediate, rsn);
    }

    /**
     * Starts an RDMA WRITE of {@code length} bytes to the peer's region {@code rkey} from
     * {@code regionOffset}; operations beyond one message become several messages from MSN {@code firstMsn}.
     */
    public Segmenter beginWrite(int firstMsn, MemorySegment source, long offset, long length, int rkey, long regionOffset) {
        checkRegionOffset(regionOffset, length, "regionOffset");
        return begin(Opcode.KIND_WRITE, firstMsn, source, offset, length, rkey, regionOffset, 0, 0);
    }

    /**
     * Like {@link #beginWrite}, with {@code immediate} on the last frame of the last message, the one
     * message that consumes a posted receive: that frame carries {@code rsn} (as for {@link #beginSend},
     * counting only that last message).
     */
    public Segmenter beginWriteWithImmediate(int firstMsn, int rsn, MemorySegment source, long offset, long length,
                                             int rkey, long regionOffset, int immediate) {
        checkRegionOffset(regionOffset, length, "regionOffset");
        return begin(Opcode.KIND_WRITE_WITH_IMMEDIATE, firstMsn, source, offset, length, rkey, regionOffset,
                immediate, rsn);
    }

    /**
     * Starts an RDMA READ of {@code length} bytes of the peer's region {@code rkey} from
     * {@code regionOffset} into the local sink {@code sinkRkey}/{@code sinkOffset}: one READ_REQUEST frame
     * (and MSN) per message-sized piece, each answered by one READ RESPONSE message. {@code sinkRkey} is the
     * sink region's remote key (never its local key: it goes on the wire), the one given to
     * {@link MessageAssembler#expectReadResponse} for each piece.
     */
    public Segmenter beginReadRequest(int firstMsn, int rkey, long regionOffset, long length, int sinkRkey, long sinkOffset) {
        checkRegionOffset(regionOffset, length, "regionOffset");
        checkRegionOffset(sinkOffset, length, "sinkOffset");
        checkMsn(firstMsn);
        this.kind = Opcode.KIND_READ_REQUEST;
        this.firstMsn = firstMsn;
        this.source = null;
        this.sourceOffset = 0;
        this.length = length;
        this.rkey = rkey;
        this.regionOffset = regionOffset;
        this.sinkRkey = sinkRkey;
        this.sinkOffset = sinkOffset;
        this.immediate = 0;
        this.rsn = 0;
        this.messageBytes = chunk;
        this.framesPerMessage = 1;
        this.messageCount = messages(length);
        this.frameCount = messageCount;
        this.cursor = 0;
        return this;
    }

    /**
     * Starts the READ RESPONSE to one read request: {@code length} (at most one message) bytes of
     * {@code source} placed at the requester's {@code sinkRkey}/{@code sinkOffset}.
     */
    public Segmenter beginReadResponse(int msn, MemorySegment source, long offset, int length, int sinkRkey, long sinkOffset) {
        checkSendLength(length);
        checkRegionOffset(sinkOffset, length, "sinkOffset");
        return begin(Opcode.KIND_READ_RESPONSE, msn, source, offset, length, sinkRkey, sinkOffset, 0, 0);
    }

    private Segmenter begin(int kind, int msn, MemorySegment source, long offset, long length, int key,
                            long destination, int immediate, int rsn) {
        checkMsn(msn);
        if (source == null) {
            throw new IllegalArgumentException("source is null");
        }
        if (offset < 0 || length < 0 || offset > source.byteSize() || length > source.byteSize() - offset) {
            throw new IllegalArgumentException("source range " + offset + "+" + length + " outside the "
                    + source.byteSize() + "-byte source");
        }
        this.kind = kind;
        this.firstMsn = msn;
        this.source = source;
        this.sourceOffset = offset;
        this.length = length;
        this.rkey = key;
        this.regionOffset = destination;
        this.immediate = immediate;
        this.rsn = rsn;
        if (kind == Opcode.KIND_WRITE || kind == Opcode.KIND_WRITE_WITH_IMMEDIATE) {
            this.messageBytes = chunk;
            this.framesPerMessage = framesPerChunk;
            this.messageCount = messages(length);
        } else {
            // The callers checked length <= MAX_MESSAGE_SIZE: one message, as many segments as it takes.
            this.messageBytes = FramingConfig.MAX_MESSAGE_SIZE;
            this.framesPerMessage = FramingConfig.maxSegmentsPerMessage(segmentSize);
            this.messageCount = 1;
        }
        long fullMessages = messageCount - 1;
        long rest = length - fullMessages * messageBytes;
        this.frameCount = fullMessages * framesPerMessage + Math.max(1, (rest + segmentSize - 1) / segmentSize);
        this.cursor = 0;
        return this;
    }

    private int messages(long length) {
        long n = Math.max(1, (length + chunk - 1) / chunk);
        if (n > FramingConfig.MAX_MESSAGE_WINDOW) {
            throw new IllegalArgumentException("operation of " + length + " bytes needs " + n
                    + " messages, more than the MSN space allows in flight");
        }
        return (int) n;
    }

    /** Frames of the current work request. */
    public long frameCount() {
        return frameCount;
    }

    /** MSNs the current work request uses, from its first MSN on. */
    public int messageCount() {
        return messageCount;
    }

    /** Whether {@link #next} has frames left. */
    public boolean hasNext() {
        return cursor < frameCount;
    }

    /** Writes the next frame in order; see {@link #writeFrame}. */
    public int next(MemorySegment out, long outOffset) {
        if (!hasNext()) {
            throw new IllegalStateException("no frames left");
        }
        return writeFrame(cursor++, out, outOffset);
    }

    /**
     * Writes the header and extension of frame {@code index} at {@code outOffset} of {@code out}
     * ({@code subflow} and timestamps zero) and returns how many bytes that took ({@code 32 + ext_length});
     * the payload is then {@link #payloadLength()} bytes of the source at {@link #payloadOffset()}.
     */
    public int writeFrame(long index, MemorySegment out, long outOffset) {
        if (kind == 0) {
            throw new IllegalStateException("no work request begun");
        }
        if (index < 0 || index >= frameCount) {
            throw new IllegalArgumentException("frame " + index + " outside 0.." + (frameCount - 1));
        }
        if (out == null) {
            throw new IllegalArgumentException("out is null");
        }
        return kind == Opcode.KIND_READ_REQUEST ? writeReadRequest((int) index, out, outOffset)
                : writeSegment(index, out, outOffset);
    }

    private int writeSegment(long index, MemorySegment out, long outOffset) {
        int message = (int) (index / framesPerMessage);
        int segment = (int) (index - message * framesPerMessage);
        long messageStart = message * messageBytes;
        int messageLength = (int) Math.min(messageBytes, length - messageStart);
        int offsetInMessage = segment * segmentSize;
        int bytes = Math.min(segmentSize, messageLength - offsetInMessage);
        boolean lastMessage = message == messageCount - 1;
        boolean first = segment == 0;
        boolean last = offsetInMessage + bytes == messageLength;
        int messageKind = kind == Opcode.KIND_WRITE_WITH_IMMEDIATE && !lastMessage ? Opcode.KIND_WRITE : kind;
        int opcode = Opcode.forSegment(messageKind, first, last);
        int ext = Opcode.extensionLength(opcode);
        if (outOffset < 0 || outOffset > out.byteSize() - FrameHeader.LENGTH - ext) {
            throw new IllegalArgumentException("header of " + (FrameHeader.LENGTH + ext) + " bytes does not fit at "
                    + outOffset + " of a " + out.byteSize() + "-byte segment");
        }
        frameMsn = (firstMsn + message) & 0xFFFF;
        payloadOffset = sourceOffset + messageStart + offsetInMessage;
        payloadLength = bytes;
        header.wrap(out, outOffset).clear()
                .version(FrameHeader.VERSION)
                .moreSegments(!last)
                .opcode(opcode)
                .msn(frameMsn)
                .messageOffsetAndSegment(offsetInMessage, segment & FrameHeader.SEGMENT_MASK)
                .length(bytes)
                .extLength(ext);
        if (Opcode.hasImmediate(opcode)) {
            header.immData(immediate);
        }
        long extOffset = outOffset + FrameHeader.LENGTH;
        if (Opcode.isTagged(opcode)) {
            tagged.wrap(out, extOffset)
                    .rkey(rkey)
                    .regionOffset(regionOffset + messageStart + offsetInMessage);
        }
        int rsnAt = Opcode.rsnOffset(opcode);
        if (rsnAt >= 0) {
            out.set(WireLayouts.U32, extOffset + rsnAt, rsn);
        }
        if (icrcEnabled) {
            header.icrc(icrc.compute(out, outOffset, source, payloadOffset));
        }
        return FrameHeader.LENGTH + ext;
    }

    private int writeReadRequest(int message, MemorySegment out, long outOffset) {
        int ext = ReadRequestExtension.LENGTH;
        if (outOffset < 0 || outOffset > out.byteSize() - FrameHeader.LENGTH - ext) {
            throw new IllegalArgumentException("read request frame does not fit at " + outOffset);
        }
        long start = (long) message * chunk;
        frameMsn = (firstMsn + message) & 0xFFFF;
        payloadOffset = 0;
        payloadLength = 0;
        header.wrap(out, outOffset).clear()
                .version(FrameHeader.VERSION)
                .opcode(Opcode.RDMA_READ_REQUEST)
                .msn(frameMsn)
                .extLength(ext);
        readRequest.wrap(out, outOffset + FrameHeader.LENGTH)
                .rkey(rkey)
                .regionOffset(regionOffset + start)
                .readLength(Math.min(chunk, length - start))
                .sinkRkey(sinkRkey)
                .sinkOffset(sinkOffset + start);
        if (icrcEnabled) {
            header.icrc(icrc.compute(out, outOffset, out, outOffset + FrameHeader.LENGTH + ext));
        }
        return FrameHeader.LENGTH + ext;
    }

    /** MSN of the frame last written. */
    public int frameMsn() {
        return frameMsn;
    }

    /** Offset in the source segment of the payload of the frame last written. */
    public long payloadOffset() {
        return payloadOffset;
    }

    /** Payload bytes of the frame last written (0 for a read request). */
    public int payloadLength() {
        return payloadLength;
    }

    /** The source segment of the current work request ({@code null} for a read request). */
    public MemorySegment source() {
        return source;
    }

    private static void checkSendLength(int length) {
        if (length < 0 || length > FramingConfig.MAX_MESSAGE_SIZE) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + FramingConfig.MAX_MESSAGE_SIZE
                    + ": a SEND or READ response is one message");
        }
    }

    private static void checkRegionOffset(long offset, long length, String what) {
        if (offset < 0 || length < 0 || offset > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException(what + " " + offset + " with length " + length
                    + " is negative or overflows");
        }
    }

    private static void checkMsn(int msn) {
        if (msn < 0 || msn > 0xFFFF) {
            throw new IllegalArgumentException("msn " + msn + " outside 0..65535");
        }
    }
}
