package io.zcnet.collective;

/**
 * How a collective operation moves its data. Every rank must pass the same algorithm (or {@link #AUTO},
 * which picks the same on every rank from the operation, its size and the rank count); a mismatch is
 * detected and fails the operation. Which operation takes which algorithm:
 *
 * <table>
 *   <caption>algorithms per operation</caption>
 *   <tr><th>operation</th><th>algorithms</th><th>AUTO picks</th></tr>
 *   <tr><td>allreduce</td><td>RING, HALVING_DOUBLING</td><td>HALVING_DOUBLING up to
 *       {@link CommunicatorConfig#smallMessageBytes()}, RING above</td></tr>
 *   <tr><td>reduce-scatter</td><td>RING</td><td>RING</td></tr>
 *   <tr><td>allgather</td><td>RING, DIRECT</td><td>DIRECT up to the small-message size, RING above</td></tr>
 *   <tr><td>broadcast</td><td>TREE, RING, DIRECT</td><td>TREE up to the small-message size, RING above</td></tr>
 *   <tr><td>reduce</td><td>TREE, RING</td><td>TREE up to the small-message size, RING above</td></tr>
 *   <tr><td>all-to-all</td><td>DIRECT</td><td>DIRECT</td></tr>
 * </table>
 */
public enum Algorithm {
    /** Chosen by operation, size and rank count, the same on every rank. */
    AUTO,
    /**
     * Neighbour to neighbour around the ranks in order, pipelined in slot-sized pieces: each rank sends and
     * receives (N-1)/N of the data per phase, the least a point-to-point algorithm can; 2(N-1) steps.
     */
    RING,
    /**
     * Recursive halving (reduce-scatter) then recursive doubling (allgather) among the largest power of
     * two of ranks; the ranks beyond it first fold their data into a partner and get the result back at
     * the end. 2 log2(N) steps (plus 2 when N is not a power of two): for small and medium messages. Up
     * to 2 KiB, recursive doubling alone (log2(N) steps), among half the ranks when they share CPU cores
     * ({@link CoreSharing}).
     */
    HALVING_DOUBLING,
    /** A binomial tree rooted at the root: log2(N) steps, the whole message on every edge. */
    TREE,
    /** Every rank sends its part straight to every rank that needs it: one step, N-1 links at once. */
    DIRECT
}
