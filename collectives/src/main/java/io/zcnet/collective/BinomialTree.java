package io.zcnet.collective;

import java.lang.foreign.MemorySegment;

/**
 * Broadcast and reduce over a binomial tree rooted at the root: with ranks numbered from the root
 * ({@code v = (r - root) mod N}), v's parent is v without its lowest set bit and its children are
 * {@code v + 2^k} for every 2^k below that bit. log2(N) levels; the message is cut into slot-sized pieces
 * that flow down (broadcast) or up (reduce) piece by piece, so the levels work at once.
 *
 * <p>A rank waits only on its parent (broadcast) or its children (reduce) for data and on the other side
 * for free slots; the tree has no cycle, so neither can deadlock. A reduction combines the children in a
 * fixed order (the smallest subtree first), so every run gives the same result. One thread; nothing
 * allocates.
 */
final class BinomialTree {
    private final Links links;
    private final int rank;
    private final int size;

    BinomialTree(Links links, int rank, int size) {
        this.links = links;
        this.rank = rank;
        this.size = size;
    }

    void broadcast(MemorySegment buffer, long count, int e, int root, int slotBytes) throws CollectiveException {
        int v = Math.floorMod(rank - root, size);
        Link parent = parent(v, root);
        long perPiece = slotBytes / e;
        for (long i = 0; i < Streams.pieces(count, perPiece); i++) {
            long n = Math.min(perPiece, count - i * perPiece);
            long at = i * perPiece * e;
            MemorySegment from = parent == null ? buffer : parent.inbox;
            long fromAt = parent == null ? at : links.awaitArrival(parent, n * e);
            for (int m = lowestBit(v) >> 1; m > 0; m >>= 1) { // on their way first, as in Chain
                if (v + m < size) {
                    Link child = links.to(real(v + m, root));
                    MemorySegment.copy(from, fromAt, child.outbox, links.awaitSlot(child), n * e);
                    links.send(child, n * e);
                }
            }
            if (parent != null) {
                MemorySegment.copy(from, fromAt, buffer, at, n * e);
                parent.consume();
            }
        }
    }

    /** Reduces every rank's {@code input} into the root's {@code output} (null elsewhere; may be the input). */
    void reduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op, int root,
            int slotBytes) throws CollectiveException {
        int e = type.byteSize();
        int v = Math.floorMod(rank - root, size);
        Link parent = parent(v, root);
        long perPiece = slotBytes / e;
        for (long i = 0; i < Streams.pieces(count, perPiece); i++) {
            int n = (int) Math.min(perPiece, count - i * perPiece);
            long at = i * perPiece * e;
            MemorySegment into = parent == null ? output : parent.outbox;
            long intoAt = parent == null ? at : links.awaitSlot(parent);
            MemorySegment with = input;
            long withAt = at;
            for (int m = 1; m < lowestBit(v); m <<= 1) {
                if (v + m < size) {
                    Link child = links.to(real(v + m, root));
                    long in = links.awaitArrival(child, (long) n * e);
                    Reductions.apply(type, op, into, intoAt, with, withAt, child.inbox, in, n);
                    child.consume();
                    with = into;
                    withAt = intoAt;
                }
            }
            if (with == input) { // a leaf: nothing was reduced, the input goes up as it is
                Ring.copyUnlessSame(input, at, into, intoAt, (long) n * e);
            }
            if (parent != null) {
                links.send(parent, (long) n * e);
            }
        }
    }

    /** The link to the parent of {@code v}, null at the root. */
    private Link parent(int v, int root) {
        return v == 0 ? null : links.to(real(v - lowestBit(v), root));
    }

    /**
     * The lowest set bit of v, or for the root the first power of two at or above N, so that its children
     * are every power of two below N.
     */
    private int lowestBit(int v) {
        return v == 0 ? Integer.highestOneBit(Math.max(1, size - 1)) << 1 : Integer.lowestOneBit(v);
    }

    private int real(int v, int root) {
        return (v + root) % size;
    }
}
