package io.zcnet.collective;

import java.lang.foreign.MemorySegment;

/**
 * Independent streams to and from any set of peers, run together: per peer, at most one range of elements
 * to send and one to receive (copied, or reduced with another segment at the same offset). Nothing sent
 * depends on anything received in the same run, and a received piece goes straight to its place, needing
 * no outbox slot, so each stream moves whatever the others do and a run cannot deadlock. Pieces are a slot
 * each; a stream of 0 elements is one empty message, which the receiver still checks.
 *
 * <p>Serves the algorithms whose steps are such exchanges: halving-doubling (one peer a step), direct
 * allgather and broadcast, all-to-all (every peer at once). The peers are visited from {@code rank + 1}
 * on, one piece each way per visit, so no link starves the others. Reused for every run; one thread; nothing
 * allocates.
 */
final class Streams {
    private static final long NONE = -1;

    private final Links links;
    private final int rank;
    private final int size;
    private final MemorySegment[] sendFrom;
    private final long[] sendAt;
    private final long[] sendCount;
    private final long[] sent;
    private final MemorySegment[] receiveInto;
    private final MemorySegment[] reduceWith;
    private final long[] receiveAt;
    private final long[] receiveCount;
    private final long[] received;
    /** What the schedule's hint says to each peer ({@link Immediate#carriesHint}), and what each peer's said. */
    private final int[] sendHint;
    private final int[] receivedHint;

    Streams(Links links, int rank, int size) {
        this.links = links;
        this.rank = rank;
        this.size = size;
        this.sendFrom = new MemorySegment[size];
        this.sendAt = new long[size];
        this.sendCount = new long[size];
        this.sent = new long[size];
        this.receiveInto = new MemorySegment[size];
        this.reduceWith = new MemorySegment[size];
        this.receiveAt = new long[size];
        this.receiveCount = new long[size];
        this.received = new long[size];
        this.sendHint = new int[size];
        this.receivedHint = new int[size];
        clear();
    }

    /** Forgets every stream (and the segments they named). */
    Streams clear() {
        for (int p = 0; p < size; p++) {
            sendCount[p] = NONE;
            receiveCount[p] = NONE;
            sendFrom[p] = null;
            receiveInto[p] = null;
            reduceWith[p] = null;
            sendHint[p] = 0;
            receivedHint[p] = 0;
        }
        return this;
    }

    /** Sends {@code count} elements at element {@code at} of {@code from} to {@code peer}. */
    Streams send(int peer, MemorySegment from, long at, long count) {
        sendFrom[peer] = from;
        sendAt[peer] = at;
        sendCount[peer] = count;
        return this;
    }

    /** Tells {@code peer} {@code hint} with the message sent to it, where the schedule carries hints. */
    Streams hint(int peer, int hint) {
        sendHint[peer] = hint;
        return this;
    }

    /** {@return the hint of the last message received from {@code peer} since {@link #clear()}: 0 if none} */
    int receivedHint(int peer) {
        return receivedHint[peer];
    }

    /** Receives {@code count} elements from {@code peer} into {@code into} at element {@code at}. */
    Streams receive(int peer, MemorySegment into, long at, long count) {
        receiveInto[peer] = into;
        receiveAt[peer] = at;
        receiveCount[peer] = count;
        return this;
    }

    /** As {@link #receive}, storing {@code with[i] op received[i]} instead of the received elements. */
    Streams receiveReducing(int peer, MemorySegment into, long at, long count, MemorySegment with) {
        receive(peer, into, at, count);
        reduceWith[peer] = with;
        return this;
    }

    /** Runs every stream to its end; {@code op} is what reducing streams combine with (null when none do). */
    void run(DataType type, ReduceOp op, int slotBytes) throws CollectiveException {
        int e = type.byteSize();
        long perPiece = slotBytes / e;
        long left = 0;
        for (int p = 0; p < size; p++) {
            sent[p] = 0;
            received[p] = 0;
            left += pieces(sendCount[p], perPiece) + pieces(receiveCount[p], perPiece);
        }
        while (left > 0) {
            boolean moved = false;
            for (int k = 1; k < size; k++) {
                int p = (rank + k) % size;
                Link link = links.to(p);
                if (sent[p] < pieces(sendCount[p], perPiece) && link.canSend()) {
                    long n = Math.min(perPiece, sendCount[p] - sent[p] * perPiece);
                    MemorySegment.copy(sendFrom[p], (sendAt[p] + sent[p] * perPiece) * e, link.outbox, link.sendOffset(),
                            n * e);
                    links.send(link, n * e, sendHint[p]);
                    sent[p]++;
                    left--;
                    moved = true;
                }
                if (received[p] < pieces(receiveCount[p], perPiece)) {
                    long n = Math.min(perPiece, receiveCount[p] - received[p] * perPiece);
                    if (links.arrived(link, n * e)) {
                        place(p, link, n, perPiece, type, op);
                        received[p]++;
                        left--;
                        moved = true;
                    }
                }
            }
            if (!moved) {
                links.await();
            }
        }
    }

    private void place(int p, Link link, long n, long perPiece, DataType type, ReduceOp op) {
        int e = type.byteSize();
        long at = (receiveAt[p] + received[p] * perPiece) * e;
        receivedHint[p] = links.hint(link);
        if (reduceWith[p] != null) {
            Reductions.apply(type, op, receiveInto[p], at, reduceWith[p], at, link.inbox, link.arrivalOffset(), (int) n);
        } else {
            MemorySegment.copy(link.inbox, link.arrivalOffset(), receiveInto[p], at, n * e);
        }
        link.consume();
    }

    /** Messages a stream of {@code count} elements takes: at least one, so an empty stream is still checked. */
    static long pieces(long count, long perPiece) {
        return count < 0 ? 0 : Math.max(1, Slicing.ceilDiv(count, perPiece));
    }
}
