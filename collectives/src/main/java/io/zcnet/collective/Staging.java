package io.zcnet.collective;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpContext;

import java.lang.foreign.Arena;

/**
 * A rank's staging memory: the inbox its peers WRITE into (remote write allowed, its key published at the
 * rendezvous) and the outbox it WRITEs from (local only), each one registered region of one area per peer
 * ({@link Link} draws the layout). Page-aligned, so every slot is aligned for every element type.
 *
 * <p>The areas of the two ring neighbours, r - 1 and r + 1, are {@link #RING_DEPTH} times as deep as the
 * others ({@link #ringSlots}): a ring carries nearly every byte of a large operation over those two links
 * alone, and a slice forwarded on arrival keeps the link busy only while the slots in flight cover the time
 * from a slice's send to its slot coming back, its acknowledgement queued behind the neighbour's own data and
 * TCP's recovery of a lost segment included. With every link at one rate a link that idled cannot catch up,
 * so each such gap costs the whole ring its length (docs/collectives.md, "Networks that are not kind"). The
 * other peers' areas keep the configured depth, so the memory grows by a constant, not with the ranks. Both
 * sides of a link compute the same layout from the size and the slots, which the rendezvous checks.
 *
 * <p>Created and closed by one thread; the regions are used by the links' owner and the loop thread.
 */
final class Staging implements AutoCloseable {
    /** How many times the configured slots a ring neighbour's area holds. */
    static final int RING_DEPTH = 4;

    final int rank;
    private final int size;
    /** Slots of the areas of peers that are not ring neighbours: the configuration's. */
    final int slots;
    final int ringSlots;
    final int slotBytes;
    private final Arena arena = Arena.ofShared();
    final MemoryRegion inbox;
    final MemoryRegion outbox;
    private final QpContext context;

    Staging(QpContext context, int rank, int size, int slots, int slotBytes) {
        this.context = context;
        this.rank = rank;
        this.size = size;
        this.slots = slots;
        this.ringSlots = ringSlots(slots);
        this.slotBytes = slotBytes;
        long bytes = Math.max(1, areaOf(size, rank));
        try {
            this.inbox = context.register(arena.allocate(bytes, 4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            this.outbox = context.register(arena.allocate(bytes, 4096), 0);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** Byte offset of the area that belongs to {@code peer}, in the inbox and the outbox alike. */
    long areaOf(int peer) {
        return areaOf(peer, rank);
    }

    /** Byte offset of {@code peer}'s area in the staging memory of {@code owner} (at {@code size}: the end). */
    long areaOf(int peer, int owner) {
        long at = 0;
        for (int p = 0; p < peer; p++) {
            if (p != owner) {
                at += (long) slotsBetween(owner, p) * slotBytes;
            }
        }
        return at;
    }

    /** Slots of the area of {@code peer}, in this rank's staging memory and in the peer's area for this rank alike. */
    int slotsFor(int peer) {
        return slotsBetween(rank, peer);
    }

    private int slotsBetween(int owner, int peer) {
        boolean neighbours = peer == (owner + 1) % size || owner == (peer + 1) % size;
        return neighbours ? ringSlots : slots;
    }

    /** The slots of a ring neighbour's area for {@code slots} configured: {@link #RING_DEPTH} times, at most the most allowed. */
    static int ringSlots(int slots) {
        return Math.min(RING_DEPTH * slots, CommunicatorConfig.MAX_SLOTS);
    }

    /** Whether {@link #close} freed the memory. Any thread. */
    boolean isFreed() {
        return !arena.scope().isAlive();
    }

    /** Deregisters and frees the memory; the queue pairs that used it must be closed. */
    @Override
    public void close() {
        context.deregister(inbox);
        context.deregister(outbox);
        arena.close();
    }
}
