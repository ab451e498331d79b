package io.zcnet.collective;

import io.zcnet.qp.QpContext;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A communicator's allreduces through an {@link Aggregator} (collectives.md, "Aggregation in the network"), and
 * what its ranks do, all alike, when the aggregator cannot or can no longer serve them.
 *
 * <h2>One operation</h2>
 * The rank joins the job at the closest aggregator when it has not yet (its first aggregated allreduce), streams
 * its chunks, and then every rank votes, a two-element allreduce on the hosts of the largest of
 * {@code (state, chunk)}: state 0 when it has the whole result, 1 when it did not try (the aggregator does not
 * reduce the type), 2 when its join failed, 3 when it failed after it had sent chunks; chunk the granted chunk
 * size, or 0. A vote is needed because a failing aggregator leaves the ranks in different places: one may have
 * every result, another none. By the vote's largest state every rank does the same:
 * <ul>
 *   <li>0: done;</li>
 *   <li>1, 2: nobody has any result, so the hosts run the whole allreduce; on 2 every rank drops the aggregator
 *   (and tries the next closest one at its next allreduce);</li>
 *   <li>3: the ranks tell each other (one more allreduce on the hosts, of two ints per chunk) which chunks each
 *   holds; a chunk every rank holds is done, one that some rank holds is broadcast from the lowest such rank,
 *   and the others, whose inputs no result has touched (not even in place), are allreduced on the hosts. So
 *   every chunk is counted once, whichever ranks the aggregator reached before it died. Then every rank drops
 *   the aggregator.</li>
 * </ul>
 * A rank that fails closes its queue pair to the aggregator at once, so the aggregator ends the job and the
 * others stop waiting for results that cannot come.
 *
 * <p>The caller's thread, inside its admission; the vote's segment is made once, so an operation allocates
 * nothing until one fails. Operations the aggregator does not take are left to the hosts without a vote, once
 * every rank has joined (they all hold the same ACCEPT, so they decide alike), and logged once per type and
 * reduction.
 */
final class AggregatedAllreduce implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.zcnet.collective");
    private static final int DONE = 0;
    private static final int SKIPPED = 1;
    private static final int JOIN_FAILED = 2;
    private static final int FAILED = 3;

    private final int rank;
    private final int size;
    private final QpContext context;
    private final CommunicatorConfig config;
    private final InetSocketAddress[] rankAddresses;
    private final OperationPlan plan;
    private final ScheduleRunner runner;
    /** The aggregators not given up on, in configured order. */
    private final List<InetSocketAddress> remaining;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment vote = arena.allocate(2 * Long.BYTES, Long.BYTES);
    /** Which types and reductions the aggregator does not take were logged already, by ordinal. */
    private final boolean[][] loggedSkips = new boolean[DataType.values().length][ReduceOp.values().length];
    private AggregatorLink link;

    AggregatedAllreduce(int rank, int size, QpContext context, CommunicatorConfig config,
            InetSocketAddress[] rankAddresses, OperationPlan plan, ScheduleRunner runner) {
        this.rank = rank;
        this.size = size;
        this.context = context;
        this.config = config;
        this.rankAddresses = rankAddresses;
        this.plan = plan;
        this.runner = runner;
        this.remaining = new ArrayList<>(config.aggregation().aggregators());
    }

    /** Whether an allreduce may go to an aggregator: one is configured, not all given up on, and not alone. */
    boolean applies() {
        return size > 1 && (link != null || !remaining.isEmpty());
    }

    /** Performs the allreduce, whose arguments the plan has checked, through the aggregator or on the hosts. */
    void allreduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op)
            throws CollectiveException {
        long bytes = count * type.byteSize();
        if (link != null && !link.takes(type, op)) {
            if (!loggedSkips[type.ordinal()][op.ordinal()]) {
                loggedSkips[type.ordinal()][op.ordinal()] = true;
                LOG.log(System.Logger.Level.INFO, "rank " + rank + ": the aggregator at " + link.address
                        + " does not reduce " + type + " by " + op + ": such allreduces run on the hosts");
            }
            onHosts(input, output, count, type, op);
            return;
        }
        int state = DONE;
        String why = null;
        long grantedChunk = 0;
        boolean[] held = null;
        InetSocketAddress at = link != null ? link.address
                : remaining.get(AggregationConfig.closest(remaining, rankAddresses));
        try {
            if (link == null) {
                state = JOIN_FAILED;
                link = join(at);
            }
            grantedChunk = link.chunkBytes();
            if (!link.takes(type, op)) {
                state = SKIPPED;
            } else {
                state = FAILED;
                link.allreduce(input, output, bytes, type, op, config.timeout().toNanos() / 2);
                state = DONE;
            }
        } catch (AggregatorLink.Failure | IOException | RuntimeException e) {
            why = e.getMessage();
            if (state == FAILED) {
                held = new boolean[(int) link.chunkCount(bytes)];
                for (int i = 0; i < held.length; i++) {
                    held[i] = link.hasResult(i);
                }
            }
            dropLink();
        }
        vote.set(ValueLayout.JAVA_LONG, 0, state);
        vote.set(ValueLayout.JAVA_LONG, Long.BYTES, grantedChunk);
        onHosts(vote, vote, 2, DataType.LONG, ReduceOp.MAX);
        int agreed = (int) vote.get(ValueLayout.JAVA_LONG, 0);
        long chunk = vote.get(ValueLayout.JAVA_LONG, Long.BYTES);
        if (agreed == DONE) {
            return;
        }
        if (agreed >= JOIN_FAILED) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": allreduce of " + bytes + " bytes "
                    + (agreed == FAILED ? "finished" : "runs") + " on the hosts: " + (why != null ? why
                    : "another rank could not use the aggregator at " + at) + "; the aggregator at " + at
                    + " is given up");
            dropLink();
            remaining.remove(at);
        }
        if (agreed == FAILED) {
            finishOnHosts(input, output, count, type, op, chunk, state == DONE, held);
        } else {
            onHosts(input, output, count, type, op);
        }
    }

    private AggregatorLink join(InetSocketAddress at) throws IOException, AggregatorLink.Failure {
        AggregatorLink joining = new AggregatorLink(context, at, config.queuePairs(), config.aggregation().job(), rank,
                size, config.aggregation());
        try {
            joining.join(config.jobSecret(), System.nanoTime() + config.timeout().toNanos() / 2);
            return joining;
        } catch (AggregatorLink.Failure | RuntimeException e) {
            joining.close();
            throw e;
        }
    }

    private void dropLink() {
        if (link != null) {
            AggregatorLink l = link;
            link = null;
            l.close();
        }
    }

    private void onHosts(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op)
            throws CollectiveException {
        plan.allreduce(input, output, count, type, op, Algorithm.AUTO);
        runner.perform();
    }

    /**
     * The aggregator failed after some ranks had sent chunks of {@code chunk} bytes: finds out which rank holds
     * which chunk's result ({@code all}: this rank holds every one; else those {@code held} says, or none), and
     * finishes every chunk on the hosts, each counted once.
     */
    private void finishOnHosts(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op,
            long chunk, boolean all, boolean[] held) throws CollectiveException {
        long bytes = count * type.byteSize();
        int chunks = (int) ((bytes + chunk - 1) / chunk);
        boolean[] mine = new boolean[chunks];
        for (int i = 0; i < chunks; i++) {
            mine[i] = all || held != null && i < held.length && held[i];
        }
        try (Arena scratch = Arena.ofShared()) {
            // [0, chunks): the lowest rank holding the chunk (size: none); [chunks, 2 chunks): 1 if every rank does.
            MemorySegment holders = scratch.allocate(2L * chunks * Integer.BYTES, Integer.BYTES);
            for (int i = 0; i < chunks; i++) {
                holders.setAtIndex(ValueLayout.JAVA_INT, i, mine[i] ? rank : size);
                holders.setAtIndex(ValueLayout.JAVA_INT, chunks + i, mine[i] ? 1 : 0);
            }
            onHosts(holders, holders, 2L * chunks, DataType.INT, ReduceOp.MIN);
            long elementsPerChunk = chunk / type.byteSize();
            int everywhere = 0;
            int broadcast = 0;
            int i = 0;
            while (i < chunks) {
                int holder = holders.getAtIndex(ValueLayout.JAVA_INT, i);
                boolean everyone = holders.getAtIndex(ValueLayout.JAVA_INT, chunks + i) == 1;
                int j = i + 1;
                while (j < chunks && holders.getAtIndex(ValueLayout.JAVA_INT, j) == holder
                        && (holders.getAtIndex(ValueLayout.JAVA_INT, chunks + j) == 1) == everyone) {
                    j++;
                }
                long first = i * elementsPerChunk;
                long n = Math.min(count, j * elementsPerChunk) - first;
                long offset = first * type.byteSize();
                if (everyone) {
                    everywhere += j - i;
                } else if (holder < size) {
                    broadcast += j - i;
                    plan.broadcast(output.asSlice(offset, n * type.byteSize()), n, type, holder, Algorithm.AUTO);
                    runner.perform();
                } else {
                    onHosts(input.asSlice(offset, n * type.byteSize()), output.asSlice(offset, n * type.byteSize()), n,
                            type, op);
                }
                i = j;
            }
            LOG.log(System.Logger.Level.INFO, "rank " + rank + ": of the allreduce's " + chunks + " chunks, "
                    + everywhere + " had come back to every rank, " + broadcast + " to some (broadcast from them), "
                    + (chunks - everywhere - broadcast) + " to none (reduced on the hosts)");
        }
    }

    @Override
    public void close() {
        try {
            dropLink();
        } finally {
            arena.close();
        }
    }
}
