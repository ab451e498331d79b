package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * Stateless checks of one frame against wire format v1 (docs/wire-format.md, section 14): everything that
 * can be judged from the frame alone and the negotiated segment size. Window, key and buffer checks need
 * queue pair state and live in {@link MessageAssembler}. Every field is validated before it is used; a
 * check returns {@link FrameError#OK} or a negative {@link FrameError}, reads only the header and
 * extension, allocates nothing and throws nothing for any bytes. Stateless, thread-safe.
 */
public final class FrameValidator {

    private FrameValidator() {
    }

    /**
     * How many bytes the frame starting at {@code offset} occupies, or {@link FrameError#TRUNCATED} if
     * fewer than {@link FrameHeader#LENGTH} bytes of {@code available} are there yet. Use it to cut a
     * byte stream into frames only after {@link #validateHeader} accepted the header.
     *
     * @param segment the received bytes
     * @param offset where the frame starts
     * @param available how many bytes from {@code offset} have arrived
     * @return the frame's length in bytes, or {@link FrameError#TRUNCATED}
     */
    public static long frameLength(MemorySegment segment, long offset, long available) {
        if (available < FrameHeader.LENGTH || offset < 0 || offset > segment.byteSize() - FrameHeader.LENGTH) {
            return FrameError.TRUNCATED;
        }
        long ext = segment.get(WireLayouts.U16, offset + FrameHeader.EXT_LENGTH_OFFSET) & 0xFFFF;
        long length = segment.get(WireLayouts.U32, offset + FrameHeader.LENGTH_OFFSET) & 0xFFFF_FFFFL;
        return FrameHeader.LENGTH + ext + length;
    }

    /**
     * Checks the base header: version, opcode, extension length, flags against the opcode,
     * unused fields, payload against {@code segmentSize}, and the message offset and segment number; an
     * ACKNOWLEDGE with a non-zero segment byte is a {@link NegativeAcknowledge}, whose syndrome and failed MSN
     * must be ones it may carry.
     *
     * @param segmentSize the negotiated segment size ({@link FramingConfig#segmentSize()})
     * @param header a flyweight wrapped over the received header
     * @return {@link FrameError#OK} or the violation
     * @throws IllegalArgumentException if {@code segmentSize} is outside the range {@link FramingConfig} allows
     */
    public static int validateHeader(FrameHeader header, int segmentSize) {
        if (segmentSize < FramingConfig.MIN_SEGMENT_SIZE || segmentSize > FramingConfig.MAX_MESSAGE_SIZE) {
            throw new IllegalArgumentException("segmentSize " + segmentSize + " out of range");
        }
        int flags = header.flags();
        if (flags >>> FrameHeader.VERSION_SHIFT != FrameHeader.VERSION) {
            return FrameError.BAD_VERSION;
        }
        int opcode = header.opcode();
        if (!Opcode.isValid(opcode)) {
            return FrameError.BAD_OPCODE;
        }
        if (header.extLength() != Opcode.extensionLength(opcode)) {
            return FrameError.BAD_EXTENSION_LENGTH;
        }
        boolean last = Opcode.isLast(opcode);
        boolean more = (flags & FrameHeader.FLAG_MORE_SEGMENTS) != 0;
        if (more == last) {
            return FrameError.BAD_FLAGS;
        }
        boolean acknowledge = opcode == Opcode.ACKNOWLEDGE;
        int rtrBits = flags & (FrameHeader.FLAG_RTR | FrameHeader.FLAG_RTR_ACK);
        if (rtrBits != 0 && (!acknowledge || rtrBits == (FrameHeader.FLAG_RTR | FrameHeader.FLAG_RTR_ACK))) {
            return FrameError.BAD_FLAGS;
        }
        // Quiet is a plain ACKNOWLEDGE's word about its sender's heartbeats: never on a NAK or in the RTR exchange.
        if ((flags & FrameHeader.FLAG_QUIET) != 0 && (!acknowledge || rtrBits != 0 || header.segmentNumber() != 0)) {
            return FrameError.BAD_FLAGS;
        }
        // An ACK request asks for an acknowledgement of the message the frame ends; a READ request's is its
        // response, and an ACKNOWLEDGE is never acknowledged.
        if ((flags & FrameHeader.FLAG_ACK_REQUEST) != 0 && (more || acknowledge || opcode == Opcode.RDMA_READ_REQUEST)) {
            return FrameError.BAD_FLAGS;
        }
        if ((flags & FrameHeader.FLAG_TIMESTAMP_PRESENT) == 0 && header.timestamp() != 0) {
            return FrameError.RESERVED_FIELD;
        }
        if (header.immData() != 0 && !Opcode.hasImmediate(opcode) && !acknowledge) {
            return FrameError.RESERVED_FIELD;
        }
        long length = header.length();
        int mboSeg = header.mboSeg();
        if (acknowledge && (mboSeg & FrameHeader.SEGMENT_MASK) != 0) {
            return validateNegative(header, rtrBits);
        }
        if (acknowledge || opcode == Opcode.RDMA_READ_REQUEST) {
            return length == 0 && mboSeg == 0 ? FrameError.OK : FrameError.RESERVED_FIELD;
        }
        if (length > segmentSize) {
            return FrameError.PAYLOAD_TOO_LONG;
        }
        if (Opcode.isPacked(opcode) && (length > PackedSends.MAX_LENGTH || length < PackedSends.RECORD_HEADER)) {
            // Bounded so it is always cut from the stream whole; and it carries at least one message.
            return length > PackedSends.MAX_LENGTH ? FrameError.PAYLOAD_TOO_LONG : FrameError.BAD_SEGMENT;
        }
        int messageOffset = mboSeg >>> FrameHeader.OFFSET_SHIFT;
        if (messageOffset + length > FrameHeader.MAX_MESSAGE_OFFSET) {
            return FrameError.MESSAGE_TOO_LONG;
        }
        int segmentIndex = messageOffset / segmentSize;
        if (messageOffset != segmentIndex * segmentSize
                || (mboSeg & FrameHeader.SEGMENT_MASK) != (segmentIndex & FrameHeader.SEGMENT_MASK)) {
            return FrameError.BAD_SEGMENT;
        }
        // Offset 0 belongs to the FIRST (or ONLY) frame alone: a MIDDLE or LAST frame there would let a
        // message complete without its FIRST, whose opcode is what says how the message begins.
        boolean first = Opcode.isFirst(opcode);
        if (first != (messageOffset == 0)) {
            return FrameError.BAD_SEGMENT;
        }
        if (!last && length != segmentSize) {
            return FrameError.BAD_SEGMENT;
        }
        if (last && !first && length == 0) {
            return FrameError.BAD_SEGMENT;
        }
        return FrameError.OK;
    }

    /** A {@link NegativeAcknowledge}: a known syndrome, an MSN or none, no offset, payload or RTR exchange. */
    private static int validateNegative(FrameHeader header, int rtrBits) {
        if (rtrBits != 0) {
            return FrameError.BAD_FLAGS;
        }
        boolean known = NegativeAcknowledge.isValidSyndrome(NegativeAcknowledge.frameError(header))
                && NegativeAcknowledge.isValidFailedMsn(header.immData());
        return known && header.length() == 0 && header.messageOffset() == 0 ? FrameError.OK : FrameError.RESERVED_FIELD;
    }

    /**
     * Checks a whole frame of {@code available} bytes at {@code offset}: the header as
     * {@link #validateHeader} does, then that the extension and payload are all there, then the read
     * request's length against the message limit and a packed frame's records ({@link PackedSends#count}). Returns {@link FrameError#TRUNCATED} when bytes are
     * missing. The ICRC is not checked here (see {@link Icrc#verify}).
     *
     * @param segment the received bytes
     * @param offset where the frame starts
     * @param available how many bytes from {@code offset} have arrived
     * @param segmentSize the negotiated segment size
     * @param header a flyweight this method wraps over the frame's header
     * @param readRequest a flyweight this method wraps over a read request's extension
     * @return {@link FrameError#OK}, {@link FrameError#TRUNCATED}, or the violation
     */
    public static int validateFrame(MemorySegment segment, long offset, long available, int segmentSize,
                                    FrameHeader header, ReadRequestExtension readRequest) {
        if (segment == null || header == null || readRequest == null) {
            throw new IllegalArgumentException("segment and flyweights must not be null");
        }
        if (available < 0 || offset < 0 || offset > segment.byteSize() || available > segment.byteSize() - offset) {
            throw new IllegalArgumentException("available " + available + " bytes at offset " + offset
                    + " exceed the " + segment.byteSize() + "-byte segment");
        }
        if (available < FrameHeader.LENGTH) {
            return FrameError.TRUNCATED;
        }
        header.wrap(segment, offset);
        int error = validateHeader(header, segmentSize);
        if (error != FrameError.OK) {
            return error;
        }
        if (available < header.frameLength()) {
            return FrameError.TRUNCATED;
        }
        if (header.opcode() == Opcode.RDMA_READ_REQUEST) {
            readRequest.wrap(segment, offset + FrameHeader.LENGTH);
            if (readRequest.readLength() > FrameHeader.MAX_MESSAGE_OFFSET) {
                return FrameError.MESSAGE_TOO_LONG;
            }
        }
        if (Opcode.isPacked(header.opcode())) {
            int records = PackedSends.count(segment, offset + FrameHeader.LENGTH + header.extLength(), header.length());
            return records < 0 ? records : FrameError.OK;
        }
        return FrameError.OK;
    }
}
