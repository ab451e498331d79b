package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * Send side: turns one work request (SEND, SEND with immediate, RDMA WRITE, WRITE with immediate, READ
 * request, READ response) into frames of at most the segment size, without copying payload.
 *
 * <p>A SEND, SEND with immediate or READ RESPONSE is always exactly one message (one MSN, up to
 * {@link FramingConfig#MAX_MESSAGE_SIZE} bytes): the receiver completes a message as one unit, so splitting
 * one would complete a receive with part of the data. Only an RDMA WRITE (with or without immediate) longer
 * than one message and a READ request are split into messages of at most {@link FramingConfig#messageChunk()}
 * bytes (one MSN each), since their pieces name their own destinations. Each message is cut into segments: every frame but a message's
 * last carries exactly {@code segmentSize} bytes at a segment-aligned offset, the FIRST/MIDDLE/LAST/ONLY
 * opcode and {@code more_segments} say where it sits, immediate data rides on the last frame of the last
 * message only, a tagged frame's extension names <em>its own</em> destination
 * ({@code region offset of the operation + offset of this frame}), and every frame of a message that
 * consumes a posted receive (a SEND, the last frame of a WRITE with immediate) names that receive by its RSN
 * ({@link UntaggedExtension}), so the receiver can place any frame first. Frames are addressed by index
 * ({@link #frameCount()}), so a caller may hand them to several subflows in any interleaving and regenerate
 * any one for a retransmission; {@link #writeFrame} writes
 * the header and extension and describes the payload as a range of the source ({@link #payloadPosition()},
 * {@link #payloadLength()}) that the caller gathers behind it. With the ICRC negotiated, {@code writeFrame}
 * computes it over header, extension and that range; the caller then sets {@code subflow}, the timestamps
 * and {@code timestamp_present}, which the ICRC leaves out.
 *
 * <p><b>Scatter/gather.</b> The source of a SEND or WRITE is an {@link SgeList}, the concatenation of its
 * pieces (the elements of ibv_post_send(3)), or one segment (a list of one). Frames stay segment-aligned in
 * the message whatever the pieces, so one frame's payload may span several of them
 * ({@link #isPayloadContiguous()} says whether it does); the caller gathers those spans without a copy.
 * The sink of a READ is a list too: each piece is read by READ requests of its own over consecutive ranges
 * of the remote region, so no response ever straddles two sinks ({@link #readRequestMessages}).
 *
 * <p>Not thread-safe: one instance per sending thread, reused for every work request without allocation.
 */
public final class Segmenter {

    private final int segmentSize;
    private final int chunk;
    private final long framesPerChunk;
    private final boolean icrcEnabled;
    private final Icrc icrc;
    private final FrameHeader header = new FrameHeader();
    private final TaggedExtension tagged = new TaggedExtension();
    private final ReadRequestExtension readRequest = new ReadRequestExtension();

    /** The source or sink of the forms that take one segment or one sink. */
    private final SgeList single = new SgeList(1);

    // The work request being segmented.
    private int kind;
    private int firstMsn;
    private SgeList source;
    private SgeList sinks;
    private long length;
    private int rkey;
    private long regionOffset;
    private int immediate;
    private int rsn;
    private boolean ackRequest;
    private long frameCount;
    private int messageCount;
    // Message size and frames per message of the current work request: chunk-sized for WRITE and READ
    // requests, the whole operation (one message) for SEND and READ RESPONSE.
    private long messageBytes;
    private long framesPerMessage;
    private long cursor;

    // The frame last written.
    private int frameMsn;
    private long payloadPosition;
    private int payloadLength;
    private MemorySegment payloadSegment;
    private long payloadOffset;
    private boolean payloadContiguous;

    // The READ request message last located: its sink piece, where in it, and how many bytes.
    private int readPiece;
    private long readWithin;
    private int readBytes;

    /**
     * A segmenter for the negotiated parameters; reused for every work request, it allocates nothing.
     *
     * @param config the negotiated segment size and ICRC
     */
    public Segmenter(FramingConfig config) {
        this(config, new Icrc());
    }

    /**
     * A segmenter that computes ICRCs with {@code icrc}, which the thread's other framers may share.
     *
     * @param config the negotiated segment size and ICRC
     * @param icrc   the calling thread's calculator
     */
    public Segmenter(FramingConfig config, Icrc icrc) {
        if (config == null || icrc == null) {
            throw new IllegalArgumentException("config and icrc are required");
        }
        this.icrc = icrc;
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
     * @param msn the message's MSN
     * @param source the memory holding the bytes
     * @param offset where the bytes start
     * @param length how many bytes, at most one message
     * @return this segmenter
     */
    public Segmenter beginSend(int msn, int rsn, MemorySegment source, long offset, int length) {
        checkSendLength(length);
        return beginSend(msn, rsn, one(source, offset, length));
    }

    /**
     * Starts a SEND of the bytes {@code source} lays over its pieces; {@code rsn} as above.
     *
     * @param msn the message's MSN
     * @param rsn as for {@link #beginSend(int, int, MemorySegment, long, int)}
     * @param source the bytes, over its pieces
     * @return this segmenter
     */
    public Segmenter beginSend(int msn, int rsn, SgeList source) {
        return begin(Opcode.KIND_SEND, msn, sendSource(source), 0, 0, 0, rsn);
    }

    /**
     * Starts a SEND whose last frame carries {@code immediate}; {@code rsn} as for {@link #beginSend}.
     *
     * @param msn the message's MSN
     * @param rsn as for {@link #beginSend(int, int, MemorySegment, long, int)}
     * @param source the memory holding the bytes
     * @param offset where the bytes start
     * @param length how many bytes, at most one message
     * @param immediate the immediate data
     * @return this segmenter
     */
    public Segmenter beginSendWithImmediate(int msn, int rsn, MemorySegment source, long offset, int length,
                                            int immediate) {
        checkSendLength(length);
        return beginSendWithImmediate(msn, rsn, one(source, offset, length), immediate);
    }

    /**
     * {@link #beginSendWithImmediate(int, int, MemorySegment, long, int, int)} from a list's pieces.
     *
     * @param msn the message's MSN
     * @param rsn as for {@link #beginSend(int, int, MemorySegment, long, int)}
     * @param source the bytes, over its pieces
     * @param immediate the immediate data
     * @return this segmenter
     */
    public Segmenter beginSendWithImmediate(int msn, int rsn, SgeList source, int immediate) {
        return begin(Opcode.KIND_SEND_WITH_IMMEDIATE, msn, sendSource(source), 0, 0, immediate, rsn);
    }

    /**
     * Starts an RDMA WRITE of {@code length} bytes to the peer's region {@code rkey} from
     * {@code regionOffset}; operations beyond one message become several messages from MSN {@code firstMsn}.
     *
     * @param firstMsn the MSN of the first message
     * @param source the memory holding the bytes
     * @param offset where the bytes start
     * @param length how many bytes
     * @param rkey the peer's region key
     * @param regionOffset where the bytes go in the peer's region
     * @return this segmenter
     */
    public Segmenter beginWrite(int firstMsn, MemorySegment source, long offset, long length, int rkey, long regionOffset) {
        return beginWrite(firstMsn, one(source, offset, length), rkey, regionOffset);
    }

    /**
     * {@link #beginWrite(int, MemorySegment, long, long, int, long)} from a list's pieces.
     *
     * @param firstMsn the MSN of the first message
     * @param source the bytes, over its pieces
     * @param rkey the peer's region key
     * @param regionOffset where the bytes go in the peer's region
     * @return this segmenter
     */
    public Segmenter beginWrite(int firstMsn, SgeList source, int rkey, long regionOffset) {
        checkRegionOffset(regionOffset, byteSize(source), "regionOffset");
        return begin(Opcode.KIND_WRITE, firstMsn, source, rkey, regionOffset, 0, 0);
    }

    /**
     * Like {@link #beginWrite}, with {@code immediate} on the last frame of the last message, the one
     * message that consumes a posted receive: that frame carries {@code rsn} (as for {@link #beginSend},
     * counting only that last message).
     *
     * @param firstMsn the MSN of the first message
     * @param rsn the receive sequence number of the last message
     * @param source the memory holding the bytes
     * @param offset where the bytes start
     * @param length how many bytes
     * @param rkey the peer's region key
     * @param regionOffset where the bytes go in the peer's region
     * @param immediate the immediate data
     * @return this segmenter
     */
    public Segmenter beginWriteWithImmediate(int firstMsn, int rsn, MemorySegment source, long offset, long length,
                                             int rkey, long regionOffset, int immediate) {
        return beginWriteWithImmediate(firstMsn, rsn, one(source, offset, length), rkey, regionOffset, immediate);
    }

    /**
     * {@link #beginWriteWithImmediate(int, int, MemorySegment, long, long, int, long, int)} from a list's pieces.
     *
     * @param firstMsn the MSN of the first message
     * @param rsn the receive sequence number of the last message
     * @param source the bytes, over its pieces
     * @param rkey the peer's region key
     * @param regionOffset where the bytes go in the peer's region
     * @param immediate the immediate data
     * @return this segmenter
     */
    public Segmenter beginWriteWithImmediate(int firstMsn, int rsn, SgeList source, int rkey, long regionOffset,
                                             int immediate) {
        checkRegionOffset(regionOffset, byteSize(source), "regionOffset");
        return begin(Opcode.KIND_WRITE_WITH_IMMEDIATE, firstMsn, source, rkey, regionOffset, immediate, rsn);
    }

    /**
     * Starts an RDMA READ of {@code length} bytes of the peer's region {@code rkey} from
     * {@code regionOffset} into the local sink {@code sinkRkey}/{@code sinkOffset}: one READ_REQUEST frame
     * (and MSN) per message-sized piece, each answered by one READ RESPONSE message. {@code sinkRkey} is the
     * sink region's remote key (never its local key: it goes on the wire), the one given to
     * {@link MessageAssembler#expectReadResponse} for each piece.
     *
     * @param firstMsn the MSN of the first READ_REQUEST
     * @param rkey the peer's region key
     * @param regionOffset where the read starts in the peer's region
     * @param length how many bytes
     * @param sinkRkey the local sink region's remote key
     * @param sinkOffset where the bytes land in the sink region
     * @return this segmenter
     */
    public Segmenter beginReadRequest(int firstMsn, int rkey, long regionOffset, long length, int sinkRkey, long sinkOffset) {
        checkRegionOffset(sinkOffset, length, "sinkOffset");
        return beginReadRequest(firstMsn, rkey, regionOffset, single.clear().add(sinkRkey, sinkOffset, length));
    }

    /**
     * Starts an RDMA READ of the peer's region {@code rkey} from {@code regionOffset} into the pieces of
     * {@code sinks}, in order: each piece is read by READ requests of its own (as many as its length needs
     * messages, none for a piece of 0 bytes) over the next consecutive range of the remote region, so every
     * response lands in one piece. Each piece is named by the key that goes on the wire, its region's
     * remote key ({@link SgeList#nameByRemoteKeys()}). A READ of 0 bytes is one empty request into the
     * first piece. Message {@code k}'s sink is what {@link #locateReadMessage} says.
     *
     * @param firstMsn the MSN of the first READ_REQUEST
     * @param rkey the peer's region key
     * @param regionOffset where the read starts in the peer's region
     * @param sinks the pieces the bytes land in, named by remote keys
     * @return this segmenter
     * @throws IllegalArgumentException if {@code sinks} is empty, a range is negative or overflows, or the
     *                                  READ needs more messages than the MSN space has in flight
     */
    public Segmenter beginReadRequest(int firstMsn, int rkey, long regionOffset, SgeList sinks) {
        long total = byteSize(sinks);
        if (sinks.count() == 0) {
            throw new IllegalArgumentException("a READ needs at least one sink");
        }
        checkRegionOffset(regionOffset, total, "regionOffset");
        for (int p = 0; p < sinks.count(); p++) {
            checkRegionOffset(sinks.offset(p), sinks.length(p), "sink offset");
        }
        long messages = readRequestMessages(sinks);
        if (messages > FramingConfig.MAX_MESSAGE_WINDOW) {
            throw new IllegalArgumentException("READ into " + sinks + " needs " + messages
                    + " messages, more than the MSN space allows in flight");
        }
        checkMsn(firstMsn);
        this.kind = Opcode.KIND_READ_REQUEST;
        this.firstMsn = firstMsn;
        this.source = null;
        this.sinks = sinks;
        this.length = total;
        this.rkey = rkey;
        this.regionOffset = regionOffset;
        this.immediate = 0;
        this.rsn = 0;
        this.ackRequest = false;
        this.messageBytes = chunk;
        this.framesPerMessage = 1;
        this.messageCount = (int) messages;
        this.frameCount = messageCount;
        this.cursor = 0;
        return this;
    }

    /**
     * READ REQUEST messages (and frames) a READ into {@code sinks} takes: each piece's length in messages,
     * at least 1 for the whole READ. Changes nothing.
     *
     * @param sinks the pieces a READ would land in
     * @return the number of READ_REQUEST messages
     */
    public long readRequestMessages(SgeList sinks) {
        long messages = 0;
        for (int p = 0; p < sinks.count(); p++) {
            messages += (sinks.length(p) + chunk - 1) / chunk;
        }
        return Math.max(1, messages);
    }

    /**
     * Starts the READ RESPONSE to one read request: {@code length} (at most one message) bytes of
     * {@code source} placed at the requester's {@code sinkRkey}/{@code sinkOffset}.
     *
     * @param msn the READ_REQUEST's MSN
     * @param source the memory holding the bytes
     * @param offset where the bytes start
     * @param length how many bytes
     * @param sinkRkey the requester's sink region key
     * @param sinkOffset where the bytes land in the sink region
     * @return this segmenter
     */
    public Segmenter beginReadResponse(int msn, MemorySegment source, long offset, int length, int sinkRkey, long sinkOffset) {
        checkSendLength(length);
        return beginReadResponse(msn, one(source, offset, length), sinkRkey, sinkOffset);
    }

    /**
     * {@link #beginReadResponse(int, MemorySegment, long, int, int, long)} from a list's pieces.
     *
     * @param msn the READ_REQUEST's MSN
     * @param source the bytes, over its pieces
     * @param sinkRkey the requester's sink region key
     * @param sinkOffset where the bytes land in the sink region
     * @return this segmenter
     */
    public Segmenter beginReadResponse(int msn, SgeList source, int sinkRkey, long sinkOffset) {
        checkRegionOffset(sinkOffset, sendSource(source).byteSize(), "sinkOffset");
        return begin(Opcode.KIND_READ_RESPONSE, msn, source, sinkRkey, sinkOffset, 0, 0);
    }

    private SgeList one(MemorySegment source, long offset, long length) {
        if (source == null) {
            throw new IllegalArgumentException("source is null");
        }
        return single.clear().add(source, offset, length);
    }

    private Segmenter begin(int kind, int msn, SgeList source, int key, long destination, int immediate, int rsn) {
        checkMsn(msn);
        long length = byteSize(source);
        for (int p = 0; p < source.count(); p++) {
            if (source.segment(p) == null) {
                throw new IllegalArgumentException("element " + p + " of " + source + " is not resolved to memory");
            }
        }
        this.kind = kind;
        this.firstMsn = msn;
        if (this.source != source) { // compared first: see payloadSegment
            this.source = source;
        }
        this.sinks = null;
        this.length = length;
        this.rkey = key;
        this.regionOffset = destination;
        this.immediate = immediate;
        this.rsn = rsn;
        this.ackRequest = false;
        if (length > FramingConfig.MAX_MESSAGE_SIZE) { // only a WRITE: the callers checked the others
            this.messageBytes = chunk;
            this.framesPerMessage = framesPerChunk;
            this.messageCount = messages(length);
        } else {
            // One message, as many segments as it takes: a WRITE with immediate of one message is what lets
            // the receiver's completion report the whole write's length.
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
        long n = (length + chunk - 1) / chunk;
        if (n > FramingConfig.MAX_MESSAGE_WINDOW) {
            throw new IllegalArgumentException("operation of " + length + " bytes needs " + n
                    + " messages, more than the MSN space allows in flight");
        }
        return (int) n;
    }

    /**
     * Sets {@link FrameHeader#FLAG_ACK_REQUEST} on the last frame of the work request begun last (a SEND,
     * WRITE or READ RESPONSE; a READ request's answer is its response): the sender waits for its
     * acknowledgement. Cleared by every {@code begin}.
     *
     * @param on whether the last frame asks for an acknowledgement
     * @return this segmenter
     * @throws IllegalStateException if the work request begun last is a READ request, or none was begun
     */
    public Segmenter requestAcknowledge(boolean on) {
        if (kind == 0 || on && kind == Opcode.KIND_READ_REQUEST) {
            throw new IllegalStateException(kind == 0 ? "no work request begun" : "a READ request is answered by its response");
        }
        this.ackRequest = on;
        return this;
    }

    /** {@return how many frames the current work request has} */
    public long frameCount() {
        return frameCount;
    }

    /** {@return how many MSNs the current work request uses}, from its first MSN on. */
    public int messageCount() {
        return messageCount;
    }

    /** {@return whether {@link #next} has frames left} */
    public boolean hasNext() {
        return cursor < frameCount;
    }

    /**
     * Writes the next frame in order; see {@link #writeFrame}.
     *
     * @param out where the header and extension go
     * @param outOffset where in {@code out}
     * @return the bytes written, {@code 32 + ext_length}
     */
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
     *
     * @param index the frame's number in the work request, from 0
     * @param out where the header and extension go
     * @param outOffset where in {@code out}
     * @return the bytes written, {@code 32 + ext_length}
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
        locatePayload(messageStart + offsetInMessage, bytes);
        writeHeader(out, outOffset, opcode, !last, ackRequest && index == frameCount - 1, frameMsn, offsetInMessage,
                segment & FrameHeader.SEGMENT_MASK, bytes, immediate, rsn, rkey, regionOffset + messageStart + offsetInMessage);
        if (icrcEnabled) {
            header.icrc(payloadContiguous ? icrc.compute(out, outOffset, payloadSegment, payloadOffset)
                    : icrc.compute(out, outOffset, source, payloadPosition));
        }
        return FrameHeader.LENGTH + ext;
    }

    /**
     * Writes the header and extension of one frame; {@link #header} is left over them. The fields an opcode
     * does not carry (immediate, RSN, the tagged extension) are ignored for it.
     */
    private void writeHeader(MemorySegment out, long outOffset, int opcode, boolean more, boolean askAcknowledge, int msn,
                             int offsetInMessage, int segmentNumber, int bytes, int imm, int receiveSequence, int key,
                             long frameRegionOffset) {
        int flags = FrameHeader.VERSION << FrameHeader.VERSION_SHIFT | (more ? FrameHeader.FLAG_MORE_SEGMENTS : 0)
                | (askAcknowledge ? FrameHeader.FLAG_ACK_REQUEST : 0);
        int ext = Opcode.extensionLength(opcode);
        header.wrap(out, outOffset).fill(flags, opcode, msn, offsetInMessage, segmentNumber,
                Opcode.hasImmediate(opcode) ? imm : 0, bytes, ext);
        long extOffset = outOffset + FrameHeader.LENGTH;
        if (Opcode.isTagged(opcode)) {
            tagged.wrap(out, extOffset).rkey(key).regionOffset(frameRegionOffset);
        }
        int rsnAt = Opcode.rsnOffset(opcode);
        if (rsnAt >= 0) {
            out.set(WireLayouts.U32, extOffset + rsnAt, receiveSequence);
        }
    }

    /**
     * {@return the bytes {@link #writeSingle} takes for a work request of {@code kind} and {@code length} bytes:
     * header, extension and payload}
     *
     * @param kind {@link Opcode#KIND_SEND}, {@link Opcode#KIND_SEND_WITH_IMMEDIATE}, {@link Opcode#KIND_WRITE} or
     *             {@link Opcode#KIND_WRITE_WITH_IMMEDIATE}
     * @param length payload bytes, at most the segment size
     */
    public static int singleFrameBytes(int kind, int length) {
        return FrameHeader.LENGTH + Opcode.extensionLength(Opcode.forSegment(kind, true, true)) + length;
    }

    /**
     * Writes a whole work request that is one frame, header and payload side by side, at {@code outOffset} of
     * {@code out}, {@code subflow} and timestamps zero as {@link #writeFrame} leaves them: the path of a small
     * message, which needs no {@code begin}, no frame arithmetic and no second copy of its header. Returns the
     * header and extension bytes; the payload follows them.
     *
     * @param kind {@link Opcode#KIND_SEND}, {@link Opcode#KIND_SEND_WITH_IMMEDIATE}, {@link Opcode#KIND_WRITE} or
     *             {@link Opcode#KIND_WRITE_WITH_IMMEDIATE}
     * @param msn the message's MSN
     * @param rsn the receive sequence number (SEND and WRITE with immediate; see {@link #beginSend})
     * @param payload the memory holding the bytes
     * @param payloadOffset where they start
     * @param length how many, at most the segment size
     * @param rkey the remote key (WRITE kinds)
     * @param regionOffset where in the remote region (WRITE kinds)
     * @param imm the immediate data (kinds with immediate)
     * @param askAcknowledge whether the frame asks for a prompt acknowledgement ({@link #requestAcknowledge})
     * @param out where the frame goes
     * @param outOffset where in {@code out}
     * @return {@code 32 + ext_length}
     * @throws IllegalArgumentException if the kind is not one of the four, the length is over a segment, the
     *                                  MSN out of range, the remote range overflows, or a range lies outside
     *                                  its segment
     */
    public int writeSingle(int kind, int msn, int rsn, MemorySegment payload, long payloadOffset, int length, int rkey,
                           long regionOffset, int imm, boolean askAcknowledge, MemorySegment out, long outOffset) {
        if (kind < Opcode.KIND_SEND || kind > Opcode.KIND_WRITE_WITH_IMMEDIATE) {
            throw new IllegalArgumentException("kind " + kind + " is not a SEND or WRITE");
        }
        if (length < 0 || length > segmentSize) {
            throw new IllegalArgumentException("length " + length + " outside 0.." + segmentSize);
        }
        checkMsn(msn);
        checkRegionOffset(regionOffset, length, "regionOffset");
        int opcode = Opcode.forSegment(kind, true, true);
        int headerBytes = FrameHeader.LENGTH + Opcode.extensionLength(opcode);
        if (outOffset < 0 || outOffset > out.byteSize() - headerBytes - length) {
            throw new IllegalArgumentException("a frame of " + (headerBytes + length) + " bytes does not fit at "
                    + outOffset + " of a " + out.byteSize() + "-byte segment");
        }
        MemorySegment.copy(payload, payloadOffset, out, outOffset + headerBytes, length);
        writeHeader(out, outOffset, opcode, false, askAcknowledge, msn, 0, 0, length, imm, rsn, rkey, regionOffset);
        if (icrcEnabled) {
            header.icrc(icrc.compute(out, outOffset, out, outOffset + headerBytes));
        }
        return headerBytes;
    }

    /** Header and extension bytes of a {@link Opcode#SEND_PACKED} frame: its records follow them. */
    public static final int PACKED_HEADER_BYTES = FrameHeader.LENGTH + UntaggedExtension.LENGTH;

    /**
     * Writes the header of a {@link Opcode#SEND_PACKED} frame at {@code outOffset} of {@code out}, whose
     * {@code payloadBytes} of records ({@link PackedSends#writeRecord}) are already in place right after
     * it, and its ICRC over them when negotiated; {@code subflow} and timestamps zero, as
     * {@link #writeSingle} leaves them.
     *
     * @param msn the MSN of the first record's message
     * @param rsn the RSN of the receive the first record's message takes
     * @param payloadBytes the records' bytes, {@link PackedSends#RECORD_HEADER} .. {@link PackedSends#MAX_LENGTH}
     *                     and at most the segment size
     * @param askAcknowledge whether the frame asks for a prompt acknowledgement of its last message
     * @param out where the frame is
     * @param outOffset where in {@code out}
     * @return {@link #PACKED_HEADER_BYTES}
     * @throws IllegalArgumentException if the MSN or length is out of range, or the frame lies outside {@code out}
     */
    public int writePackedHeader(int msn, int rsn, int payloadBytes, boolean askAcknowledge, MemorySegment out,
                                 long outOffset) {
        if (payloadBytes < PackedSends.RECORD_HEADER || payloadBytes > Math.min(PackedSends.MAX_LENGTH, segmentSize)) {
            throw new IllegalArgumentException("packed payload of " + payloadBytes + " bytes outside "
                    + PackedSends.RECORD_HEADER + ".." + Math.min(PackedSends.MAX_LENGTH, segmentSize));
        }
        checkMsn(msn);
        if (outOffset < 0 || outOffset > out.byteSize() - PACKED_HEADER_BYTES - payloadBytes) {
            throw new IllegalArgumentException("a packed frame of " + (PACKED_HEADER_BYTES + payloadBytes)
                    + " bytes does not fit at " + outOffset + " of a " + out.byteSize() + "-byte segment");
        }
        writeHeader(out, outOffset, Opcode.SEND_PACKED, false, askAcknowledge, msn, 0, 0, payloadBytes, 0, rsn, 0, 0);
        if (icrcEnabled) {
            header.icrc(icrc.compute(out, outOffset, out, outOffset + PACKED_HEADER_BYTES));
        }
        return PACKED_HEADER_BYTES;
    }

    /** Describes the payload of the frame being written: {@code bytes} bytes at {@code position} of the source. */
    private void locatePayload(long position, int bytes) {
        payloadPosition = position;
        payloadLength = bytes;
        if (bytes == 0) {
            // Only a message of 0 bytes has an empty frame, at position 0: it names the first piece, if any.
            boolean any = source.count() > 0;
            payloadSegment = any ? source.segment(0) : null;
            payloadOffset = any ? source.offset(0) : 0;
            payloadContiguous = any;
            return;
        }
        int p = source.pieceAt(position);
        long within = position - source.start(p);
        MemorySegment segment = source.segment(p);
        if (payloadSegment != segment) {
            // Compared first: a reference stored into this long-lived object pays a GC barrier with a
            // fence in it, and frame after frame the memory is the same.
            payloadSegment = segment;
        }
        payloadOffset = source.offset(p) + within;
        payloadContiguous = bytes <= source.length(p) - within;
    }

    private int writeReadRequest(int message, MemorySegment out, long outOffset) {
        int ext = ReadRequestExtension.LENGTH;
        if (outOffset < 0 || outOffset > out.byteSize() - FrameHeader.LENGTH - ext) {
            throw new IllegalArgumentException("read request frame does not fit at " + outOffset);
        }
        locateReadMessage(message);
        frameMsn = (firstMsn + message) & 0xFFFF;
        payloadPosition = 0;
        payloadLength = 0;
        payloadSegment = null;
        payloadOffset = 0;
        payloadContiguous = true;
        header.wrap(out, outOffset).clear()
                .version(FrameHeader.VERSION)
                .opcode(Opcode.RDMA_READ_REQUEST)
                .msn(frameMsn)
                .extLength(ext);
        readRequest.wrap(out, outOffset + FrameHeader.LENGTH)
                .rkey(rkey)
                .regionOffset(regionOffset + sinks.start(readPiece) + readWithin)
                .readLength(readBytes)
                .sinkRkey(readSinkKey())
                .sinkOffset(readSinkOffset());
        if (icrcEnabled) {
            header.icrc(icrc.compute(out, outOffset, out, outOffset + FrameHeader.LENGTH + ext));
        }
        return FrameHeader.LENGTH + ext;
    }

    /**
     * Finds READ request message {@code message} of the READ begun last, whose sink {@link #readSinkKey()},
     * {@link #readSinkOffset()} and {@link #readLength()} then describe (what its frame carries, and what
     * {@link MessageAssembler#expectReadResponse} is told).
     *
     * @param message the READ_REQUEST's number in the READ, from 0
     * @return this segmenter
     */
    public Segmenter locateReadMessage(int message) {
        if (kind != Opcode.KIND_READ_REQUEST || message < 0 || message >= messageCount) {
            throw new IllegalArgumentException("no READ request message " + message + " begun");
        }
        int m = message;
        for (int p = 0; p < sinks.count(); p++) {
            long n = (sinks.length(p) + chunk - 1) / chunk;
            if (m < n) {
                readPiece = p;
                readWithin = (long) m * chunk;
                readBytes = (int) Math.min(chunk, sinks.length(p) - readWithin);
                return this;
            }
            m -= (int) n;
        }
        readPiece = 0; // a READ of 0 bytes
        readWithin = 0;
        readBytes = 0;
        return this;
    }

    /** {@return the wire key of the sink of the READ message located last} */
    public int readSinkKey() {
        return sinks.key(readPiece);
    }

    /** {@return where in its sink region the READ message located last lands} */
    public long readSinkOffset() {
        return sinks.offset(readPiece) + readWithin;
    }

    /** {@return the bytes of the READ message located last} */
    public int readLength() {
        return readBytes;
    }

    /** {@return the MSN of the frame last written} */
    public int frameMsn() {
        return frameMsn;
    }

    /** {@return where the payload of the frame last written starts in its source}: bytes from the operation's start. */
    public long payloadPosition() {
        return payloadPosition;
    }

    /** {@return the payload bytes of the frame last written} (0 for a read request). */
    public int payloadLength() {
        return payloadLength;
    }

    /**
     * {@return the memory of the piece holding the first payload byte of the frame last written ({@code null} for
     * a read request); the whole payload when {@link #isPayloadContiguous()}}
     */
    public MemorySegment source() {
        return payloadSegment;
    }

    /** {@return where the payload of the frame last written starts in {@link #source()}} */
    public long payloadOffset() {
        return payloadOffset;
    }

    /**
     * {@return whether the payload of the frame last written lies in one piece of the source ({@link #source()} at
     * {@link #payloadOffset()}); if not, it is bytes {@link #payloadPosition()} on of {@link #sources()}}
     */
    public boolean isPayloadContiguous() {
        return payloadContiguous;
    }

    /** {@return the source of the current work request ({@code null} for a read request)} */
    public SgeList sources() {
        return source;
    }

    private static SgeList sendSource(SgeList source) {
        checkSendLength(byteSize(source));
        return source;
    }

    private static long byteSize(SgeList list) {
        if (list == null) {
            throw new IllegalArgumentException("scatter/gather list is null");
        }
        return list.byteSize();
    }

    private static void checkSendLength(long length) {
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
