package io.zcnet.collective;

import io.zcnet.qp.QpContext;
import io.zcnet.ring.LoopJob;

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
 * its chunks, and then every rank votes, an allreduce on the hosts of the largest of {@code (state, chunk,
 * position)}: state 0 when it has the whole result, 1 when it did not try (the aggregator does not reduce the
 * type), 2 when its join failed, 3 when it failed after it had sent chunks; chunk the granted chunk size, or 0;
 * position how many aggregated allreduces it finished before (see below). A vote is needed because a failing
 * aggregator leaves the ranks in different places: one may have every result, another none. By the vote's
 * largest state every rank does the same:
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
 * <h2>One chunk, no vote</h2>
 * Once the ranks have joined, an allreduce of one chunk returns as soon as its result is in, with no vote, on
 * the context's loop thread when the loop may touch the buffers (as the hosts' small operations run, so that
 * its one wait ends when the kernel wakes that thread). Its result stays in the link's result slot. A rank
 * whose such allreduce fails votes as above; the others vote at their next call: the next aggregated
 * allreduce fails on each of them (the failing rank closed its queue pair, so the job is over), and any other
 * operation {@linkplain #settle settles} first, a vote too. A rank can be at most one allreduce ahead (the
 * aggregator sums a chunk only once every rank sent it), which the position shows: when some ranks finished
 * one more than the others, the lowest of those broadcasts the one-chunk result the others lack from its slot,
 * every rank drops the aggregator, and the ranks that were ahead run their own operation again. So that
 * allreduce costs one vote only when it failed, and after a run of them another operation costs one vote. A
 * rank whose peers close the communicator instead of calling again fails for it.
 *
 * <p>The caller's thread, inside its admission, or the loop thread it hands a one-chunk allreduce to; the plan
 * and runner are this class's own, so the operation a communicator planned before settling stays as it was.
 * The vote's segment is made once, so an operation allocates nothing until one fails. Operations the
 * aggregator does not take are left to the hosts without a vote, once every rank has joined (they all hold the
 * same ACCEPT, so they decide alike), and logged once per type and reduction.
 */
final class AggregatedAllreduce implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.zcnet.collective");
    private static final int DONE = 0;
    private static final int SKIPPED = 1;
    private static final int JOIN_FAILED = 2;
    private static final int FAILED = 3;
    /** The vote, by MAX: state, granted chunk, {@code completed * size + size - 1 - rank}, {@code -completed}. */
    private static final int VOTES = 4;

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
    private final MemorySegment vote = arena.allocate(VOTES * Long.BYTES, Long.BYTES);
    /** Which types and reductions the aggregator does not take were logged already, by ordinal. */
    private final boolean[][] loggedSkips = new boolean[DataType.values().length][ReduceOp.values().length];
    private AggregatorLink link;
    /** Aggregated allreduces that returned: every rank counts alike. */
    private long completed;
    /** Whether the last one returned without a vote (one chunk), and its size and type. */
    private boolean unsettled;
    private long unsettledBytes;
    private DataType unsettledType;
    /** A one-chunk allreduce handed to the loop thread: its arguments, and the job made once. */
    private MemorySegment oneInput;
    private MemorySegment oneOutput;
    private long oneBytes;
    private DataType oneType;
    private ReduceOp oneOp;
    private final LoopJob oneChunk = this::oneChunkHere;

    /** @param plan and {@code runner}: this class's own, on the communicator's links */
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
            if (settle()) {
                again(input, output, count, type, op);
                return;
            }
            if (!loggedSkips[type.ordinal()][op.ordinal()]) {
                loggedSkips[type.ordinal()][op.ordinal()] = true;
                LOG.log(System.Logger.Level.INFO, "rank " + rank + ": the aggregator at " + link.address
                        + " does not reduce " + type + " by " + op + ": such allreduces run on the hosts");
            }
            onHosts(input, output, count, type, op);
            completed++;
            return;
        }
        int state = DONE;
        String why = null;
        long grantedChunk = 0;
        boolean[] held = null;
        InetSocketAddress at = link != null ? link.address
                : remaining.get(AggregationConfig.closest(remaining, rankAddresses));
        if (link != null && bytes <= link.chunkBytes()) {
            try {
                oneChunk(input, output, bytes, type, op);
                completed++;
                unsettled = true;
                unsettledBytes = bytes;
                unsettledType = type;
                return;
            } catch (AggregatorLink.Failure | RuntimeException e) {
                state = FAILED;
                why = e.getMessage();
                grantedChunk = link.chunkBytes();
                link.disconnect();
            }
        } else {
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
                if (link != null) {
                    link.disconnect();
                }
            }
        }
        vote(state, grantedChunk);
        int agreed = (int) vote.getAtIndex(ValueLayout.JAVA_LONG, 0);
        long chunk = vote.getAtIndex(ValueLayout.JAVA_LONG, 1);
        if (agreed == DONE) {
            completed++;
            return;
        }
        if (agreed >= JOIN_FAILED) {
            LOG.log(System.Logger.Level.WARNING, "rank " + rank + ": allreduce of " + bytes + " bytes "
                    + (agreed == FAILED ? "finished" : "runs") + " on the hosts: " + (why != null ? why
                    : "another rank could not use the aggregator at " + at) + "; the aggregator at " + at
                    + " is given up");
        }
        if (someAhead()) {
            boolean ahead = catchUp(output, bytes, type);
            giveUp(at);
            if (ahead) {
                again(input, output, count, type, op);
                return;
            }
        } else {
            if (agreed >= JOIN_FAILED) {
                giveUp(at);
            }
            if (agreed == FAILED) {
                finishOnHosts(input, output, count, type, op, chunk, state == DONE, held);
            } else {
                onHosts(input, output, count, type, op);
            }
        }
        completed++;
    }

    /**
     * Before an operation on the hosts: when the last aggregated allreduce returned without a vote, votes, and
     * hands its result to the ranks that lack it (their allreduce failed). Every rank calls it alike.
     *
     * @return whether the aggregator was given up on
     */
    boolean settle() throws CollectiveException {
        if (!unsettled) {
            return false;
        }
        InetSocketAddress at = link.address;
        vote(DONE, link.chunkBytes());
        if (!someAhead() && vote.getAtIndex(ValueLayout.JAVA_LONG, 0) < JOIN_FAILED) {
            return false;
        }
        if (someAhead()) {
            catchUp(null, 0, null);
        }
        giveUp(at);
        return true;
    }

    /** Hands the one-chunk allreduce to the loop thread, or runs it here when the loop cannot touch the buffers. */
    private void oneChunk(MemorySegment input, MemorySegment output, long bytes, DataType type, ReduceOp op)
            throws AggregatorLink.Failure {
        oneInput = input;
        oneOutput = output;
        oneBytes = bytes;
        oneType = type;
        oneOp = op;
        try {
            if (context.isDrivenByCallingThread() || !context.loopCanAccess(input) || !context.loopCanAccess(output)) {
                oneChunkHere();
            } else {
                context.runOnLoop(oneChunk);
            }
        } catch (AggregatorLink.Failure | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        } finally {
            oneInput = null;
            oneOutput = null;
        }
    }

    private void oneChunkHere() throws AggregatorLink.Failure {
        link.allreduce(oneInput, oneOutput, oneBytes, oneType, oneOp, config.timeout().toNanos() / 2);
    }

    /** Every rank says where it is; {@link #vote} holds what they agreed. Settles the last allreduce. */
    private void vote(int state, long chunk) throws CollectiveException {
        vote.setAtIndex(ValueLayout.JAVA_LONG, 0, state);
        vote.setAtIndex(ValueLayout.JAVA_LONG, 1, chunk);
        vote.setAtIndex(ValueLayout.JAVA_LONG, 2, completed * size + size - 1 - rank);
        vote.setAtIndex(ValueLayout.JAVA_LONG, 3, -completed);
        onHosts(vote, vote, VOTES, DataType.LONG, ReduceOp.MAX);
        unsettled = false;
    }

    /** Whether, by the vote, some ranks finished one aggregated allreduce more than others. */
    private boolean someAhead() {
        return vote.getAtIndex(ValueLayout.JAVA_LONG, 2) / size != -vote.getAtIndex(ValueLayout.JAVA_LONG, 3);
    }

    /**
     * Some ranks lack the result of the one-chunk allreduce the others finished: the lowest of those broadcasts
     * it from its result slot into the {@code bytes} of {@code type} at {@code output} of the ranks behind, in
     * whose allreduce this is. Returns whether this rank was ahead.
     */
    private boolean catchUp(MemorySegment output, long bytes, DataType type) throws CollectiveException {
        long most = vote.getAtIndex(ValueLayout.JAVA_LONG, 2);
        int root = size - 1 - (int) (most % size);
        boolean ahead = completed == most / size;
        MemorySegment buffer = ahead ? link.lastResult(unsettledBytes) : output;
        DataType t = ahead ? unsettledType : type;
        long n = (ahead ? unsettledBytes : bytes) / t.byteSize();
        LOG.log(System.Logger.Level.INFO, "rank " + rank + ": the aggregator failed after it had sent an allreduce's"
                + " result to some ranks; rank " + root + " sends it to the others");
        plan.broadcast(buffer, n, t, root, Algorithm.AUTO);
        runner.perform();
        return ahead;
    }

    /** After the vote gave up the aggregator at {@code at}: this allreduce runs as it would on a rank behind. */
    private void again(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op)
            throws CollectiveException {
        if (applies()) {
            allreduce(input, output, count, type, op);
        } else {
            onHosts(input, output, count, type, op);
        }
    }

    private void giveUp(InetSocketAddress at) {
        dropLink();
        remaining.remove(at);
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
