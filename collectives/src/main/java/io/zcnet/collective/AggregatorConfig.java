package io.zcnet.collective;

import io.zcnet.qp.QpConfig;
import io.zcnet.ring.EventLoopConfig;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * How an {@link Aggregator} runs: which jobs it takes, and the quotas that keep one job from taking what
 * another needs (R10 of the network-assisted collectives draft). Immutable, thread-safe.
 *
 * <p>A job is known by its number and proves itself with its secret ({@link CommunicatorConfig#withJobSecret},
 * the same 16-64 bytes every rank holds): a rank's JOIN carries an HMAC of the aggregator's fresh nonce under it
 * (docs/wire-format.md, section 20.3). A job number the aggregator was given no secret for is taken only when it
 * is {@code open}, and then only without a proof, as a communicator without a secret takes anyone.
 *
 * @param engine         the engine of the aggregator's queue-pair context
 * @param busyPoll       whether its loop thread polls and yields the core between polls instead of sleeping in
 *                       the kernel: each chunk then costs no wake-up of the aggregator, which on hosts whose
 *                       cores are all busy is most of a small allreduce's time; the thread takes a core whether
 *                       or not any job runs
 * @param queuePairs     the configuration of every queue pair to a rank; without a pre-shared key (jobs prove
 *                       their secrets in the JOIN, and one listener serves every job)
 * @param secrets        the secret of each job number taken (0 .. 65535), 16 .. 64 bytes each
 * @param open           whether a job number with no secret here is taken (without a proof)
 * @param maxJobs        jobs at once, joining or running
 * @param maxSlotsPerJob slots granted to one job at most: chunks of it in flight at once
 * @param maxChunkBytes  bytes per chunk at most (a multiple of 64)
 * @param maxJobBytes    memory of one job at most: its slots' sums and its ranks' landing buffers,
 *                       {@code slots (ranks + 1) (32 + chunk)} bytes; fewer slots are granted to fit
 * @param maxMemoryBytes memory of all jobs together at most; a job that does not fit is told to reduce on its
 *                       hosts
 * @param maxPending     connections that have not joined yet at most (each holds 512 bytes and a queue pair);
 *                       one more is closed at once
 * @param joinTimeout    how long a connection may take to join, and a job's ranks to all join
 * @param dataTypes      the element types reduced; a job's ranks reduce the others on their hosts
 * @param reductions     the reductions applied; likewise
 */
public record AggregatorConfig(EventLoopConfig.Choice engine, boolean busyPoll, QpConfig queuePairs,
        Map<Integer, byte[]> secrets, boolean open, int maxJobs, int maxSlotsPerJob, int maxChunkBytes,
        long maxJobBytes, long maxMemoryBytes, int maxPending, Duration joinTimeout, Set<DataType> dataTypes,
        Set<ReduceOp> reductions) {

    /**
     * Checks every component and copies the collections.
     *
     * @throws IllegalArgumentException if a component is null or out of range, a job number is outside
     *                                  0 .. 65535, a secret is not 16 .. 64 bytes, or {@code queuePairs} has a
     *                                  pre-shared key
     */
    public AggregatorConfig {
        if (engine == null || queuePairs == null || secrets == null || joinTimeout == null || dataTypes == null
                || reductions == null) {
            throw new IllegalArgumentException("engine, queuePairs, secrets, joinTimeout, dataTypes and reductions"
                    + " are required");
        }
        if (queuePairs.preSharedKey() != null) {
            throw new IllegalArgumentException("the aggregator's queue pairs take no pre-shared key: jobs prove their"
                    + " secrets in their JOIN");
        }
        Map<Integer, byte[]> copy = new TreeMap<>();
        secrets.forEach((job, secret) -> {
            if (job == null || job < 0 || job > 0xFFFF) {
                throw new IllegalArgumentException("job number " + job + " outside 0..65535");
            }
            if (secret == null) {
                throw new IllegalArgumentException("job " + job + " has no secret");
            }
            CommunicatorConfig.checkJobSecret(secret);
            copy.put(job, secret.clone());
        });
        secrets = Map.copyOf(copy);
        if (maxJobs < 1 || maxSlotsPerJob < 1 || maxSlotsPerJob > 0xFFFF || maxPending < 1) {
            throw new IllegalArgumentException("maxJobs, maxSlotsPerJob (up to 65535) and maxPending must be positive");
        }
        if (maxSlotsPerJob >= queuePairs.sendQueueDepth() || maxSlotsPerJob >= queuePairs.receiveQueueDepth()) {
            throw new IllegalArgumentException("maxSlotsPerJob " + maxSlotsPerJob + " needs queue depths above it");
        }
        if (maxChunkBytes < 64 || maxChunkBytes > NacaHeader.MAX_CHUNK_BYTES || maxChunkBytes % 64 != 0) {
            throw new IllegalArgumentException("maxChunkBytes " + maxChunkBytes + " must be a multiple of 64 in 64.."
                    + NacaHeader.MAX_CHUNK_BYTES);
        }
        if (maxJobBytes < 1 || maxMemoryBytes < maxJobBytes) {
            throw new IllegalArgumentException("maxJobBytes must be positive and maxMemoryBytes at least as large");
        }
        if (joinTimeout.isNegative() || joinTimeout.isZero()) {
            throw new IllegalArgumentException("joinTimeout must be positive: " + joinTimeout);
        }
        dataTypes = dataTypes.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(dataTypes));
        reductions = reductions.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(reductions));
    }

    /**
     * {@return the engine from {@code -Dzcnet.engine}, a loop thread that sleeps when idle, the communicators'
     * queue pairs without a key, no job secrets and closed to jobs without one, 64 jobs, 16 slots of up to 1 MiB
     * a job, 64 MiB a job and 1 GiB in all, 256 connections joining, 10 s to join, every type and reduction}
     */
    public static AggregatorConfig defaults() {
        return new AggregatorConfig(EventLoopConfig.choiceFromProperty(), false,
                CommunicatorConfig.defaults().queuePairs(), Map.of(), false, 64, 16, 1 << 20, 64L << 20, 1L << 30,
                256, Duration.ofSeconds(10), EnumSet.allOf(DataType.class), EnumSet.allOf(ReduceOp.class));
    }

    /**
     * {@return this configuration taking job {@code job}, proven by {@code secret}}
     *
     * @param job    the job number, 0 .. 65535
     * @param secret the job's secret, 16 .. 64 bytes, as its ranks hold it
     */
    public AggregatorConfig withJob(int job, byte[] secret) {
        Map<Integer, byte[]> more = new TreeMap<>(secrets());
        more.put(job, secret);
        return new AggregatorConfig(engine, busyPoll, queuePairs, more, open, maxJobs, maxSlotsPerJob, maxChunkBytes,
                maxJobBytes, maxMemoryBytes, maxPending, joinTimeout, dataTypes, reductions);
    }

    /**
     * {@return this configuration taking job numbers it has no secret for, or not}
     *
     * @param on true: such a job joins without a proof (anyone who reaches the aggregator may claim its ranks)
     */
    public AggregatorConfig withOpen(boolean on) {
        return new AggregatorConfig(engine, busyPoll, queuePairs, secrets, on, maxJobs, maxSlotsPerJob, maxChunkBytes,
                maxJobBytes, maxMemoryBytes, maxPending, joinTimeout, dataTypes, reductions);
    }

    /**
     * {@return this configuration with other quotas}
     *
     * @param jobs          jobs at once
     * @param slotsPerJob   slots of one job at most
     * @param chunkBytes    bytes per chunk at most, a multiple of 64
     * @param bytesPerJob   memory of one job at most
     * @param bytesInAll    memory of all jobs at most
     */
    public AggregatorConfig withQuotas(int jobs, int slotsPerJob, int chunkBytes, long bytesPerJob, long bytesInAll) {
        return new AggregatorConfig(engine, busyPoll, queuePairs, secrets, open, jobs, slotsPerJob, chunkBytes,
                bytesPerJob, bytesInAll, maxPending, joinTimeout, dataTypes, reductions);
    }

    /**
     * {@return this configuration reducing only these types and reductions}
     *
     * @param types the element types reduced
     * @param ops   the reductions applied
     */
    public AggregatorConfig withOperations(Set<DataType> types, Set<ReduceOp> ops) {
        return new AggregatorConfig(engine, busyPoll, queuePairs, secrets, open, maxJobs, maxSlotsPerJob, maxChunkBytes,
                maxJobBytes, maxMemoryBytes, maxPending, joinTimeout, types, ops);
    }

    /**
     * {@return this configuration with another engine}
     *
     * @param choice the engine of the aggregator's queue-pair context
     */
    public AggregatorConfig withEngine(EventLoopConfig.Choice choice) {
        return new AggregatorConfig(choice, busyPoll, queuePairs, secrets, open, maxJobs, maxSlotsPerJob, maxChunkBytes,
                maxJobBytes, maxMemoryBytes, maxPending, joinTimeout, dataTypes, reductions);
    }

    /**
     * {@return this configuration with the loop thread busy-polling, or sleeping when idle}
     *
     * @param on true: the thread polls and yields the core between polls ({@link #busyPoll()})
     */
    public AggregatorConfig withBusyPoll(boolean on) {
        return new AggregatorConfig(engine, on, queuePairs, secrets, open, maxJobs, maxSlotsPerJob, maxChunkBytes,
                maxJobBytes, maxMemoryBytes, maxPending, joinTimeout, dataTypes, reductions);
    }

    /**
     * {@return this configuration with another join timeout}
     *
     * @param timeout how long a connection may take to join, and a job's ranks to all join
     */
    public AggregatorConfig withJoinTimeout(Duration timeout) {
        return new AggregatorConfig(engine, busyPoll, queuePairs, secrets, open, maxJobs, maxSlotsPerJob, maxChunkBytes,
                maxJobBytes, maxMemoryBytes, maxPending, timeout, dataTypes, reductions);
    }

    /**
     * {@return the job secrets, each a copy} A secret is kept like a password: no caller can change the
     * aggregator's own.
     */
    @Override
    public Map<Integer, byte[]> secrets() {
        Map<Integer, byte[]> copy = new TreeMap<>();
        secrets.forEach((job, secret) -> copy.put(job, secret.clone()));
        return copy;
    }

    /** {@return the secret of job {@code job}, or null if none was given} */
    byte[] secretOf(int job) {
        return secrets.get(job);
    }

    /** {@return the {@code dtypes} field of an ACCEPT: bit {@code code} for every type reduced} */
    int dataTypeBits() {
        int bits = 0;
        for (DataType t : dataTypes) {
            bits |= 1 << NacaHeader.dataTypeCode(t);
        }
        return bits;
    }

    /** {@return the {@code redops} field of an ACCEPT} */
    int reductionBits() {
        int bits = 0;
        for (ReduceOp op : reductions) {
            bits |= 1 << NacaHeader.reductionCode(op);
        }
        return bits;
    }
}
