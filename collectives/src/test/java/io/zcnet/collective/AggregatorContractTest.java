package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.qp.QpContext;
import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Allreduce through an {@link Aggregator} (docs/wire-format.md, section 20; collectives.md, "Aggregation in the
 * network"), on each engine: results checked element by element as the host algorithms' are, and the aggregator's
 * counters checked so that a test passes only when its data really went the way it says; the fallbacks to the
 * hosts (no aggregator, refused, a type it does not take, killed in the middle); and the isolation of jobs: a
 * duplicate never counted twice, a hostile job failing alone while another runs.
 */
abstract class AggregatorContractTest {
    private static final byte[] SECRET = "aggregator-test-job-secret".getBytes(StandardCharsets.US_ASCII);

    protected abstract EventLoopConfig.Choice engine();

    private AggregatorConfig aggregatorConfig() {
        return AggregatorConfig.defaults().withEngine(engine()).withOpen(true);
    }

    private static CommunicatorConfig ranks(int job, int slots, int chunk, InetSocketAddress... aggregators) {
        return CommunicatorConfig.defaults().withSlots(2, 4096).withTimeouts(Duration.ofSeconds(20),
                Duration.ofSeconds(30)).withAggregation(new AggregationConfig(job, List.of(aggregators), slots, chunk));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void everyTypeAndReductionGoesThroughTheAggregatorAndComesBackExact() throws Exception {
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), aggregatorConfig());
             RankGroup group = RankGroup.start(4, engine(), ranks(1, 4, 1024, a.address()))) {
            group.run(c -> {
                try (Arena arena = Arena.ofConfined()) {
                    Matrix m = new Matrix(c, arena);
                    for (DataType type : DataType.values()) {
                        for (ReduceOp op : ReduceOp.values()) {
                            m.allreduce(Algorithm.AUTO, type, op, 1000, false);  // several chunks, the last short
                            m.allreduce(Algorithm.AUTO, type, op, 3, true);
                        }
                    }
                    m.allreduce(Algorithm.AUTO, DataType.FLOAT, ReduceOp.SUM, 200_000, true);
                }
            });
            // Per type and reduction 1000 elements are ceil(1000 * size / 1024) chunks, and 3 elements one.
            long chunks = 0;
            for (DataType type : DataType.values()) {
                chunks += ReduceOp.values().length * ((1000L * type.byteSize() + 1023) / 1024 + 1);
            }
            chunks += 200_000L * 4 / 1024 + 1;
            assertEquals(chunks, a.statistics().chunks(), "every chunk was reduced at the aggregator, once");
            assertEquals(0, a.statistics().failed());
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void busyPollingRanksReduceExactlyThroughABusyPollingAggregator() throws Exception {
        // Both ends poll: a rank's wait for its result turns its own loop without sleeping, and the results are
        // acknowledged by the next chunks, so a slot taken again many times over must still be freed in time.
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0),
                aggregatorConfig().withBusyPoll(true));
             RankGroup group = RankGroup.start(4, engine(), ranks(1, 4, 1024, a.address()).withBusyPoll(true))) {
            group.run(c -> {
                floatSums(c, 3, 300);
                floatSums(c, 20_000, 3);
            });
            assertEquals(300 + 3 * (20_000L * 4 / 1024 + 1), a.statistics().chunks(),
                    "every allreduce went through the aggregator");
            assertEquals(0, a.statistics().failed());
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aggregatedAllreducesAllocateNothingOnTheRanksThreadOnceWarm() throws Exception {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), aggregatorConfig());
             RankGroup group = RankGroup.start(2, engine(), ranks(1, 4, 4096, a.address()))) {
            group.run(c -> {
                try (Arena arena = Arena.ofShared()) {
                    MemorySegment buffer = arena.allocate(64 * 1024, 64);
                    int warm = 2000;
                    int timed = 500;
                    for (int i = 0; i < warm; i++) {
                        c.allreduce(buffer, 16 * 1024, DataType.FLOAT, ReduceOp.SUM);
                    }
                    long before = threads.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < timed; i++) {
                        c.allreduce(buffer, 16 * 1024, DataType.FLOAT, ReduceOp.SUM);
                    }
                    long perOperation = (threads.getCurrentThreadAllocatedBytes() - before) / timed;
                    assertTrue(perOperation < 16, "rank " + c.rank() + " allocated " + perOperation
                            + " bytes per aggregated allreduce");
                }
            });
            assertEquals(2500 * 16, a.statistics().chunks(), "every allreduce went through the aggregator");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aJobProvesItsSecretAndAStrangerWithAnotherFallsBackToItsHosts() throws Exception {
        AggregatorConfig config = AggregatorConfig.defaults().withEngine(engine()).withJob(5, SECRET);
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), config)) {
            try (RankGroup group = RankGroup.start(3, engine(), ranks(5, 4, 1024, a.address()).withJobSecret(SECRET))) {
                group.run(c -> floatSums(c, 10_000, 2));
            }
            long aggregated = a.statistics().chunks();
            assertEquals(2 * ((10_000L * 4 + 1023) / 1024), aggregated, "the job with its secret was aggregated");
            byte[] other = SECRET.clone();
            other[0] ^= 1;
            try (RankGroup group = RankGroup.start(3, engine(), ranks(5, 4, 1024, a.address()).withJobSecret(other))) {
                group.run(c -> floatSums(c, 10_000, 2));
            }
            try (RankGroup group = RankGroup.start(3, engine(), ranks(6, 4, 1024, a.address()))) {
                group.run(c -> floatSums(c, 10_000, 1));
            }
            assertEquals(aggregated, a.statistics().chunks(), "a wrong secret and an unknown job were not aggregated");
            assertTrue(a.statistics().refused() >= 6, "every rank of both was refused: " + a.statistics());
            assertEquals(0, a.statistics().jobs(), "the refused jobs hold nothing");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void withNoAggregatorListeningTheHostsReduceAndTheNextCloserOneIsUsedFirst() throws Exception {
        InetSocketAddress nobody;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            nobody = new InetSocketAddress("127.0.0.1", s.getLocalPort());
        }
        try (RankGroup group = RankGroup.start(2, engine(), ranks(1, 4, 1024, nobody))) {
            group.run(c -> floatSums(c, 5000, 3));
        }
        // Two aggregators: the one on the ranks' own address (127.0.0.1) is closer than 127.0.0.2's, though listed
        // second; when it is gone (closed here), the ranks go on with the other.
        try (Aggregator far = Aggregator.start(new InetSocketAddress("127.0.0.2", 0), aggregatorConfig());
             Aggregator near = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), aggregatorConfig());
             RankGroup group = RankGroup.start(2, engine(), ranks(1, 4, 1024, far.address(), near.address()))) {
            group.run(c -> floatSums(c, 5000, 1));
            assertEquals(20, near.statistics().chunks());
            assertEquals(0, far.statistics().chunks());
            near.close();
            group.run(c -> floatSums(c, 5000, 3)); // the first fails and finishes on the hosts, then the other
            assertEquals(40, far.statistics().chunks(), "the next aggregator took over: " + far.statistics());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aTypeTheAggregatorDoesNotTakeAndAJobOverItsQuotaRunOnTheHosts() throws Exception {
        AggregatorConfig floatsOnly = aggregatorConfig().withOperations(EnumSet.of(DataType.FLOAT),
                EnumSet.of(ReduceOp.SUM));
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), floatsOnly);
             RankGroup group = RankGroup.start(3, engine(), ranks(1, 4, 1024, a.address()))) {
            group.run(c -> {
                try (Arena arena = Arena.ofConfined()) {
                    Matrix m = new Matrix(c, arena);
                    m.allreduce(Algorithm.AUTO, DataType.DOUBLE, ReduceOp.SUM, 1000, false);
                    m.allreduce(Algorithm.AUTO, DataType.FLOAT, ReduceOp.SUM, 1000, false);
                    m.allreduce(Algorithm.AUTO, DataType.FLOAT, ReduceOp.MAX, 1000, true);
                    m.allreduce(Algorithm.AUTO, DataType.FLOAT, ReduceOp.SUM, 1000, true);
                }
            });
            assertEquals(2 * 4, a.statistics().chunks(), "only the two float sums went to the aggregator");
        }
        AggregatorConfig tiny = aggregatorConfig().withQuotas(4, 16, 1 << 20, 4096, 1 << 20);
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), tiny);
             RankGroup group = RankGroup.start(3, engine(), ranks(1, 4, 1024, a.address()))) {
            group.run(c -> floatSums(c, 1000, 2));
            assertEquals(0, a.statistics().chunks());
            assertTrue(a.statistics().refused() >= 1, a.statistics().toString());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void anAggregatorClosedInTheMiddleLeavesEveryChunkCountedOnce() throws Exception {
        Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), aggregatorConfig());
        try (RankGroup group = RankGroup.start(4, engine(), ranks(1, 4, 1024, a.address()))) {
            AtomicLong stop = new AtomicLong();
            Thread killer = Thread.ofPlatform().start(() -> {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (a.statistics().chunks() < 300 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                stop.set(a.statistics().chunks());
                a.close();
            });
            group.run(c -> floatSums(c, 1 << 20, 1)); // 4 MiB: 4096 chunks, the aggregator goes after about 300
            killer.join();
            assertTrue(stop.get() >= 300 && stop.get() < 4096, "closed in the middle, after " + stop.get() + " chunks");
            group.run(c -> floatSums(c, 1000, 2)); // and the hosts go on alone
        } finally {
            a.close();
        }
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void anAggregatorProcessKilledWithSigkillMidAllreduceLeavesEveryChunkCountedOnce() throws Exception {
        try (Children children = new Children()) {
            Children.Child aggregator = children.start(Children.java(engine().name().toLowerCase(java.util.Locale.ROOT),
                    AggregatorProcess.class), java.util.Map.of());
            String first = aggregator.out().poll(30, TimeUnit.SECONDS);
            assertTrue(first != null && first.startsWith("listening "), "the aggregator says where: " + first);
            InetSocketAddress at = new InetSocketAddress("127.0.0.1", Integer.parseInt(first.substring(10)));
            try (RankGroup group = RankGroup.start(4, engine(), ranks(1, 8, 1024, at))) {
                group.run(c -> floatSums(c, 1000, 1)); // joined, and aggregated
                AtomicLong killedAfter = new AtomicLong(-1);
                Thread killer = Thread.ofPlatform().start(() -> {
                    try {
                        for (String line; (line = aggregator.out().poll(30, TimeUnit.SECONDS)) != null; ) {
                            long chunks = Long.parseLong(line.substring(7));
                            if (chunks >= 500) {
                                aggregator.process().destroyForcibly(); // SIGKILL: no REFUSE, no FIN from it
                                killedAfter.set(chunks);
                                return;
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                // 4 MiB in 1 KiB chunks: 4096 of them, the aggregator killed after about 500.
                group.run(c -> floatSums(c, 1 << 20, 1));
                killer.join();
                assertTrue(killedAfter.get() >= 500 && killedAfter.get() < 4 + 4096, "killed in the middle, after "
                        + killedAfter.get() + " chunks");
                assertTrue(aggregator.process().waitFor(10, TimeUnit.SECONDS));
                group.run(c -> floatSums(c, 10_000, 2)); // the hosts alone from now on
            }
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aResultThatReachedOnlySomeRanksIsBroadcastFromThemAndTheRestReducedOnTheHosts() throws Exception {
        try (QpContext context = QpContext.open(engine());
             PartialAggregator partial = new PartialAggregator(context, 4, 4, 1024, 200)) {
            Thread serving = serve(partial);
            try (RankGroup group = RankGroup.start(4, engine(), ranks(1, 4, 1024, partial.address()))) {
                // 1 MiB of floats in 1 KiB chunks: chunk 200's sum reaches ranks 0 and 1 only, in place.
                group.run(c -> floatSums(c, 1 << 18, 1));
                group.run(c -> floatSums(c, 1000, 1));
            }
            serving.join();
            assertEquals(201, partial.sent, "the aggregator failed at chunk 200");
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aOneChunkResultThatReachedOnlySomeRanksIsSentToTheOthersAtTheirNextCall() throws Exception {
        // One-chunk allreduces return with no vote: the sum of chunk 3 reaches ranks 0 and 1 only, which return
        // with it; ranks 2 and 3 get it from them at their next call, an aggregated allreduce or a broadcast.
        for (boolean nextAggregated : new boolean[] {true, false}) {
            try (QpContext context = QpContext.open(engine());
                 PartialAggregator partial = new PartialAggregator(context, 4, 4, 1024, 3)) {
                Thread serving = serve(partial);
                try (RankGroup group = RankGroup.start(4, engine(), ranks(1, 4, 1024, partial.address()))) {
                    group.run(c -> {
                        floatSums(c, 200, 4);
                        if (nextAggregated) {
                            floatSums(c, 200, 2);
                        } else {
                            broadcastFrom(c, 3, 500);
                        }
                        floatSums(c, 3000, 1);
                    });
                }
                serving.join();
                assertEquals(4, partial.sent, "the aggregator failed at chunk 3");
            }
        }
    }

    /** {@return a thread running {@code partial} until it fails on purpose} */
    private static Thread serve(PartialAggregator partial) {
        return Thread.ofPlatform().start(() -> {
            try {
                partial.run();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
    }

    private static void broadcastFrom(Communicator c, int root, int count) throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(count * 4L, 64);
            for (int i = 0; i < count; i++) {
                buffer.setAtIndex(ValueLayout.JAVA_FLOAT, i, c.rank() == root ? i : -1);
            }
            c.broadcast(buffer, count, DataType.FLOAT, root);
            for (int i = 0; i < count; i++) {
                if (buffer.getAtIndex(ValueLayout.JAVA_FLOAT, i) != i) {
                    throw new AssertionError("rank " + c.rank() + ": element " + i + " of the broadcast is "
                            + buffer.getAtIndex(ValueLayout.JAVA_FLOAT, i));
                }
            }
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aDuplicateIsNeverCountedTwiceAndAHostileJobFailsAloneWhileAnotherRuns() throws Exception {
        try (Aggregator a = Aggregator.start(new InetSocketAddress("127.0.0.1", 0), aggregatorConfig());
             QpContext context = QpContext.open(engine())) {
            // Job 20, two ranks of the test's own: rank 0 sends its chunk twice, once flagged as a resend.
            try (NacaPeer r0 = new NacaPeer(context, a.address()); NacaPeer r1 = new NacaPeer(context, a.address())) {
                assertEquals(NacaHeader.ACCEPT, join(r0, r1, 20).type());
                r0.chunk(0, 20, 1, 2, 0, 0, 0, new float[] {1, 2, 3}, 0);
                r0.chunk(NacaHeader.FLAG_RESEND, 20, 1, 2, 0, 0, 0, new float[] {1, 2, 3}, 0);
                r0.chunk(0, 20, 1, 2, 0, 0, 0, new float[] {1, 2, 3}, 0);
                awaitDuplicates(a, 2);
                r1.chunk(0, 20, 1, 2, 1, 0, 0, new float[] {10, 20, 30}, 0);
                assertArrayEquals(new float[] {11, 22, 33}, r0.next().data());
                assertArrayEquals(new float[] {11, 22, 33}, r1.next().data());
                // Resent after its result, chunk 0 is dropped too; chunk 1 then sums as it should.
                r1.chunk(NacaHeader.FLAG_RESEND, 20, 1, 2, 1, 0, 0, new float[] {10, 20, 30}, 0);
                awaitDuplicates(a, 3);
                r0.chunk(0, 20, 1, 2, 0, 0, 1, new float[] {4, 5, 6}, 0);
                r1.chunk(0, 20, 1, 2, 1, 0, 1, new float[] {40, 50, 60}, 0);
                assertArrayEquals(new float[] {44, 55, 66}, r0.next().data());
                assertArrayEquals(new float[] {44, 55, 66}, r1.next().data());
                assertEquals(3, a.statistics().duplicates());
                assertEquals(2, a.statistics().resends());
                assertEquals(0, a.statistics().failed());
            }
            // While a job of four communicator ranks streams, hostile jobs break a rule each: every one fails alone.
            try (RankGroup group = RankGroup.start(4, engine(), ranks(1, 4, 1024, a.address()))) {
                long before = a.statistics().chunks();
                Thread hostile = Thread.ofPlatform().start(() -> {
                    try {
                        hostileJobs(context, a.address());
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                });
                group.run(c -> floatSums(c, 100_000, 5));
                hostile.join();
                assertEquals(before + 5 * ((100_000L * 4 + 1023) / 1024), a.statistics().chunks(),
                        "the honest job was aggregated throughout");
                assertEquals(6, a.statistics().failed(), "each hostile job failed: " + a.statistics());
            }
        }
    }

    private static void awaitDuplicates(Aggregator a, long n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (a.statistics().duplicates() < n && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertEquals(n, a.statistics().duplicates(), "duplicates dropped");
    }

    private static NacaPeer.Message join(NacaPeer r0, NacaPeer r1, int job) throws Exception {
        r0.join(job, 2, 0, 1, 4096, null);
        r1.join(job, 2, 1, 1, 4096, null);
        NacaPeer.Message first = r0.next();
        assertEquals(first.type(), r1.next().type());
        return first;
    }

    /** Six jobs of one rank each, each breaking one rule of section 20.4 after its ACCEPT; each must be refused. */
    private static void hostileJobs(QpContext context, InetSocketAddress aggregator) throws Exception {
        record Breach(String what, int dtype, int slot, long sequence, int extraBytes, int job, int count) {
        }
        List<Breach> breaches = List.of(
                new Breach("elements split", 1, 0, 0, 2, 30, 3),
                new Breach("a slot not granted", 1, 1, 1, 0, 31, 3),
                new Breach("a sequence not due", 1, 0, 2, 0, 32, 3),
                new Breach("another job's number", 1, 0, 0, 0, 1, 3),
                new Breach("over the chunk granted", 1, 0, 0, 0, 34, 1025),
                new Breach("an unknown dtype", 9, 0, 0, 0, 35, 3));
        int job = 30;
        for (Breach b : breaches) {
            try (NacaPeer p = new NacaPeer(context, aggregator)) {
                int id = job++;
                p.join(id, 1, 0, 1, 4096, null);
                NacaPeer.Message accept = p.next();
                assertEquals(NacaHeader.ACCEPT, accept.type(), b.what());
                p.chunk(0, b.job() == 1 ? 1 : id, b.dtype(), 1, 0, b.slot(), b.sequence(), new float[b.count()],
                        b.extraBytes());
                NacaPeer.Message refused = p.next();
                assertEquals(NacaHeader.REFUSE, refused.type(), b.what() + ": " + refused);
                assertEquals(0, refused.flags() & NacaHeader.FLAG_FALLBACK, b.what());
            }
        }
    }

    /** {@code times} in-place float sums of {@code count} elements, checked exactly (integer values). */
    private static void floatSums(Communicator c, int count, int times) throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(count * 4L, 64);
            for (int t = 0; t < times; t++) {
                for (int i = 0; i < count; i++) {
                    buffer.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) ((i + t) % 1000 + c.rank()));
                }
                c.allreduce(buffer, count, DataType.FLOAT, ReduceOp.SUM);
                int size = c.size();
                for (int i = 0; i < count; i++) {
                    float want = (float) (size * ((i + t) % 1000) + size * (size - 1) / 2);
                    if (buffer.getAtIndex(ValueLayout.JAVA_FLOAT, i) != want) {
                        throw new AssertionError("rank " + c.rank() + " operation " + t + ": element " + i + " is "
                                + buffer.getAtIndex(ValueLayout.JAVA_FLOAT, i) + ", not " + want);
                    }
                }
            }
        }
    }
}
