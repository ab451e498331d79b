package io.zcnet.collective;

import java.lang.foreign.MemorySegment;

/**
 * Broadcast along the ring from the root: root, root+1, ..., root-1, each rank passing every slot-sized
 * piece on as soon as it lands. Every link carries the message once, so a large broadcast takes about the
 * time of one transfer plus N-1 pieces, where a tree takes log2(N) transfers. A chain has no cycle, so it
 * cannot deadlock. One thread; nothing allocates.
 */
final class Chain {
    private final Links links;
    private final int rank;
    private final int size;

    Chain(Links links, int rank, int size) {
        this.links = links;
        this.rank = rank;
        this.size = size;
    }

    void broadcast(MemorySegment buffer, long count, int e, int root, int slotBytes) throws CollectiveException {
        int v = Math.floorMod(rank - root, size);
        Link previous = v == 0 ? null : links.to((rank - 1 + size) % size);
        Link next = v == size - 1 ? null : links.to((rank + 1) % size);
        long perPiece = slotBytes / e;
        long pieces = Streams.pieces(count, perPiece);
        for (long i = 0; i < pieces; i++) {
            long bytes = Math.min(perPiece, count - i * perPiece) * e;
            long at = i * perPiece * e;
            MemorySegment from = previous == null ? buffer : previous.inbox;
            long fromAt = previous == null ? at : links.awaitArrival(previous, bytes);
            if (next != null) { // on its way first: the copy into the buffer overlaps the next hop
                MemorySegment.copy(from, fromAt, next.outbox, links.awaitSlot(next), bytes);
                links.send(next, bytes);
            }
            if (previous != null) {
                MemorySegment.copy(from, fromAt, buffer, at, bytes);
                previous.consume();
            }
        }
    }
}
