package io.zcnet.framing;

import java.lang.foreign.MemorySegment;

/**
 * The direct placements in flight (docs/architecture.md, the receive path): what
 * {@link MessageAssembler#beginPlacement} hands out in a {@link PlacementTarget} and
 * {@link MessageAssembler#commit} or {@link MessageAssembler#abort} takes back. While one is in flight the
 * kernel may be writing its payload, so it <em>reserves</em> its segment in the {@link MessageSlots} (another
 * copy of the segment is kept waiting, the message cannot complete), holds the receive its frame names by
 * its RSN (no other message can take that receive, and so none can complete it, while the kernel writes
 * into it) and {@linkplain io.zcnet.buffer.MemoryRegion#pin() pins} its region (which cannot be
 * deregistered under the write). This class keeps those promises and the count of placements in flight;
 * what a frame means is judged elsewhere. Not thread-safe: owned by one {@link MessageAssembler}.
 */
final class DirectPlacements {

    private final MessageSlots slots;
    private final int segmentSize;
    private int pending;

    DirectPlacements(MessageSlots slots, int segmentSize) {
        this.slots = slots;
        this.segmentSize = segmentSize;
    }

    /** Placements begun and not yet committed or aborted. */
    int pending() {
        return pending;
    }

    /**
     * Refuses what no placement can begin from: null or out-of-range arguments, a target still holding a
     * placement, a drain smaller than a segment (a payload that has no place is received there).
     */
    void checkBegin(MemorySegment headers, long offset, long available, PlacementTarget target) {
        if (headers == null || target == null) {
            throw new IllegalArgumentException("headers and target must not be null");
        }
        if (offset < 0 || available < 0 || offset > headers.byteSize() || available > headers.byteSize() - offset) {
            throw new IllegalArgumentException("range " + offset + "+" + available + " outside the header segment");
        }
        if (target.owner != null) {
            throw new IllegalStateException("target still holds a placement: commit or abort it first: " + target);
        }
        if (target.drain.byteSize() < segmentSize) {
            throw new IllegalArgumentException("drain of " + target.drain.byteSize() + " bytes is smaller than the "
                    + segmentSize + "-byte segment size");
        }
    }

    /**
     * Starts the placement of the frame in {@code header}, which the judge accepted: pins the region its
     * payload goes to, reserves its segment, holds the receive it names and points {@code target} at the
     * payload's place (0 bytes of the drain for a frame without one; the drain, staged, for a payload
     * scattered over several pieces, which the kernel then writes nowhere but the drain).
     *
     * @return false, with nothing changed, if the region was deregistered since it was judged
     */
    boolean start(MessageAssembler owner, PlacementTarget target, FrameJudge verdict, FrameHeader header, int length) {
        if (verdict.destinationRegion != null && !verdict.destinationRegion.pin()) {
            return false;
        }
        target.region = verdict.destinationRegion;
        target.slot = verdict.slot;
        if (verdict.slot >= 0) {
            target.segmentIndex = header.messageOffset() / segmentSize;
            slots.reserve(verdict.slot, target.segmentIndex);
        }
        target.holdsReceive = Opcode.rsnOffset(header.opcode()) >= 0;
        if (target.holdsReceive) {
            slots.holdReceive(verdict.slot, verdict.receive);
        }
        target.receive = verdict.receive;
        target.owner = owner;
        pending++;
        target.staged = verdict.scatter != null;
        if (verdict.destination != null) {
            target.describe(verdict.destination, verdict.destinationOffset, length);
        } else {
            target.describe(target.drain, 0, target.staged ? length : 0);
        }
        return true;
    }

    /**
     * Ends the placement {@code target} holds: drops its reservation, its hold on a receive and its pin.
     *
     * @return its message slot, or -1 for a frame of no message (an ACKNOWLEDGE)
     * @throws IllegalStateException if {@code target} holds no placement of {@code owner}
     */
    int end(MessageAssembler owner, PlacementTarget target) {
        if (target == null) {
            throw new IllegalArgumentException("target is null");
        }
        if (target.owner != owner) {
            throw new IllegalStateException(target.owner == null ? "target holds no placement: " + target
                    : "target holds a placement of another assembler: " + target);
        }
        target.owner = null;
        pending--;
        if (target.region != null) {
            target.region.unpin();
            target.region = null;
        }
        if (target.slot >= 0) {
            slots.unreserve(target.slot, target.segmentIndex);
        }
        if (target.holdsReceive) {
            slots.releaseReceive(target.slot);
        }
        return target.slot;
    }
}
