package io.zcnet.examples;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpState;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;
import io.zcnet.ring.EventLoopConfig;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The load generator of {@code zcnet qp-load}: opens {@link Plan#queuePairs} queue pairs to a {@link QpServer},
 * keeps {@link Plan#inflight} operations in flight on each (SENDs echoed by the server, or READs of its region),
 * checks every reply byte for byte, and measures every round trip. All queue pairs run on one context's loop
 * thread, each driven from its completion listener.
 */
final class QpLoad {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final long HELLO_ID = 1L << 40;
    private static final int CONNECT_THREADS = 8;
    private static final Duration DRAIN = Duration.ofSeconds(10);

    /** What an operation is. */
    enum Op { SEND, READ }

    /**
     * One run.
     *
     * @param server     where the {@link QpServer} listens
     * @param queuePairs how many queue pairs to open
     * @param seconds    how long to drive them once all are open
     * @param inflight   operations in flight per queue pair
     * @param size       bytes per operation
     * @param op         SENDs echoed, or READs of the server's region
     * @param config     the queue pairs' configuration
     * @param holdSeconds how long to keep the queue pairs open and idle after the run, before closing them (for a
     *                    look at what idle queue pairs cost)
     */
    record Plan(InetSocketAddress server, int queuePairs, double seconds, int inflight, int size, Op op, QpConfig config,
            double holdSeconds) {
        Plan {
            if (!(holdSeconds >= 0 && holdSeconds <= 3600)) {
                throw new IllegalArgumentException("--hold must be in [0, 3600] seconds, got " + holdSeconds);
            }
            if (queuePairs < 1 || queuePairs > 100_000) {
                throw new IllegalArgumentException("--qps must be 1..100000, got " + queuePairs);
            }
            if (!(seconds > 0 && seconds <= 3600)) {
                throw new IllegalArgumentException("--seconds must be in (0, 3600], got " + seconds);
            }
            if (inflight < 1 || inflight > config.sendQueueDepth() || inflight >= config.receiveQueueDepth()) {
                throw new IllegalArgumentException("--inflight must be 1.." + Math.min(config.sendQueueDepth(),
                        config.receiveQueueDepth() - 1) + ", got " + inflight);
            }
            if (size < 1 || size > 1 << 20) {
                throw new IllegalArgumentException("--size must be 1..1048576, got " + size);
            }
        }
    }

    /**
     * What a run did.
     *
     * @param queuePairs   asked for
     * @param established  opened, hello received
     * @param failed       did not open, or failed during the run
     * @param roundTrips   operations answered and checked
     * @param seconds      how long the measured phase lasted
     * @param latency      round trips in nanoseconds
     * @param mismatches   replies whose bytes were wrong or missing
     * @param firstFailure why the first queue pair failed, or null
     * @param firstLost    why the first established queue pair failed later, or null: with many queue pairs
     *                     refused connects come first, and would hide what ended the ones that ran
     */
    record Result(int queuePairs, int established, int failed, long roundTrips, double seconds, Histogram latency,
            long mismatches, String firstFailure, String firstLost) {
        boolean verified() {
            return mismatches == 0 && roundTrips > 0;
        }

        /** The one line the command ends with. */
        String line() {
            return String.format(Locale.ROOT, "qp-load: qps=%d established=%d failed=%d round_trips=%d rt_per_s=%.0f"
                            + " p50_us=%.1f p99_us=%.1f verify=%s", queuePairs, established, failed, roundTrips,
                    roundTrips / seconds, latency.getValueAtPercentile(50) / 1000.0,
                    latency.getValueAtPercentile(99) / 1000.0, verified() ? "ok" : "FAILED");
        }
    }

    private final Plan plan;
    private final QpContext context;
    /** What each loop's queue pairs measured, written by that loop's thread alone; summed once the run is over. */
    private final Tally[] tallies;
    private final AtomicInteger failures = new AtomicInteger();
    private volatile String firstFailure;
    private volatile String firstLost;
    private volatile boolean running;

    private QpLoad(Plan plan, QpContext context) {
        this.plan = plan;
        this.context = context;
        this.tallies = new Tally[context.loops()];
        for (int i = 0; i < tallies.length; i++) {
            tallies[i] = new Tally();
        }
    }

    /** Runs {@code plan} on a context of its own of {@code loops} loop threads, each built as {@code loop} says. */
    static Result run(EventLoopConfig loop, int loops, Plan plan) throws Exception {
        try (QpContext context = QpContext.open(loop, loops)) {
            return new QpLoad(plan, context).run();
        }
    }

    private Result run() throws Exception {
        long opening = System.nanoTime();
        List<Driver> drivers = connectAll();
        int established = drivers.size();
        System.err.printf(Locale.ROOT, "qp-load: established %d queue pairs in %.1f ms%n", established,
                (System.nanoTime() - opening) / 1e6);
        CountDownLatch hellos = new CountDownLatch(established);
        for (Driver d : drivers) {
            d.awaitHello(hellos);
        }
        if (!hellos.await(plan.config().handshakeTimeout().toMillis() + 10_000, TimeUnit.MILLISECONDS)) {
            fail("not every server hello came: " + hellos.getCount() + " missing");
        }
        long start = System.nanoTime();
        running = true;
        // Each queue pair is driven on its own loop's thread: its posts and its completions have one thread.
        eachLoop(drivers, Driver::begin);
        Thread.sleep((long) (plan.seconds() * 1000));
        running = false;
        double seconds = (System.nanoTime() - start) / 1e9;
        long deadline = System.nanoTime() + DRAIN.toNanos();
        while (System.nanoTime() < deadline && !allDrained(drivers)) {
            Thread.sleep(5);
        }
        eachLoop(drivers, d -> tallies[d.qp.loop()].ended(d));
        Tally all = new Tally();
        for (Tally t : tallies) {
            all.add(t);
        }
        all.printShares(drivers.size());
        Result result = new Result(plan.queuePairs(), established, plan.queuePairs() - established + failures.get(),
                all.roundTrips, seconds, all.latency, all.mismatches + all.outstanding, firstFailure, firstLost);
        if (plan.holdSeconds() > 0) {
            System.err.println("qp-load: " + established + " queue pairs open and idle for " + plan.holdSeconds() + " s");
            Thread.sleep((long) (plan.holdSeconds() * 1000));
        }
        for (Driver d : drivers) {
            d.close();
        }
        return result;
    }

    /** Runs {@code action} for every driver on its queue pair's loop thread, a loop at a time. */
    private void eachLoop(List<Driver> drivers, Consumer<Driver> action) throws Exception {
        for (int loop = 0; loop < tallies.length; loop++) {
            int here = loop;
            context.runOnLoop(here, () -> {
                for (Driver d : drivers) {
                    if (d.qp.loop() == here) {
                        action.accept(d);
                    }
                }
            });
        }
    }

    /** Whether no queue pair has an operation sent and not answered, each looked at on its loop's thread. */
    private boolean allDrained(List<Driver> drivers) throws Exception {
        long[] outstanding = new long[1];
        eachLoop(drivers, d -> outstanding[0] += d.outstanding());
        return outstanding[0] == 0;
    }

    /**
     * What the queue pairs of one loop measured: recorded by that loop's thread, read after the run by a job on it
     * ({@link #ended}), so no two threads write one tally.
     */
    private static final class Tally {
        final Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        long roundTrips;
        long mismatches;
        /** Operations sent on live queue pairs and never answered: each counts as a mismatch once the run is over. */
        long outstanding;
        long minShare = Long.MAX_VALUE;
        long sumShares;

        /** Driver {@code d}'s part, once its loop is drained. */
        void ended(Driver d) {
            outstanding += d.outstanding();
            minShare = Math.min(minShare, d.measured);
            sumShares += d.measured;
        }

        void add(Tally t) {
            latency.add(t.latency);
            roundTrips += t.roundTrips;
            mismatches += t.mismatches;
            outstanding += t.outstanding;
            minShare = Math.min(minShare, t.minShare);
            sumShares += t.sumShares;
        }

        /** How evenly the queue pairs were served: the slowest one's round trips against the mean. */
        void printShares(int queuePairs) {
            if (queuePairs == 0) {
                return;
            }
            double mean = (double) sumShares / queuePairs;
            System.err.printf(Locale.ROOT, "qp-load: round trips per queue pair: min %d, mean %.1f, min/mean %.2f%n",
                    minShare, mean, mean > 0 ? minShare / mean : 0.0);
        }
    }

    private List<Driver> connectAll() throws InterruptedException {
        List<Driver> drivers = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(CONNECT_THREADS, plan.queuePairs()),
                Thread.ofPlatform().name("qp-load-connect").factory());
        try {
            List<Future<Driver>> opening = new ArrayList<>();
            for (int i = 0; i < plan.queuePairs(); i++) {
                int index = i;
                opening.add(pool.submit(() -> new Driver(index, context.connect(plan.server(), plan.config()))));
            }
            for (Future<Driver> f : opening) {
                try {
                    drivers.add(f.get());
                } catch (java.util.concurrent.ExecutionException e) {
                    fail("connect: " + e.getCause().getMessage());
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return drivers;
    }

    private void fail(String why) {
        if (firstFailure == null) {
            firstFailure = why;
        }
    }

    /** One queue pair of the load: its buffers, its operations in flight, in order. Loop thread once begun. */
    private final class Driver {
        private final int index;
        private final QueuePair qp;
        private final MemorySegment memory;
        private final MemoryRegion region;
        /** Per operation slot: the sequence number and the time it was posted; slots reused in order. */
        private final long[] seqOf;
        private final long[] postedAt;
        private final WorkRequest wr = new WorkRequest();
        private final WorkCompletion wc = new WorkCompletion();
        /** The tally of this queue pair's loop: written on that loop's thread only. */
        private final Tally tally;
        private CountDownLatch hello;
        /** Whether the server's hello came: the queue pair was established. */
        private boolean greeted;
        private int serverRkey;
        private long serverRegionBytes;
        private long serverSeed;
        private long nextSeq;
        private long answered;
        /** Round trips this queue pair made while the run was measured: its share, for the fairness line. */
        private long measured;
        private boolean over;

        Driver(int index, QueuePair qp) {
            this.index = index;
            this.qp = qp;
            // Slot k's outgoing bytes at k * size, its reply at (inflight + k) * size; the hello after them.
            this.memory = Arena.ofAuto().allocate(2L * plan.inflight() * plan.size() + QpServer.HELLO_BYTES, 64);
            this.region = context.register(memory, Access.ALL);
            this.seqOf = new long[plan.inflight()];
            this.postedAt = new long[plan.inflight()];
            this.tally = tallies[qp.loop()];
        }

        private long helloAt() {
            return 2L * plan.inflight() * plan.size();
        }

        private long outAt(int slot) {
            return (long) slot * plan.size();
        }

        private long replyAt(int slot) {
            return (long) (plan.inflight() + slot) * plan.size();
        }

        void awaitHello(CountDownLatch latch) {
            this.hello = latch;
            qp.postReceive(HELLO_ID, region.localKey(), helloAt(), QpServer.HELLO_BYTES);
            if (plan.op() == Op.SEND) {
                for (int slot = 0; slot < plan.inflight(); slot++) {
                    qp.postReceive(slot, region.localKey(), replyAt(slot), plan.size());
                }
            }
            qp.onCompletions(this::onCompletions);
        }

        /** Loop thread: the first operations. */
        void begin() {
            if (over || serverRkey == 0 && plan.op() == Op.READ) {
                return;
            }
            for (int slot = 0; slot < plan.inflight(); slot++) {
                post(slot);
            }
        }

        private void post(int slot) {
            long seq = nextSeq++;
            seqOf[slot] = seq;
            if (plan.op() == Op.SEND) {
                MessagePattern.fill(memory, outAt(slot), plan.size(), seq * 1_000_003L + index);
                wr.send(slot, region.localKey(), outAt(slot), plan.size()).unsignaled();
            } else {
                long offset = readOffset(seq);
                memory.asSlice(replyAt(slot), plan.size()).fill((byte) 0);
                wr.read(slot, region.localKey(), replyAt(slot), plan.size(), serverRkey, offset);
            }
            postedAt[slot] = System.nanoTime();
            if (!qp.postSend(wr)) {
                end("the send queue is full with " + plan.inflight() + " in flight");
            }
        }

        private void onCompletions() {
            while (!over && qp.poll(wc)) {
                if (!wc.isSuccess()) {
                    end(WorkCompletion.statusName(wc.status()) + ": " + qp.errorReason());
                    return;
                }
                long id = wc.workRequestId();
                if (id == HELLO_ID) {
                    onHello();
                    continue;
                }
                boolean reply = plan.op() == Op.SEND ? wc.opcode() == WorkCompletion.OP_RECV
                        : wc.opcode() == WorkCompletion.OP_RDMA_READ;
                if (reply) {
                    onReply((int) id);
                }
            }
            if (!over && qp.state() == QpState.ERROR) {
                end(qp.errorReason());
            }
        }

        private void onHello() {
            long at = helloAt();
            if (memory.get(INT, at) != QpServer.MAGIC) {
                end("the server's hello has magic 0x" + Integer.toHexString(memory.get(INT, at)));
                return;
            }
            serverRkey = memory.get(INT, at + 4);
            serverRegionBytes = memory.get(LONG, at + 8);
            serverSeed = memory.get(LONG, at + 16);
            if (plan.op() == Op.READ && serverRegionBytes < plan.size()) {
                end("the server's region of " + serverRegionBytes + " bytes is smaller than --size " + plan.size());
            }
            greeted = true;
            hello.countDown();
        }

        private void onReply(int slot) {
            long now = System.nanoTime();
            long seq = seqOf[slot];
            boolean ok;
            if (plan.op() == Op.SEND) {
                ok = wc.byteCount() == plan.size()
                        && MessagePattern.matches(memory, replyAt(slot), plan.size(), seq * 1_000_003L + index);
                qp.postReceive(slot, region.localKey(), replyAt(slot), plan.size());
            } else {
                ok = MessagePattern.matches(memory, replyAt(slot), plan.size(), serverSeed, readOffset(seq));
            }
            answered++;
            if (!ok) {
                tally.mismatches++;
            }
            if (running) {
                tally.roundTrips++;
                measured++;
                tally.latency.recordValue(Math.min(now - postedAt[slot], tally.latency.getHighestTrackableValue()));
                post(slot);
            }
        }

        /** Where READ {@code seq} reads the server's region: word-aligned, moving through it. */
        private long readOffset(long seq) {
            return (seq * plan.size()) % (serverRegionBytes - plan.size() + 1) & ~7L;
        }

        long outstanding() {
            return over ? 0 : nextSeq - answered;
        }

        private void end(String why) {
            if (over) {
                return;
            }
            over = true;
            failures.incrementAndGet();
            fail("queue pair " + index + ": " + why);
            if (firstLost == null && greeted) {
                firstLost = "queue pair " + index + ": " + why;
            }
            if (hello != null) {
                hello.countDown();
            }
        }

        void close() {
            qp.close();
            try {
                context.deregister(region);
            } catch (IllegalStateException stillLent) {
                // The context's close frees what is left; its memory is GC-freed once unreachable.
            }
        }
    }
}
