package io.zcnet.buffer;

import java.util.List;

/**
 * A snapshot of a {@link BufferPool}'s counters, from {@link BufferPool#stats()}.
 *
 * <p>Immutable. Exact when taken on the pool's owner thread; taken on another thread the owner's counters
 * are read without synchronisation and may lag behind by the operations in flight.
 *
 * @param classes             one entry per size class, in the pool's order
 * @param exhaustedLeases     leases that returned null because no fitting buffer was free
 * @param crossThreadReleases releases made on threads other than the owner
 */
public record PoolStats(List<ClassStats> classes, long exhaustedLeases, long crossThreadReleases) {

    /** Copies the list. */
    public PoolStats {
        classes = List.copyOf(classes);
    }

    /**
     * Counters of one size class.
     *
     * @param bufferSize bytes per buffer
     * @param count      buffers in the class
     * @param leased     buffers leased now ({@code count - available})
     * @param available  buffers free now, including those released by other threads and not yet drained
     * @param misses     times a lease found this class empty (served by a larger class, or not at all)
     */
    public record ClassStats(int bufferSize, int count, int leased, int available, long misses) {
    }

    /** {@return the number of buffers leased now over all classes} */
    public int totalLeased() {
        int total = 0;
        for (ClassStats c : classes) {
            total += c.leased();
        }
        return total;
    }

    /** {@return the number of buffers free now over all classes} */
    public int totalAvailable() {
        int total = 0;
        for (ClassStats c : classes) {
            total += c.available();
        }
        return total;
    }
}
