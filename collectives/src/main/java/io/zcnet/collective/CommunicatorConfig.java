package io.zcnet.collective;

import io.zcnet.qp.QpConfig;
import io.zcnet.ring.EventLoopConfig;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * How a rank joins and runs a communicator; immutable, thread-safe. Every rank must use the same
 * {@code slots} and {@code slotBytes} (the rendezvous checks it); the rest may differ per rank.
 *
 * @param engine            the engine of the rank's queue-pair context ({@link EventLoopConfig.Choice#AUTO}:
 *                          io_uring where it runs, else NIO)
 * @param queuePairs        the configuration of every queue pair, subflows per queue pair included
 *                          ({@link QpConfig#withSubflows}); its queue depths must exceed the ring neighbours'
 *                          slots, 4 {@code slots} (at most 64). Its
 *                          pre-shared key is the job secret ({@link #withJobSecret})
 * @param slots             staging slots per peer and direction: how many messages to one peer may be in
 *                          flight at once (1 .. 64); four times as many, at most 64, to the two ring
 *                          neighbours, whose links carry a ring's bytes
 * @param slotBytes         bytes per slot, the largest message: operations are cut into pieces of this size
 *                          (64 .. 8 MiB, a multiple of 64). Each rank holds {@code 2 ((N-3) slots + 2 r) slotBytes}
 *                          bytes of registered staging memory, {@code r = min(4 slots, 64)} the ring neighbours'
 *                          slots (one area of {@code r} for N = 2)
 * @param timeout           how long an operation may wait with nothing moving (no message arriving, no send
 *                          completing) before it fails; set it above the longest time one rank may enter an
 *                          operation after another. A peer that dies is noticed sooner: its connections
 *                          close, or, for a host gone silent, after the queue pairs' silence timeout
 * @param connectTimeout    how long the rendezvous and the connection of every queue pair may take, ranks
 *                          that start late included
 * @param listenAddress     where this rank accepts its peers' queue pairs; null: the local address of its
 *                          connection to the rendezvous store, the interface that reaches rank 0
 * @param hostStore         whether rank 0 runs the rendezvous store at the store address itself; false when
 *                          a {@link RendezvousServer} is started apart
 * @param smallMessageBytes the size up to which {@link Algorithm#AUTO} takes the latency-bound algorithms
 * @param loopThreadBytes   the size up to which an operation runs on the rank's loop thread rather than the
 *                          caller's, when that thread may touch the operation's segments (not confined to the
 *                          caller): each wait of its rounds is then one wake-up of one thread, where the
 *                          caller's thread would wait for the loop thread to wake it. {@link Long#MAX_VALUE}
 *                          (the default): every such operation; 0: every operation runs on the caller's
 *                          thread; between them, larger operations reduce and copy on the caller's thread
 *                          while the loop thread moves their bytes, which pays only with cores to spare
 * @param busyPoll          whether the rank polls instead of sleeping, as MPI's progress engines do: the thread
 *                          that joins drives the rank's loop itself ({@link io.zcnet.qp.QpContext#openOnCallingThread},
 *                          no loop thread), and an operation's waits poll and yield the core between polls, so
 *                          each round of a latency-bound operation costs no wake-up and no second thread competes
 *                          for the core. Only the joining thread may then call the communicator; between its calls
 *                          nothing turns and no heartbeat goes out, so its queue pairs take the longest silence
 *                          timeout ({@link QpConfig#MAX_SILENCE_MILLIS}) and a vanished peer shows as a connection
 *                          error or as {@code timeout}. Every rank must choose the same (the shorter silence
 *                          timeout of two peers applies). Operations also reduce on that thread, between its polls:
 *                          for latency, not for the bandwidth of large messages
 * @param coreSharing       whether the ranks compete for CPU cores, which decides how small allreduces run
 *                          ({@link CoreSharing}); any rank's SHARED or DEDICATED applies to all
 * @param aggregation       whether allreduces go through an {@link Aggregator}, and which
 *                          ({@link #withAggregators}); {@link AggregationConfig#NONE}: all run on the hosts
 */
public record CommunicatorConfig(EventLoopConfig.Choice engine, QpConfig queuePairs, int slots, int slotBytes,
        Duration timeout, Duration connectTimeout, InetAddress listenAddress, boolean hostStore,
        long smallMessageBytes, long loopThreadBytes, boolean busyPoll, CoreSharing coreSharing,
        AggregationConfig aggregation) {

    /** Most staging slots per peer and direction. */
    public static final int MAX_SLOTS = 64;
    /** Largest staging slot, 8 MiB: the largest piece an operation is cut into. */
    public static final int MAX_SLOT_BYTES = 8 << 20;

    /**
     * Checks every component's range.
     *
     * @throws IllegalArgumentException if {@code engine}, {@code queuePairs}, {@code coreSharing} or {@code aggregation} is null,
     *                                  {@code slots} is outside 1 .. {@link #MAX_SLOTS} or not below both queue
     *                                  depths, {@code slotBytes}
     *                                  is not a multiple of 64 in 64 .. {@link #MAX_SLOT_BYTES}, a timeout is
     *                                  null or not positive, or {@code smallMessageBytes} or
     *                                  {@code loopThreadBytes} is negative
     */
    public CommunicatorConfig {
        if (engine == null || queuePairs == null || coreSharing == null || aggregation == null) {
            throw new IllegalArgumentException("engine, queuePairs, coreSharing and aggregation are required");
        }
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots " + slots + " outside 1.." + MAX_SLOTS);
        }
        // A link posts up to its slots' WRITEs and receives, one SEND and one receive more while connecting, and
        // one empty WRITE more when closing; a ring neighbour's link has the most slots.
        int deepest = Staging.ringSlots(slots);
        if (deepest >= queuePairs.sendQueueDepth() || deepest >= queuePairs.receiveQueueDepth()) {
            throw new IllegalArgumentException("slots " + slots + " (" + deepest + " to the ring neighbours) needs queue"
                    + " depths above " + deepest + ", the queue pairs have " + queuePairs.sendQueueDepth() + "/"
                    + queuePairs.receiveQueueDepth());
        }
        if (slotBytes < 64 || slotBytes > MAX_SLOT_BYTES || slotBytes % 64 != 0) {
            throw new IllegalArgumentException("slotBytes " + slotBytes + " must be a multiple of 64 in 64.."
                    + MAX_SLOT_BYTES);
        }
        requirePositive(timeout, "timeout");
        requirePositive(connectTimeout, "connectTimeout");
        if (smallMessageBytes < 0) {
            throw new IllegalArgumentException("smallMessageBytes " + smallMessageBytes + " is negative");
        }
        if (loopThreadBytes < 0) {
            throw new IllegalArgumentException("loopThreadBytes " + loopThreadBytes + " is negative");
        }
    }

    private static void requirePositive(Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive: " + d);
        }
    }

    /**
     * Payload bytes per frame of the default queue pairs: as large as a default slot, so a slice of a large
     * operation is one frame. Four times {@link QpConfig#defaults()}'s, because on a link that is the bottleneck
     * every byte counts: the 44 header bytes of a WRITE frame are 0.067% of a 64 KiB one and 0.017% of this
     * (bench/collectives.sh's shaped links carried 0.045% fewer bytes per 64 MiB allreduce).
     */
    static final int SEGMENT_BYTES = 256 * 1024;

    /**
     * {@return the engine from {@code -Dzcnet.engine} (auto by default), {@link QpConfig#defaults()} with frames
     * of {@value #SEGMENT_BYTES} bytes, 4 slots of 256 KiB, a 30 s timeout, 60 s to connect, listening where the
     * store connection leaves from, rank 0 hosting the store, 64 KiB small messages, every operation on the loop
     * thread that may touch its memory, sleeping when idle, core sharing detected}
     */
    public static CommunicatorConfig defaults() {
        return new CommunicatorConfig(EventLoopConfig.choiceFromProperty(),
                QpConfig.defaults().withSegmentSize(SEGMENT_BYTES), 4, 256 * 1024,
                Duration.ofSeconds(30), Duration.ofSeconds(60), null, true, 64 * 1024, Long.MAX_VALUE, false,
                CoreSharing.DETECT, AggregationConfig.NONE);
    }

    /**
     * {@return this configuration with another engine}
     *
     * @param choice the engine of the rank's queue-pair context
     */
    public CommunicatorConfig withEngine(EventLoopConfig.Choice choice) {
        return new CommunicatorConfig(choice, queuePairs, slots, slotBytes, timeout, connectTimeout, listenAddress,
                hostStore, smallMessageBytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with another queue-pair configuration}
     *
     * @param config the configuration of every queue pair; its queue depths must exceed {@link #slots()}
     */
    public CommunicatorConfig withQueuePairs(QpConfig config) {
        return new CommunicatorConfig(engine, config, slots, slotBytes, timeout, connectTimeout, listenAddress,
                hostStore, smallMessageBytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with {@code count} slots of {@code bytes} each per peer and direction}
     *
     * @param count messages to one peer in flight at once (1 .. {@link #MAX_SLOTS}), below the queue depths
     * @param bytes bytes per slot, the largest piece an operation is cut into (a multiple of 64 in 64 ..
     *              {@link #MAX_SLOT_BYTES})
     */
    public CommunicatorConfig withSlots(int count, int bytes) {
        return new CommunicatorConfig(engine, queuePairs, count, bytes, timeout, connectTimeout, listenAddress,
                hostStore, smallMessageBytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with other timeouts}
     *
     * @param operation how long an operation may wait with nothing moving before it fails
     * @param connect   how long the rendezvous and the connection of every queue pair may take
     */
    public CommunicatorConfig withTimeouts(Duration operation, Duration connect) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, operation, connect, listenAddress,
                hostStore, smallMessageBytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration listening for peers at another address}
     *
     * @param address where this rank accepts its peers' queue pairs, or null for the local address of its
     *                connection to the rendezvous store
     */
    public CommunicatorConfig withListenAddress(InetAddress address) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, timeout, connectTimeout, address,
                hostStore, smallMessageBytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with a job secret, or without one} Every rank of the job must be given the
     * same. With one, a connection joins the rendezvous store only by proving it holds the secret, and a queue
     * pair reaches a rank only if its peer proves it too (it is every queue pair's pre-shared key,
     * {@link QpConfig#withPreSharedKey}); the secret never crosses the wire (HMAC-SHA256 over a fresh nonce). So
     * strangers on the network can neither take a rank's place nor a slot of a rank's listener, and are dropped
     * (logged) while the ranks join. Without one, as before, anyone who can reach the store and the ranks'
     * listeners can join as a rank not yet taken; strangers that do not still cannot stall or abort the
     * rendezvous. Under a launcher, {@value LaunchEnvironment#JOB_SECRET_VARIABLE} gives it.
     *
     * @param secret 16 .. 64 bytes every rank holds (random, and kept like a password), or null for none
     * @throws IllegalArgumentException if {@code secret} is not 16 .. 64 bytes
     */
    public CommunicatorConfig withJobSecret(byte[] secret) {
        checkJobSecret(secret);
        return withQueuePairs(queuePairs.withPreSharedKey(secret));
    }

    /** {@return a copy of the job secret ({@link #withJobSecret}), or null if there is none} */
    public byte[] jobSecret() {
        return queuePairs.preSharedKey();
    }

    static void checkJobSecret(byte[] secret) {
        if (secret != null && (secret.length < 16 || secret.length > 64)) {
            throw new IllegalArgumentException("a job secret must be 16..64 bytes, got " + secret.length);
        }
    }

    /**
     * {@return this configuration with rank 0 hosting the rendezvous store or not}
     *
     * @param host whether rank 0 runs the store; false when a {@link RendezvousServer} is started apart
     */
    public CommunicatorConfig withHostStore(boolean host) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, timeout, connectTimeout, listenAddress,
                host, smallMessageBytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with another small-message size}
     *
     * @param bytes the size up to which {@link Algorithm#AUTO} takes the latency-bound algorithms
     */
    public CommunicatorConfig withSmallMessageBytes(long bytes) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, timeout, connectTimeout, listenAddress,
                hostStore, bytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with another limit for operations on the loop thread}
     *
     * @param bytes the size up to which an operation runs on the rank's loop thread; 0: none does;
     *              {@link Long#MAX_VALUE}: every one whose memory that thread may touch
     */
    public CommunicatorConfig withLoopThreadBytes(long bytes) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, timeout, connectTimeout, listenAddress,
                hostStore, smallMessageBytes, bytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with the rank polling on the joining thread, or sleeping when idle}
     *
     * @param on true: the joining thread drives the rank, polling and yielding the core between polls
     *           ({@link #busyPoll()}); false: a loop thread drives it, and every thread sleeps until woken
     */
    public CommunicatorConfig withBusyPoll(boolean on) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, timeout, connectTimeout, listenAddress,
                hostStore, smallMessageBytes, loopThreadBytes, on, coreSharing, aggregation);
    }

    /**
     * {@return this configuration with core sharing as given rather than detected}
     *
     * @param sharing whether the ranks compete for CPU cores ({@link CoreSharing}); any rank's SHARED or
     *                DEDICATED applies to all
     */
    public CommunicatorConfig withCoreSharing(CoreSharing sharing) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, timeout, connectTimeout, listenAddress,
                hostStore, smallMessageBytes, loopThreadBytes, busyPoll, sharing, aggregation);
    }

    /**
     * {@return this configuration sending allreduces through an aggregator, or not} Every allreduce of a type and
     * reduction the aggregator takes then goes to it in chunks, several in flight, and comes back summed; when
     * none is reachable, it refuses the job or a type, or it fails during an operation, the operation runs (or is
     * finished) on the hosts with the same result, and one log line says why (collectives.md, "Aggregation in the
     * network"). Every rank must be given the same.
     *
     * @param aggregation the job number, the aggregators and what to ask of them; {@link AggregationConfig#NONE}
     *                    for none
     */
    public CommunicatorConfig withAggregation(AggregationConfig aggregation) {
        return new CommunicatorConfig(engine, queuePairs, slots, slotBytes, timeout, connectTimeout, listenAddress,
                hostStore, smallMessageBytes, loopThreadBytes, busyPoll, coreSharing, aggregation);
    }

    /**
     * {@return this configuration sending allreduces through the closest of {@code aggregators}} As
     * {@link #withAggregation} with 8 slots of 256 KiB.
     *
     * @param job         the job number the ranks share at the aggregator, 0 .. 65535
     * @param aggregators where aggregators listen
     */
    public CommunicatorConfig withAggregators(int job, InetSocketAddress... aggregators) {
        return withAggregation(new AggregationConfig(job, List.of(aggregators), AggregationConfig.NONE.slots(),
                AggregationConfig.NONE.chunkBytes()));
    }
}
