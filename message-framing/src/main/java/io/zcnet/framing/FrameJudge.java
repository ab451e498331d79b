package io.zcnet.framing;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.MemorySegment;

/**
 * Judges a validated frame against the receive side's state without changing it: the window, the
 * consistency of the frame with what its message's other frames said, duplicates, the receive a
 * receive-consuming frame names by its RSN, and the key, rights and bounds of every place a payload may be
 * written. Both ways in (a whole frame, or header first) are judged here, so they agree. The verdict's
 * details ({@link #slot}, {@link #receive}, {@link #destination}) stay in this object until the next
 * judgement. Not thread-safe: owned by one {@link MessageAssembler}.
 */
final class FrameJudge {

    private final int segmentSize;
    private final int window;
    private final MemoryRegistry registry;
    private final ReceiveQueue receives;
    private final MessageSlots slots;
    private final ExpectedReads expectedReads;
    private final TaggedExtension tagged = new TaggedExtension();
    private final ReadRequestExtension readExtension = new ReadRequestExtension();

    /** The judged frame's message slot, or -1 (an ACKNOWLEDGE, or outside the window). */
    int slot;
    /** The posted receive the judged frame's message holds, or the one its RSN lets it take (absolute index), or -1. */
    long receive;
    /**
     * Where an accepted payload goes when it lands in one piece of memory: memory, offset and region (null
     * for frames without a place, and for payloads {@link #scatter scattered} over several pieces).
     */
    MemorySegment destination;
    long destinationOffset;
    MemoryRegion destinationRegion;
    /**
     * A SEND payload that straddles pieces of its receive: bytes {@code [scatterPosition, + length)} of this
     * list's message, in several pieces; null when the payload has one {@link #destination}.
     */
    SgeList scatter;
    long scatterPosition;
    private final SgeCursor spans = new SgeCursor();

    FrameJudge(FramingConfig config, MemoryRegistry registry, ReceiveQueue receives, MessageSlots slots,
               ExpectedReads expectedReads) {
        this.segmentSize = config.segmentSize();
        this.window = config.messageWindow();
        this.registry = registry;
        this.receives = receives;
        this.slots = slots;
        this.expectedReads = expectedReads;
    }

    /**
     * Judges the frame whose base header is in {@code header} and whose extension is at {@code extOffset}
     * of {@code headers}, with {@code length} payload bytes.
     *
     * @return {@link MessageAssembler#ACCEPTED} (the payload goes to {@link #destination}),
     *         {@link MessageAssembler#DUPLICATE}, {@link MessageAssembler#DEFERRED}, or the negative
     *         {@link FrameError} the frame commits; {@link #slot} and {@link #receive} are set as far as
     *         they were found, for failing the right receive
     */
    int judge(FrameHeader header, MemorySegment headers, long extOffset, int length) {
        slot = -1;
        receive = -1;
        destination = null;
        destinationOffset = 0;
        destinationRegion = null;
        scatter = null;
        int opcode = header.opcode();
        if (opcode == Opcode.ACKNOWLEDGE) {
            return MessageAssembler.ACCEPTED;
        }
        int msn = header.msn();
        int ahead = slots.ahead(msn);
        if (ahead >= window) {
            // Behind the window by up to half the MSN space is an old copy, not only W behind: a resend on one
            // subflow may still be on its way while the original, arrived on another, let the window move on.
            return ahead >= Msn.MODULUS / 2 ? MessageAssembler.DUPLICATE : FrameError.MSN_OUT_OF_WINDOW;
        }
        int slot = slots.slot(msn);
        this.slot = slot;
        receive = slots.receive(slot); // the receive the message holds, which an error must complete
        int family = MessageSlots.family(opcode);
        if (slots.kind(slot) != 0 && slots.kind(slot) != family) {
            return FrameError.INCONSISTENT_MESSAGE;
        }
        int messageOffset = header.messageOffset();
        int segment = messageOffset / segmentSize;
        int expected = slots.segmentsExpected(slot);
        if (Opcode.isLast(opcode)) {
            if ((expected >= 0 && slots.totalLength(slot) != messageOffset + length) || slots.highestSegment(slot) > segment) {
                return FrameError.INCONSISTENT_MESSAGE;
            }
        } else if (expected >= 0 && segment >= expected - 1) {
            return FrameError.INCONSISTENT_MESSAGE;
        }
        int rsnAt = Opcode.rsnOffset(opcode);
        int rsn = rsnAt >= 0 ? headers.get(WireLayouts.U32, extOffset + rsnAt) : 0;
        if (rsnAt >= 0 && receive >= 0 && rsn != (int) receive) {
            return FrameError.INCONSISTENT_MESSAGE; // every frame of a message names the receive it holds
        }
        if (slots.isPlaced(slot, segment)) {
            return MessageAssembler.DUPLICATE;
        }
        if (slots.isReserved(slot, segment)) {
            // Another copy is being received and that receive may still fail: this copy is all that is
            // left then (the sender resent the segment once, here), so it is kept, not dropped.
            return MessageAssembler.DEFERRED;
        }
        if (rsnAt >= 0 && receive < 0) {
            int taken = takeReceive(msn, rsn);
            if (taken != FrameError.OK) {
                return taken;
            }
        }
        return switch (family) {
            case Opcode.KIND_SEND -> send(messageOffset, length);
            case Opcode.KIND_WRITE -> write(headers, extOffset, length);
            case Opcode.KIND_READ_RESPONSE -> readResponse(slot, messageOffset, headers, extOffset, length);
            default -> readRequest(headers, extOffset);
        };
    }

    /**
     * Whether the frame is a whole SEND message (one frame) that is the next to complete, takes the oldest posted
     * receive and fits its one piece: the common case, which {@link #judge} would accept and the message then
     * complete and retire at once, its slot left blank. Sets the verdict as {@code judge} does, changing nothing;
     * false says nothing about the frame: judge it. Every condition below is one {@code judge} checks on the way
     * to ACCEPTED for such a frame (that no message holds the receive makes {@link #takeReceive}'s order checks
     * pass at the window start), so the two never disagree.
     */
    boolean isWholeOldestSend(FrameHeader header, MemorySegment headers, long extOffset, int length) {
        int opcode = header.opcode();
        if (opcode != Opcode.SEND_ONLY && opcode != Opcode.SEND_ONLY_WITH_IMMEDIATE) {
            return false; // an ONLY frame starts at message offset 0: the validator saw to it
        }
        return isWholeOldestSend(header.msn(), headers.get(WireLayouts.U32, extOffset + Opcode.rsnOffset(opcode)), length);
    }

    /**
     * {@link #isWholeOldestSend(FrameHeader, MemorySegment, long, int)} for a whole SEND known by its numbers:
     * message {@code msn} of {@code length} bytes, taking receive {@code rsn} (a record of a packed frame).
     */
    boolean isWholeOldestSend(int msn, int rsn, int length) {
        int slot = slots.oldestSlot();
        long oldest = receives.consumed();
        if (msn != slots.oldestMsn() || !slots.isUntouched(slot) || rsn != (int) oldest
                || !receives.isPosted(oldest) || slots.holderOf(oldest) >= 0) {
            return false;
        }
        SgeList pieces = receives.pieces(oldest);
        if (pieces.count() != 1 || length > pieces.byteSize()) {
            return false;
        }
        MemoryRegion region = pieces.region(0);
        if (!region.isValid() || !region.segment().scope().isAlive()) {
            return false;
        }
        this.slot = slot;
        receive = oldest;
        destination = region.segment();
        destinationOffset = pieces.offset(0);
        destinationRegion = region;
        scatter = null;
        return true;
    }

    /**
     * Checks the RSN of the first frame by which message {@code msn} takes a receive, and sets
     * {@link #receive}. The receive must be posted (the credits granted) and not consumed, held by no other
     * message, and consistent with MSN order: the receive-consuming messages before this one take the
     * receives before it, so there are no more of those than messages before it in the window, no earlier
     * message holds a later receive and no later message an earlier one. (That the RSNs leave no receive
     * out is known only as messages complete: {@link MessageCompletion} checks it then.) Constant work.
     */
    private int takeReceive(int msn, int rsn) {
        long consumed = receives.consumed();
        long fromOldest = Integer.toUnsignedLong(rsn - (int) consumed); // RSNs count receives mod 2^32
        if (fromOldest >= 1L << 31) {
            return FrameError.BAD_RECEIVE_SEQUENCE; // behind the oldest receive: consumed already
        }
        long index = consumed + fromOldest;
        if (!receives.isPosted(index)) {
            return FrameError.RECEIVER_NOT_READY;
        }
        int position = slots.ahead(msn);
        if (fromOldest > position || slots.holderOf(index) >= 0) {
            return FrameError.BAD_RECEIVE_SEQUENCE;
        }
        int before = slots.holderOf(index - 1);
        int after = slots.holderOf(index + 1);
        if (before >= 0 && slots.ahead(before) > position || after >= 0 && slots.ahead(after) < position) {
            return FrameError.BAD_RECEIVE_SEQUENCE;
        }
        receive = index;
        return FrameError.OK;
    }

    /**
     * A SEND frame's place in the receive it takes: the pieces its bytes cover, in order, whose regions must
     * still be valid (a frame of 0 bytes covers none). One piece is a {@link #destination}; several are a
     * {@link #scatter}.
     */
    private int send(int messageOffset, int length) {
        SgeList pieces = receives.pieces(receive);
        if ((long) messageOffset + length > pieces.byteSize()) {
            return FrameError.LOCAL_LENGTH;
        }
        int covered = 0;
        spans.over(pieces, messageOffset, length);
        while (spans.next()) {
            MemoryRegion region = pieces.region(spans.piece());
            if (!region.isValid() || !region.segment().scope().isAlive()) {
                return FrameError.LOCAL_PROTECTION;
            }
            if (covered++ == 0) {
                destination = spans.segment();
                destinationOffset = spans.offset();
                destinationRegion = region;
            }
        }
        if (covered > 1) {
            destination = null;
            destinationOffset = 0;
            destinationRegion = null;
            scatter = pieces;
            scatterPosition = messageOffset;
        }
        return MessageAssembler.ACCEPTED;
    }

    private int write(MemorySegment headers, long extOffset, int length) {
        tagged.wrap(headers, extOffset);
        int key = tagged.rkey();
        long regionOffset = tagged.regionOffset();
        if (registry.checkRemote(key, regionOffset, length, Access.REMOTE_WRITE) != AccessStatus.OK) {
            return FrameError.REMOTE_ACCESS;
        }
        return target(registry.lookupRemote(key), regionOffset, length);
    }

    private int readResponse(int slot, int messageOffset, MemorySegment headers, long extOffset, int length) {
        tagged.wrap(headers, extOffset);
        int key = tagged.rkey();
        long regionOffset = tagged.regionOffset();
        // Every frame of one response names the same sink: key and message start agree.
        if (slots.segmentsPlaced(slot) > 0
                && (slots.readRkey(slot) != key || slots.readSinkOffset(slot) != regionOffset - messageOffset)) {
            return FrameError.INCONSISTENT_MESSAGE;
        }
        // The sink is named by its remote key; matching a read this side registered is the authorisation,
        // so the region needs LOCAL_WRITE (not REMOTE_WRITE), checked here as it is now.
        if (!expectedReads.covers(key, regionOffset, length)) {
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
        return MessageAssembler.ACCEPTED;
    }

    private int readRequest(MemorySegment headers, long extOffset) {
        readExtension.wrap(headers, extOffset);
        long length = readExtension.readLength();
        if (length > FramingConfig.MAX_MESSAGE_SIZE) {
            return FrameError.MESSAGE_TOO_LONG;
        }
        if (registry.checkRemote(readExtension.rkey(), readExtension.regionOffset(), length, Access.REMOTE_READ)
                != AccessStatus.OK || readExtension.sinkOffset() < 0) {
            return FrameError.REMOTE_ACCESS;
        }
        return MessageAssembler.ACCEPTED;
    }
}
