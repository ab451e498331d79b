package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * Direct placement, "header split in software", for one {@link MessageAssembler}: phase 1 judges a frame
 * from its header alone and reserves its segment, the kernel then receives the payload straight into its
 * final place, phase 2 commits it (or aborts it when the receive failed). The reservation is what makes
 * this safe under multipath: no other copy of the segment is written while the kernel may be writing it,
 * and none is lost if that write dies with its subflow (see {@link MessageAssembler#DEFERRED}). The public
 * entry points and their contracts are {@link MessageAssembler#beginPlacement},
 * {@link MessageAssembler#commit} and {@link MessageAssembler#abort}; this class is their implementation.
 * Not thread-safe: the assembler's thread only.
 */
final class DirectPlacement {
    private final MessageAssembler assembler;
    /** Placements handed out and not yet committed or aborted. */
    private int pending;

    DirectPlacement(MessageAssembler assembler) {
        this.assembler = assembler;
    }

    int pending() {
        return pending;
    }

    int begin(MemorySegment headers, long offset, long available, PlacementTarget target) {
        if (headers == null || target == null) {
            throw new IllegalArgumentException("headers and target must not be null");
        }
        if (offset < 0 || available < 0 || offset > headers.byteSize() || available > headers.byteSize() - offset) {
            throw new IllegalArgumentException("range " + offset + "+" + available + " outside the header segment");
        }
        if (target.owner != null) {
            throw new IllegalStateException("target still holds a placement: commit or abort it first: " + target);
        }
        if (target.drain.byteSize() < assembler.segmentSize) {
            throw new IllegalArgumentException("drain of " + target.drain.byteSize() + " bytes is smaller than the "
                    + assembler.segmentSize + "-byte segment size");
        }
        target.clear();
        if (assembler.state == MessageAssembler.STATE_ERROR) {
            return FrameError.QUEUE_PAIR_IN_ERROR;
        }
        if (available < FrameHeader.LENGTH) {
            return FrameError.TRUNCATED;
        }
        assembler.header.wrap(headers, offset);
        int result = FrameValidator.validateHeader(assembler.header, assembler.segmentSize);
        if (result != FrameError.OK) {
            return assembler.fail(result, -1, -1);
        }
        int headerBytes = FrameHeader.LENGTH + assembler.header.extLength();
        if (available < headerBytes) {
            return FrameError.TRUNCATED;
        }
        MemorySegment copy = target.headerCopy;
        MemorySegment.copy(headers, offset, copy, 0, headerBytes);
        assembler.header.wrap(copy, 0);
        int length = (int) assembler.header.length();
        result = assembler.check(copy, FrameHeader.LENGTH, length);
        if (result == MessageAssembler.ACCEPTED) {
            int slot = assembler.checkedSlot;
            if (assembler.destinationRegion != null && !assembler.destinationRegion.pin()) {
                // Deregistered since the check: nothing may be received into it.
                return assembler.fail(assembler.checkedReceive >= 0 ? FrameError.LOCAL_PROTECTION : FrameError.REMOTE_ACCESS,
                        slot, assembler.checkedReceive);
            }
            target.region = assembler.destinationRegion;
            if (slot >= 0) {
                int segment = assembler.header.messageOffset() / assembler.segmentSize;
                assembler.slots.reserve(slot, segment);
                target.segmentIndex = segment;
            }
            target.slot = slot;
            target.receive = assembler.checkedReceive;
            target.owner = assembler;
            pending++;
            if (assembler.destination != null) {
                target.describe(assembler.destination, assembler.destinationOffset, length);
            } else {
                target.describe(target.drain, 0, 0);
            }
            return MessageAssembler.ACCEPTED;
        }
        if (result == MessageAssembler.DUPLICATE || result == MessageAssembler.DEFERRED) {
            target.describe(target.drain, 0, length);
            return result == MessageAssembler.DUPLICATE ? assembler.count(result) : result;
        }
        return assembler.fail(result, assembler.checkedSlot, assembler.checkedReceive);
    }

    int commit(PlacementTarget target) {
        release(target);
        if (assembler.state == MessageAssembler.STATE_ERROR) {
            return FrameError.QUEUE_PAIR_IN_ERROR;
        }
        MemorySegment copy = target.headerCopy;
        assembler.header.wrap(copy, 0);
        if (assembler.icrcEnabled) {
            int verified = verifyPlaced(copy, target);
            if (verified != MessageAssembler.ACCEPTED) {
                return verified;
            }
        }
        // The reservation kept every other copy of this segment out, and the receive a SEND takes was
        // known at beginPlacement and never changes: the check yields the same place, or an error.
        int result = assembler.check(copy, FrameHeader.LENGTH, target.length);
        if (result == MessageAssembler.ACCEPTED) {
            result = assembler.apply(copy, FrameHeader.LENGTH, target.length);
        } else if (result < 0) {
            return assembler.fail(result, assembler.checkedSlot, assembler.checkedReceive);
        }
        return assembler.count(result);
    }

    void abort(PlacementTarget target) {
        int slot = release(target);
        target.clear();
        if (slot >= 0 && assembler.state == MessageAssembler.STATE_READY) {
            assembler.completeIfDone(slot);
        }
    }

    /**
     * Verifies the ICRC of a committed frame over the bytes in its destination, whose memory may have been
     * freed meanwhile: that is an access error (the receive's LOCAL_PROTECTION, a region's REMOTE_ACCESS),
     * never an exception escaping into the receive loop.
     */
    private int verifyPlaced(MemorySegment copy, PlacementTarget target) {
        int gone = target.receive >= 0 ? FrameError.LOCAL_PROTECTION : FrameError.REMOTE_ACCESS;
        if (target.length > 0 && !target.segment.scope().isAlive()) {
            return assembler.fail(gone, target.slot, target.receive);
        }
        try {
            return assembler.icrc.verify(copy, 0, target.segment, target.offset) ? MessageAssembler.ACCEPTED : assembler.fail(FrameError.ICRC_MISMATCH, -1, -1);
        } catch (IllegalStateException | WrongThreadException closedMeanwhile) {
            return assembler.fail(gone, target.slot, target.receive);
        }
    }

    /** Ends a placement's reservation and pin; in ERROR, flushes once none is left. Returns its slot. */
    private int release(PlacementTarget target) {
        if (target == null) {
            throw new IllegalArgumentException("target is null");
        }
        if (target.owner != assembler) {
            throw new IllegalStateException(target.owner == null ? "target holds no placement: " + target
                    : "target holds a placement of another assembler: " + target);
        }
        target.owner = null;
        pending--;
        if (target.region != null) {
            target.region.unpin();
            target.region = null;
        }
        int slot = target.slot;
        if (slot >= 0) {
            assembler.slots.unreserve(slot, target.segmentIndex);
        }
        if (assembler.state == MessageAssembler.STATE_ERROR) {
            assembler.flushIfIdle();
        }
        return slot;
    }
}
