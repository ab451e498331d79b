package io.zcnet.collective;

import java.lang.foreign.MemorySegment;

/**
 * The ring algorithms: the data is cut into N blocks, rank r sends only to r+1 and receives only from r-1,
 * and each block travels the ring. In the reduce-scatter phase the block a rank receives at step s is
 * reduced with its own part and passed on, so after N-1 steps block r is reduced over all ranks at rank r;
 * in the allgather phase the finished blocks travel once more around the ring. Each rank moves (N-1)/N of
 * the data per phase, the least possible, and every phase streams: blocks are cut into slot-sized slices
 * ({@link Slicing}), and a slice is reduced and sent on as soon as it lands, while the next ones are on the
 * wire. The loops follow one another without a pause: a loop's last step only receives, so while it runs
 * the rank already sends the next loop's first slices, one for each slice it takes, and its link to the
 * right stays busy across the seam (otherwise every loop would end with the link idle for the time the
 * last slice takes from the left neighbour's queue to this rank's next send).
 *
 * <p>Step s of rank r carries block (r - 1 - s) mod N (the reduce-scatter phase is steps 0 .. N-2, the
 * allgather phase N-1 .. 2N-3), so the block it receives in step s is the one it sends in step s + 1. One
 * schedule serves four operations:
 * <ul>
 *   <li>allreduce: both phases;</li>
 *   <li>reduce-scatter: the first phase; block r's result goes to the output instead of on;</li>
 *   <li>allgather: the second phase, rank r's own block starting where the first phase would have ended;</li>
 *   <li>reduce: both phases, but a finished block only travels until it reaches the root.</li>
 * </ul>
 *
 * <h2>Why it cannot deadlock</h2>
 * A rank works in program order (loop, step, slice; the next loop's first slices interleaved with the last
 * step's, each after the slice it follows), and a slice it consumes frees its inbox slot at once: the
 * reduction writes into an outbox slot, not in place. So a rank waits only for the left neighbour's next
 * message or for an outbox slot, which frees when the right neighbour has taken an earlier message. A
 * rank sends at most {@code pieces} messages more than it has received (the interleaving keeps that: one
 * sent for one taken); with {@code pieces < 2 slots} the rank that is furthest behind can always make its
 * next move (its left neighbour has sent what it needs, its right neighbour has consumed enough), so the
 * ring as a whole always moves.
 *
 * <p>One thread at a time; nothing allocates.
 */
final class Ring {
    static final int ALLREDUCE = 0;
    static final int REDUCE_SCATTER = 1;
    static final int ALLGATHER = 2;
    static final int REDUCE = 3;

    private final Links links;
    private final int rank;
    private final int size;
    private final Slicing slicing;

    /** @param slicing the blocks, which the caller lays out before each operation ({@link OperationPlan}) */
    Ring(Links links, int rank, int size, Slicing slicing) {
        this.links = links;
        this.rank = rank;
        this.size = size;
        this.slicing = slicing;
    }

    /**
     * Runs {@code mode} over the blocks {@link #slicing} holds (set by the caller), cut into slices as
     * {@code slots} slots of {@code slotBytes} would cut them: {@code input} holds every
     * block (only block r for allgather), {@code output} every block (only block r for reduce-scatter; null
     * for reduce on a rank other than {@code root}). Input and output may be the same memory.
     */
    void run(int mode, MemorySegment input, MemorySegment output, DataType type, ReduceOp op, int root, int slots,
            int slotBytes) throws CollectiveException {
        int e = type.byteSize();
        Link left = links.to((rank - 1 + size) % size);
        Link right = links.to((rank + 1) % size);
        // Slices cut as for `slots`, as many in flight as the ring links' deeper areas hold (Staging).
        slicing.plan(e, slots, Math.min(left.slots(), right.slots()), slotBytes);
        boolean reducing = mode != ALLGATHER;
        int firstStep = reducing ? 0 : size - 1;
        int lastStep = mode == REDUCE_SCATTER ? size - 2 : 2 * size - 3;
        int lastIteration = mode == REDUCE_SCATTER ? size - 1 : 2 * size - 2;
        int injected = block(firstStep);
        for (int i = 0; i < slicing.pieces; i++) {
            inject(mode, injected, 0, i, input, output, right, e);
        }
        for (long loop = 0; loop < slicing.loops; loop++) {
            boolean more = loop + 1 < slicing.loops;
            int injectedNext = 0;
            for (int s = firstStep + 1; s <= lastIteration; s++) {
                int b = block(s);
                if (mode == REDUCE && s >= size && !travels(s - 1, b, root)) {
                    continue; // the left neighbour holds this block back: it has reached the root
                }
                boolean forward = s <= lastStep && (mode != REDUCE || s < size - 1 || travels(s, b, root));
                for (int i = 0; i < slicing.pieces; i++) {
                    long at = slicing.first(b, loop, i);
                    int n = slicing.length(b, loop, i);
                    long bytes = (long) n * e;
                    long in = links.awaitArrival(left, bytes);
                    long out = output == null ? -1 : outputOffset(mode, b, at) * e;
                    // What goes on leaves first; the copy to the output overlaps its trip to the right.
                    if (reducing && s < size) {
                        long x = inputOffset(mode, b, at) * e;
                        if (forward) {
                            long slot = links.awaitSlot(right);
                            Reductions.apply(type, op, right.outbox, slot, left.inbox, in, input, x, n);
                            left.consume();
                            links.send(right, bytes);
                            if (s == size - 1 && mode != REDUCE) {
                                MemorySegment.copy(right.outbox, slot, output, out, bytes);
                            }
                        } else {
                            Reductions.apply(type, op, output, out, left.inbox, in, input, x, n);
                            left.consume();
                        }
                    } else {
                        if (forward) {
                            MemorySegment.copy(left.inbox, in, right.outbox, links.awaitSlot(right), bytes);
                            links.send(right, bytes);
                        }
                        if (output != null && (mode != REDUCE || rank == root)) {
                            MemorySegment.copy(left.inbox, in, output, out, bytes);
                        }
                        left.consume();
                    }
                    if (!forward && more && s == lastIteration) {
                        // The last step only receives: the next loop's slices go out meanwhile, one per slice
                        // taken, so the link to the right never waits for this loop to end.
                        inject(mode, injected, loop + 1, injectedNext++, input, output, right, e);
                    }
                }
            }
            while (more && injectedNext < slicing.pieces) {
                inject(mode, injected, loop + 1, injectedNext++, input, output, right, e);
            }
        }
    }

    /** A loop's first step: sends slice {@code i} of loop {@code loop} of this rank's own block {@code b} on. */
    private void inject(int mode, int b, long loop, int i, MemorySegment input, MemorySegment output, Link right, int e)
            throws CollectiveException {
        long at = slicing.first(b, loop, i);
        int n = slicing.length(b, loop, i);
        long from = inputOffset(mode, b, at) * e;
        MemorySegment.copy(input, from, right.outbox, links.awaitSlot(right), (long) n * e);
        links.send(right, (long) n * e);
        if (mode == ALLGATHER) {
            copyUnlessSame(input, from, output, outputOffset(mode, b, at) * e, (long) n * e);
        }
    }

    /** The block rank r sends in step {@code step}. */
    private int block(int step) {
        return Math.floorMod(rank - 1 - step, size);
    }

    /**
     * Whether block {@code b}, finished at rank b, is passed on in the allgather-phase step {@code step}
     * of a reduce: until it has reached the root, it is {@code step - (N-1)} hops from b.
     */
    private boolean travels(int step, int b, int root) {
        return step - (size - 1) < Math.floorMod(root - b, size);
    }

    /** Where in the input the element {@code at} of block {@code b} is: allgather's input is block r alone. */
    private long inputOffset(int mode, int b, long at) {
        return mode == ALLGATHER ? at - slicing.starts[rank] : at;
    }

    /** Where in the output: reduce-scatter's output is block r alone. */
    private long outputOffset(int mode, int b, long at) {
        return mode == REDUCE_SCATTER ? at - slicing.starts[rank] : at;
    }

    /** Copies unless source and destination are the same memory (an operation in place). */
    static void copyUnlessSame(MemorySegment src, long from, MemorySegment dst, long to, long bytes) {
        if (src.address() + from != dst.address() + to) {
            MemorySegment.copy(src, from, dst, to, bytes);
        }
    }
}
