package io.zcnet.framing;

import io.zcnet.buffer.MemoryRegion;
import java.lang.foreign.MemorySegment;

/**
 * Where the payload of one frame must be received, filled by {@link MessageAssembler#beginPlacement}:
 * {@code length} bytes at {@code offset} of {@code segment} (native memory; {@link #address()} is what a
 * {@code recv(2)} with {@code MSG_WAITALL} is given). A reusable holder, so the direct-placement path
 * allocates nothing.
 *
 * <p>Each holder owns a copy of the frame's header and extension (the caller's header buffer may be
 * reused for the next header while the payload is still arriving) and a caller-provided <em>drain</em>:
 * scratch memory of at least one segment into which payloads with no place (duplicates) or none yet (a
 * deferred copy of a segment another placement is receiving) are received so that the byte stream stays in
 * step, and into which a payload that straddles pieces of a scattered receive is staged
 * ({@link #isStaged()}). The drain may change between placements ({@link #drain(MemorySegment)}), so a
 * receiver need hold one only while a payload goes there.
 *
 * <p>Several holders may be outstanding on one assembler at once, one per payload receive in flight
 * (typically one per subflow). Not thread-safe: a holder and its assembler belong to the queue pair's
 * receive loop thread; the kernel writing the payload is ordered before {@link MessageAssembler#commit}
 * by the completion that reports the receive done.
 */
public final class PlacementTarget {

    /** What a holder has with no drain: no bytes, which {@link MessageAssembler#beginPlacement} refuses as too small. */
    private static final MemorySegment NO_DRAIN = MemorySegment.NULL;

    MemorySegment drain = NO_DRAIN;
    /** The header and extension of the frame being placed, copied at {@code beginPlacement}. */
    final MemorySegment headerCopy = MemorySegment.ofArray(new byte[FrameHeader.LENGTH + ReadRequestExtension.LENGTH]);

    MemorySegment segment;
    long offset;
    int length;
    /** The assembler whose reservation this holder carries until commit or abort; null when none. */
    MessageAssembler owner;
    int slot;
    int segmentIndex;
    /** The posted receive the frame's message holds or takes (absolute index), or -1. */
    long receive = -1;
    /** Whether the frame names its message's receive by its RSN, so this placement holds that receive. */
    boolean holdsReceive;
    /** Whether the payload goes to the drain first and is copied to the receive's pieces at commit. */
    boolean staged;
    /** The region pinned while the payload is received into it; null when none. */
    MemoryRegion region;

    /**
     * A holder that {@link MessageAssembler#beginPlacement} fills, reused for every placement.
     *
     * @param drain native scratch memory of at least the negotiated segment size (checked by
     *              {@link MessageAssembler#beginPlacement}); its contents are never read
     * @throws IllegalArgumentException if {@code drain} is null, on the heap or read-only
     */
    public PlacementTarget(MemorySegment drain) {
        if (drain == null) {
            throw new IllegalArgumentException("drain must be writable native memory, got null");
        }
        drain(drain);
    }

    /**
     * A holder with no drain yet, for a receiver that holds its scratch memory only while a payload is received
     * into it: {@link #drain(MemorySegment)} gives it one before each {@link MessageAssembler#beginPlacement}.
     */
    public PlacementTarget() {
    }

    /**
     * Gives this holder the drain for the placements begun from now on, or takes its drain away ({@code null}),
     * so that the memory can serve elsewhere between placements. Same thread as the assembler.
     *
     * @param drain native scratch memory of at least the negotiated segment size, or {@code null} for none
     * @throws IllegalArgumentException if {@code drain} is on the heap or read-only
     * @throws IllegalStateException    if the pending placement's payload goes to the current drain (staged, or of no
     *                                  bytes): it is read at {@link MessageAssembler#commit}
     */
    public void drain(MemorySegment drain) {
        if (drain != null && (!drain.isNative() || drain.isReadOnly())) {
            throw new IllegalArgumentException("drain must be writable native memory, got " + drain);
        }
        if (owner != null && segment == this.drain) {
            throw new IllegalStateException("the pending placement receives into the drain: " + this);
        }
        this.drain = drain == null ? NO_DRAIN : drain;
    }

    /** {@return the memory the payload goes to: a posted receive's region, a registered region, or the drain} */
    public MemorySegment segment() {
        return segment;
    }

    /** {@return where in {@link #segment()} the payload's first byte goes} */
    public long offset() {
        return offset;
    }

    /** {@return the payload bytes to receive, exactly}; 0 for frames without payload. */
    public int length() {
        return length;
    }

    /** {@return {@code segment().address() + offset()}}: the buffer address for {@code recv(2)}. */
    public long address() {
        return segment.address() + offset;
    }

    /**
     * {@return whether the payload is received into the drain and copied, at {@link MessageAssembler#commit}, into the
     * several pieces of the posted receive it straddles (its bytes are then not placed by the kernel)}
     */
    public boolean isStaged() {
        return staged;
    }

    /**
     * {@return whether this holder carries a placement that still needs {@link MessageAssembler#commit} or {@code
     * abort}}
     */
    public boolean isPending() {
        return owner != null;
    }

    /** {@return the drain given at construction or by {@link #drain(MemorySegment)}, or {@code null} if it has none} */
    public MemorySegment drain() {
        return drain == NO_DRAIN ? null : drain;
    }

    void describe(MemorySegment segment, long offset, int length) {
        this.segment = segment;
        this.offset = offset;
        this.length = length;
    }

    void clear() {
        segment = null;
        offset = 0;
        length = 0;
        owner = null;
        staged = false;
    }

    @Override
    public String toString() {
        return "PlacementTarget[" + (owner != null ? "pending " : "") + (staged ? "staged " : "") + length + " bytes at " + offset + " of " + segment + "]";
    }
}
