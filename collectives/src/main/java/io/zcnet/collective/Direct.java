package io.zcnet.collective;

import java.lang.foreign.MemorySegment;

/**
 * The direct algorithms: every rank sends its part straight to every rank that needs it, all links at once
 * ({@link Streams}). One step, so the latency of one message, at the price of N-1 copies of what a rank
 * sends into N-1 outboxes: for small messages, and for all-to-all, where each part has one destination
 * anyway. One thread; nothing allocates.
 */
final class Direct {
    private final Streams streams;
    private final int rank;
    private final int size;

    Direct(Streams streams, int rank, int size) {
        this.streams = streams;
        this.rank = rank;
        this.size = size;
    }

    /** Rank r's {@code input} (block r) to every rank's {@code output} at {@code starts[r]}. */
    void allgather(MemorySegment input, MemorySegment output, long[] starts, DataType type, int slotBytes)
            throws CollectiveException {
        long mine = starts[rank + 1] - starts[rank];
        Ring.copyUnlessSame(input, 0, output, starts[rank] * type.byteSize(), mine * type.byteSize());
        streams.clear();
        for (int p = 0; p < size; p++) {
            if (p != rank) {
                streams.send(p, input, 0, mine).receive(p, output, starts[p], starts[p + 1] - starts[p]);
            }
        }
        streams.run(type, null, slotBytes);
    }

    void broadcast(MemorySegment buffer, long count, DataType type, int root, int slotBytes) throws CollectiveException {
        streams.clear();
        if (rank == root) {
            for (int p = 0; p < size; p++) {
                if (p != rank) {
                    streams.send(p, buffer, 0, count);
                }
            }
        } else {
            streams.receive(root, buffer, 0, count);
        }
        streams.run(type, null, slotBytes);
    }

    /** Block p of {@code input} (at {@code sendStarts[p]}) to rank p, whose block r of its output receives it. */
    void allToAll(MemorySegment input, long[] sendStarts, MemorySegment output, long[] receiveStarts, DataType type,
            int slotBytes) throws CollectiveException {
        int e = type.byteSize();
        MemorySegment.copy(input, sendStarts[rank] * e, output, receiveStarts[rank] * e,
                (sendStarts[rank + 1] - sendStarts[rank]) * e);
        streams.clear();
        for (int p = 0; p < size; p++) {
            if (p != rank) {
                streams.send(p, input, sendStarts[p], sendStarts[p + 1] - sendStarts[p])
                        .receive(p, output, receiveStarts[p], receiveStarts[p + 1] - receiveStarts[p]);
            }
        }
        streams.run(type, null, slotBytes);
    }
}
