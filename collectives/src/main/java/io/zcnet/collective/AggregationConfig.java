package io.zcnet.collective;

import java.net.InetSocketAddress;
import java.util.List;

/**
 * Whether and how a communicator's allreduces go through an {@link Aggregator}
 * ({@link CommunicatorConfig#withAggregators}); immutable, thread-safe. Every rank of the job must be given the
 * same: the job number, the aggregators in the same order, the same slots and chunk size.
 *
 * @param job         the job number the ranks share at the aggregator (0 .. 65535), proven by the communicator's
 *                    job secret when it has one
 * @param aggregators where aggregators listen; empty: none, every operation runs on the hosts. The one used is
 *                    the closest by what the communicator knows of the topology ({@link #closest})
 * @param slots       chunks in flight at once, asked of the aggregator (1 .. 64); it may grant fewer
 * @param chunkBytes  bytes per chunk asked (a multiple of 64, 64 .. 8 MiB); it may grant smaller ones
 */
public record AggregationConfig(int job, List<InetSocketAddress> aggregators, int slots, int chunkBytes) {

    /** No aggregation: every operation runs on the hosts. */
    public static final AggregationConfig NONE = new AggregationConfig(0, List.of(), 8, 256 * 1024);

    /**
     * Checks every component and copies the list.
     *
     * @throws IllegalArgumentException if a component is out of range, or an address is null or unresolved
     */
    public AggregationConfig {
        if (job < 0 || job > 0xFFFF) {
            throw new IllegalArgumentException("job " + job + " outside 0..65535");
        }
        if (aggregators == null) {
            throw new IllegalArgumentException("aggregators is required (empty for none)");
        }
        for (InetSocketAddress a : aggregators) {
            if (a == null || a.isUnresolved()) {
                throw new IllegalArgumentException("cannot resolve the aggregator address " + a);
            }
        }
        aggregators = List.copyOf(aggregators);
        if (slots < 1 || slots > CommunicatorConfig.MAX_SLOTS) {
            throw new IllegalArgumentException("slots " + slots + " outside 1.." + CommunicatorConfig.MAX_SLOTS);
        }
        if (chunkBytes < 64 || chunkBytes > NacaHeader.MAX_CHUNK_BYTES || chunkBytes % 64 != 0) {
            throw new IllegalArgumentException("chunkBytes " + chunkBytes + " must be a multiple of 64 in 64.."
                    + NacaHeader.MAX_CHUNK_BYTES);
        }
    }

    /** {@return whether any aggregator is configured} */
    public boolean isEnabled() {
        return !aggregators.isEmpty();
    }

    /**
     * {@return the index in {@code candidates} of the aggregator closest to the ranks} The only topology a
     * communicator knows is its ranks' addresses (from the rendezvous), the same on every rank, so every rank
     * picks alike: the aggregator whose address shares the most leading bits with the ranks' addresses, summed
     * over the ranks (one on their subnet before one further away), ties and no information (no address shares a
     * bit, or another address family) going to the first listed.
     *
     * @param candidates the aggregators still to be tried, in configured order; not empty
     * @param ranks      every rank's listen address
     */
    static int closest(List<InetSocketAddress> candidates, InetSocketAddress[] ranks) {
        int best = 0;
        long bestScore = -1;
        for (int i = 0; i < candidates.size(); i++) {
            byte[] a = candidates.get(i).getAddress().getAddress();
            long score = 0;
            for (InetSocketAddress r : ranks) {
                score += r == null ? 0 : commonPrefixBits(a, r.getAddress().getAddress());
            }
            if (score > bestScore) {
                best = i;
                bestScore = score;
            }
        }
        return best;
    }

    private static int commonPrefixBits(byte[] a, byte[] b) {
        if (a.length != b.length) {
            return 0;
        }
        for (int i = 0; i < a.length; i++) {
            int diff = (a[i] ^ b[i]) & 0xFF;
            if (diff != 0) {
                return i * 8 + Integer.numberOfLeadingZeros(diff) - 24;
            }
        }
        return a.length * 8;
    }
}
