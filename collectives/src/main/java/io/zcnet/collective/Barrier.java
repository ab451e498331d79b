package io.zcnet.collective;

/**
 * The dissemination barrier: in round k every rank sends an empty message to rank {@code r + 2^k} and waits
 * for one from {@code r - 2^k}. After ceil(log2 N) rounds each rank has heard, directly or through others,
 * from every rank, so none leaves before all have entered. One thread; nothing allocates.
 */
final class Barrier {
    private final Links links;
    private final int rank;
    private final int size;

    Barrier(Links links, int rank, int size) {
        this.links = links;
        this.rank = rank;
        this.size = size;
    }

    void run() throws CollectiveException {
        for (int distance = 1; distance < size; distance <<= 1) {
            Link to = links.to((rank + distance) % size);
            Link from = links.to((rank - distance + size) % size);
            links.awaitSlot(to);
            links.send(to, 0);
            links.awaitArrival(from, 0);
            from.consume();
        }
    }
}
