package io.zcnet.collective;

import io.zcnet.qp.ListenerConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QpState;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.LoopJob;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An aggregation node for network-assisted allreduce (the IETF draft's NACA, server-to-switch mode): a long-running
 * process that any number of jobs' ranks connect to, each rank with one queue pair, and that sums every chunk of
 * their allreduces and sends the sum back to each rank. So every rank sends its data once and receives the result
 * once, where a ring allreduce moves {@code 2 (N - 1) / N} of it each way. The exchange is docs/wire-format.md,
 * section 20; a {@link Communicator} configured with {@link CommunicatorConfig#withAggregators} speaks it.
 *
 * <h2>Isolation</h2>
 * A connection holds 512 bytes and its queue pair until it has proven its job's secret (at most
 * {@link AggregatorConfig#maxPending()} of them, and for {@link AggregatorConfig#joinTimeout()}); a job's memory
 * is reserved whole, within its quota, by its first proven rank, and no rank's SEND can reach another job's
 * memory (it lands only in receives posted on its own queue pair). A job whose rank breaks a rule (a bad header,
 * a wrong type, a slot it was not granted, a chunk too large, ranks that disagree) fails alone: its ranks get a
 * REFUSE that says why, its queue pairs are closed and its memory freed. A rank that floods only waits for its
 * credits. Every other job goes on.
 *
 * <h2>Threads</h2>
 * Everything runs on the context's loop thread: each queue pair's completions as they come, and every 100 ms a
 * sweep of timeouts handed over by the accepting thread, which is the only other thread. The data path (a chunk
 * reduced, a result written) allocates nothing. {@link #statistics()} and {@link #close()} may be called from any
 * thread.
 */
public final class Aggregator implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.zcnet.collective");
    private static final Duration SWEEP = Duration.ofMillis(100);
    /** How long a REFUSE may take to be delivered before its queue pair is closed anyway. */
    private static final long REFUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * What an aggregator has done so far.
     *
     * @param jobs        jobs joining or running now
     * @param connections connections open now, joined or not
     * @param chunks      chunks reduced and sent to every rank
     * @param duplicates  contributions dropped because their rank was counted already
     * @param resends     of those, the ones flagged RESEND
     * @param refused     connections and jobs refused (no secret, a wrong proof, over quota, a rank twice)
     * @param failed      jobs that failed by a rank's fault or a lost queue pair
     */
    public record Statistics(int jobs, int connections, long chunks, long duplicates, long resends, long refused,
            long failed) {
    }

    /** The counters behind {@link Statistics}: written on the loop thread only, read by any. */
    static final class Counters {
        private volatile long chunks;
        private volatile long duplicates;
        private volatile long resends;
        private volatile long refused;
        private volatile long failed;
        private volatile int jobs;
        private volatile int connections;

        void reduced() {
            chunks = chunks + 1; // one writer
        }

        void duplicate(int flags) {
            duplicates = duplicates + 1;
            if ((flags & NacaHeader.FLAG_RESEND) != 0) {
                resends = resends + 1;
            }
        }
    }

    private final AggregatorConfig config;
    private final QpContext context;
    private final QpListener listener;
    private final Thread acceptor;
    private volatile boolean closing;
    private final Counters counters = new Counters();
    private final NacaHeader header = new NacaHeader();
    private final WorkCompletion completion = new WorkCompletion();
    private final LoopJob sweep = this::sweep;
    // Loop thread only:
    private final List<AggregatorMember> members = new ArrayList<>();
    private final Map<Integer, AggregatorJob> jobs = new HashMap<>();
    private long memoryInUse;
    private long connectionsSeen;

    private Aggregator(AggregatorConfig config, QpContext context, QpListener listener) {
        this.config = config;
        this.context = context;
        this.listener = listener;
        this.acceptor = Thread.ofPlatform().name("zcnet-aggregator-" + listener.address().getPort()).daemon()
                .unstarted(this::acceptLoop);
    }

    /**
     * Starts an aggregator listening at {@code address}.
     *
     * @param address where ranks connect; port 0 for any free port ({@link #address()} says which)
     * @param config  the jobs taken and the quotas
     * @return the running aggregator; {@link #close()} it
     * @throws IOException              if the queue-pair context cannot be opened or the address not bound
     * @throws IllegalArgumentException if an argument is null
     */
    public static Aggregator start(InetSocketAddress address, AggregatorConfig config) throws IOException {
        if (address == null || config == null) {
            throw new IllegalArgumentException("an address and a config are required");
        }
        EventLoopConfig loop = EventLoopConfig.defaults().withEngine(config.engine());
        QpContext context = QpContext.open(config.busyPoll() ? loop.withIdle(LoopIdle.yielding()) : loop);
        try {
            QpListener listener = context.listen(address, ListenerConfig.of(config.queuePairs()));
            Aggregator a = new Aggregator(config, context, listener);
            a.acceptor.start();
            return a;
        } catch (IOException | RuntimeException e) {
            context.close();
            throw e;
        }
    }

    /** {@return where ranks connect}; any thread. */
    public InetSocketAddress address() {
        return listener.address();
    }

    /** {@return the engine the queue pairs run on}; any thread. */
    public EngineKind engine() {
        return context.engine();
    }

    /** {@return what the aggregator has done so far}; any thread. */
    public Statistics statistics() {
        Counters c = counters;
        return new Statistics(c.jobs, c.connections, c.chunks, c.duplicates, c.resends, c.refused, c.failed);
    }

    // ---------------------------------------------------------------- the accepting thread

    private void acceptLoop() {
        long nextSweep = System.nanoTime() + SWEEP.toNanos();
        while (!closing) {
            try {
                QueuePair qp = listener.accept(SWEEP);
                if (qp != null) {
                    context.runOnLoop(() -> admit(qp));
                }
                if (System.nanoTime() - nextSweep >= 0) {
                    context.runOnLoop(sweep);
                    nextSweep = System.nanoTime() + SWEEP.toNanos();
                }
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (closing) {
                    return;
                }
                LOG.log(System.Logger.Level.ERROR, "aggregator at " + address() + ": " + e, e);
                if (context.failure() != null) {
                    return;
                }
            }
        }
    }

    // ---------------------------------------------------------------- the loop thread

    private void admit(QueuePair qp) {
        int pending = 0;
        for (AggregatorMember m : members) {
            if (m.job == null && !m.closed) {
                pending++;
            }
        }
        String peer = "connection " + ++connectionsSeen;
        if (pending >= config.maxPending()) {
            LOG.log(System.Logger.Level.WARNING, "aggregator: " + peer + " closed: " + pending
                    + " connections have not joined yet");
            counters.refused = counters.refused + 1;
            qp.close();
            return;
        }
        AggregatorMember m = new AggregatorMember(context, qp, peer, System.nanoTime());
        members.add(m);
        counters.connections = counters.connections + 1;
        qp.onCompletions(() -> drain(m));
        m.challenge(header);
    }

    /** Takes every completion of {@code m}'s queue pair. */
    private void drain(AggregatorMember m) {
        while (!m.closed && m.qp.poll(completion)) {
            if (!completion.isSuccess()) {
                lost(m, WorkCompletion.opcodeName(completion.opcode()) + " completed with "
                        + WorkCompletion.statusName(completion.status()));
                return;
            }
            long id = completion.workRequestId();
            switch (completion.opcode()) {
                case WorkCompletion.OP_RECV -> received(m, id, completion.byteCount());
                case WorkCompletion.OP_SEND -> {
                    if (id == AggregatorMember.REFUSED) {
                        close(m);
                    }
                }
                case WorkCompletion.OP_RDMA_WRITE -> {
                    String problem = m.job.onResultWritten((int) id);
                    if (problem != null) {
                        fail(m.job, problem);
                    }
                }
                default -> fail(m, "its peer sent " + WorkCompletion.opcodeName(completion.opcode())
                        + ", which no rank sends");
            }
        }
        if (!m.closed && m.qp.state() == QpState.ERROR) {
            lost(m, m.qp.errorReason());
        }
    }

    private void received(AggregatorMember m, long id, int bytes) {
        AggregatorJob job = m.job;
        if (job == null) {
            join(m, bytes);
        } else if (!job.accepted || job.ended != null || id < 0) {
            fail(m, "it sent before its job was accepted");
        } else {
            String problem = job.onChunk(m, (int) id, bytes);
            if (problem != null) {
                fail(job, "rank " + m.rank + ": " + problem);
            }
        }
    }

    private void join(AggregatorMember m, int bytes) {
        NacaHeader h = header.wrap(m.memory(), m.receiveOffset());
        String problem = h.validate(bytes);
        if (problem == null && h.type() != NacaHeader.JOIN) {
            problem = NacaHeader.typeName(h.type()) + " where a JOIN was due";
        }
        if (problem != null) {
            refuseAlone(m, 0, 0, -1, false, "a bad JOIN: " + problem);
            return;
        }
        int jobId = h.job();
        int ranks = h.ranks();
        int rank = h.rank();
        byte[] secret = config.secretOf(jobId);
        if (secret == null && !config.open()) {
            refuseAlone(m, jobId, ranks, rank, true, "job " + jobId + " is not taken by this aggregator");
            return;
        }
        problem = NacaJoin.check(m.memory(), m.receiveOffset(), secret, m.nonce);
        if (problem != null) {
            refuseAlone(m, jobId, ranks, rank, false, problem);
            return;
        }
        long body = m.receiveOffset() + NacaHeader.LENGTH;
        int askedSlots = NacaJoin.slots(m.memory(), body);
        int askedChunk = (int) NacaJoin.chunkBytes(m.memory(), body);
        m.resultKey = NacaJoin.resultKey(m.memory(), body);
        AggregatorJob job = jobs.get(jobId);
        if (job == null) {
            job = reserve(m, jobId, ranks, rank, askedSlots, askedChunk);
            if (job == null) {
                return;
            }
        } else if (job.accepted || job.ended != null) {
            refuseAlone(m, jobId, ranks, rank, false, "job " + jobId + " is running already");
            return;
        } else if (ranks != job.ranks || askedSlots != job.askedSlots || askedChunk != job.askedChunkBytes) {
            fail(job, "rank " + rank + " asks for " + ranks + " ranks, " + askedSlots + " slots of " + askedChunk
                    + " bytes, where the first asked for " + job.ranks + ", " + job.askedSlots + " of "
                    + job.askedChunkBytes);
            refuseAlone(m, jobId, ranks, rank, true, "its ranks disagree about the job");
            return;
        } else if (job.hasJoined(rank)) {
            refuseAlone(m, jobId, ranks, rank, false, "rank " + rank + " of job " + jobId + " joined already");
            return;
        }
        if (job.join(m, rank)) {
            job.accept();
            LOG.log(System.Logger.Level.INFO, "aggregator: job " + jobId + " accepted: " + ranks + " ranks, "
                    + job.slots + " slots of " + job.chunkBytes + " bytes");
        }
    }

    /** The first rank of a job: its memory within the quotas, or a REFUSE with FALLBACK (and null). */
    private AggregatorJob reserve(AggregatorMember m, int jobId, int ranks, int rank, int askedSlots, int askedChunk) {
        int chunk = Math.min(askedChunk, config.maxChunkBytes()) & ~63;
        long perSlot = AggregatorJob.bytesOf(1, ranks, chunk);
        long fitting = Math.min(Math.min(askedSlots, config.maxSlotsPerJob()), config.maxJobBytes() / perSlot);
        String why = null;
        if (jobs.size() >= config.maxJobs()) {
            why = "the aggregator runs " + jobs.size() + " jobs, its most";
        } else if (fitting < 1) {
            why = "job " + jobId + ": one slot of " + chunk + " bytes for " + ranks + " ranks (" + perSlot
                    + " bytes) is over its memory quota of " + config.maxJobBytes();
        } else if (memoryInUse + fitting * perSlot > config.maxMemoryBytes()) {
            why = "job " + jobId + " needs " + fitting * perSlot + " bytes and the aggregator has "
                    + (config.maxMemoryBytes() - memoryInUse) + " left";
        }
        if (why != null) {
            refuseAlone(m, jobId, ranks, rank, true, why);
            return null;
        }
        AggregatorJob job = new AggregatorJob(context, header, counters, config, jobId, ranks, (int) fitting, chunk,
                askedSlots, askedChunk, System.nanoTime());
        jobs.put(jobId, job);
        memoryInUse += job.bytes;
        counters.jobs = jobs.size();
        return job;
    }

    private void refuseAlone(AggregatorMember m, int jobId, int ranks, int rank, boolean fallback, String why) {
        LOG.log(System.Logger.Level.WARNING, "aggregator: " + m + " refused: " + why);
        counters.refused = counters.refused + 1;
        if (!m.refuse(header, jobId, ranks, rank, fallback, why, System.nanoTime())) {
            close(m);
        }
    }

    /** {@code m} broke a rule: its job fails, or it alone when it has none. */
    private void fail(AggregatorMember m, String why) {
        if (m.job != null) {
            fail(m.job, "rank " + m.rank + ": " + why);
        } else {
            refuseAlone(m, 0, 0, -1, false, why);
        }
    }

    private void fail(AggregatorJob job, String why) {
        if (job.ended == null) {
            LOG.log(System.Logger.Level.WARNING, "aggregator: " + job + " failed: " + why);
            counters.failed = counters.failed + 1;
        }
        job.end(why, false, System.nanoTime());
        reap(job);
    }

    /** {@code m}'s queue pair ended (its rank closed it, or the connection failed): so does its job. */
    private void lost(AggregatorMember m, String why) {
        close(m);
        AggregatorJob job = m.job;
        if (job != null && job.ended == null) {
            LOG.log(System.Logger.Level.INFO, "aggregator: " + job + " ends: rank " + m.rank + "'s queue pair ended ("
                    + why + ")");
            job.end("rank " + m.rank + "'s queue pair ended", false, System.nanoTime());
        }
        if (job != null) {
            reap(job);
        }
    }

    private void close(AggregatorMember m) {
        if (!m.closed) {
            m.close();
            counters.connections = counters.connections - 1;
        }
        if (m.job != null) {
            reap(m.job);
        }
    }

    /** Frees an ended job's memory once every queue pair into it is closed. */
    private void reap(AggregatorJob job) {
        if (job.ended != null && job.allClosed() && jobs.get(job.id) == job) {
            jobs.remove(job.id);
            memoryInUse -= job.bytes;
            job.free();
            counters.jobs = jobs.size();
        }
    }

    /** Every 100 ms: connections and jobs past their time, REFUSEs not delivered, queue pairs failed silently. */
    private void sweep() {
        long now = System.nanoTime();
        long joinNanos = config.joinTimeout().toNanos();
        for (Iterator<AggregatorMember> i = members.iterator(); i.hasNext(); ) {
            AggregatorMember m = i.next();
            if (!m.closed && m.refusedNanos != 0 && now - m.refusedNanos > REFUSE_NANOS) {
                close(m);
            } else if (!m.closed && m.qp.state() == QpState.ERROR) {
                lost(m, m.qp.errorReason());
            } else if (!m.closed && m.job == null && m.refusedNanos == 0 && now - m.connectedNanos > joinNanos) {
                refuseAlone(m, 0, 0, -1, false, "no JOIN within " + config.joinTimeout().toMillis() + " ms");
            }
            if (m.closed) {
                i.remove();
            }
        }
        for (AggregatorJob job : List.copyOf(jobs.values())) {
            if (!job.accepted && job.ended == null && now - job.createdNanos > joinNanos) {
                LOG.log(System.Logger.Level.WARNING, "aggregator: " + job + " refused: not every rank joined within "
                        + config.joinTimeout().toMillis() + " ms");
                counters.refused = counters.refused + 1;
                job.end("not every rank of job " + job.id + " joined within " + config.joinTimeout().toMillis() + " ms",
                        true, now);
            }
            reap(job);
        }
    }

    /** Closes every queue pair, frees every job's memory, then the listener and the context. Idempotent; any thread. */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        acceptor.interrupt();
        try {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
            if (context.failure() == null) {
                context.runOnLoop(() -> {
                    for (AggregatorMember m : members) {
                        close(m);
                    }
                    members.clear();
                    for (AggregatorJob job : List.copyOf(jobs.values())) {
                        job.end("the aggregator closes", true, System.nanoTime());
                        reap(job);
                    }
                });
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "aggregator: closing: " + e, e);
        } finally {
            listener.close();
            context.close();
        }
    }

    @Override
    public String toString() {
        Statistics s = statistics();
        return "Aggregator[" + address() + " jobs=" + s.jobs() + " connections=" + s.connections() + " chunks="
                + s.chunks() + "]";
    }
}
