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
 * <p>Created and closed by one thread; the regions are used by the links' owner and the loop thread.
 */
final class Staging implements AutoCloseable {
    final int rank;
    final int slots;
    final int slotBytes;
    private final Arena arena = Arena.ofShared();
    final MemoryRegion inbox;
    final MemoryRegion outbox;
    private final QpContext context;

    Staging(QpContext context, int rank, int size, int slots, int slotBytes) {
        this.context = context;
        this.rank = rank;
        this.slots = slots;
        this.slotBytes = slotBytes;
        long bytes = Math.max(1, (long) (size - 1) * slots * slotBytes);
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

    /** Byte offset of {@code peer}'s area in the staging memory of {@code owner}. */
    long areaOf(int peer, int owner) {
        return (long) (peer < owner ? peer : peer - 1) * slots * slotBytes;
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
