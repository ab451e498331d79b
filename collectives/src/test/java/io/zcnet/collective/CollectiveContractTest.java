package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.qp.QpState;
import io.zcnet.qp.QueuePair;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The communicator's operations on one engine, ranks as threads over loopback: the whole matrix for 1 to 8
 * ranks with small slots (so a few thousand elements are many pieces and loops), a few large operations
 * with the default slots, many operations in a row, and the errors: disagreeing ranks, a rank that never
 * comes, and a rank that fails mid-operation. The matrix and the errors run both ways an operation can
 * run ({@link Where}). Subclassed once per engine.
 */
@Timeout(300)
abstract class CollectiveContractTest {
    protected abstract EventLoopConfig.Choice engine();

    /** Two slots of 4 KiB: pieces of 1024 floats, so the pipelining and deadlock rules are exercised small. */
    static CommunicatorConfig smallSlots() {
        return CommunicatorConfig.defaults().withSlots(2, 4096);
    }

    /** Where the operations of a test run: the two paths of {@link Communicator}, each with all its waits. */
    enum Where {
        /** Every operation on the loop thread: shared memory, and no size limit below the tests' largest. */
        LOOP_THREAD,
        /**
         * Every operation on the calling thread: memory confined to it, which the loop thread may not touch, and
         * no limit, so that a barrier (which has no memory) stays there too.
         */
        CALLER;

        CommunicatorConfig config(CommunicatorConfig base) {
            return base.withLoopThreadBytes(this == LOOP_THREAD ? 1L << 30 : 0);
        }

        Arena arena() {
            return this == LOOP_THREAD ? Arena.ofShared() : Arena.ofConfined();
        }
    }

    static Stream<Arguments> sizesAndPaths() {
        return Stream.of(Where.values()).flatMap(w -> Stream.of(1, 2, 3, 4, 5, 6, 7, 8).map(n -> Arguments.of(n, w)));
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("sizesAndPaths")
    void everyOperationMatchesASequentialReference(int size, Where where) throws Exception {
        try (RankGroup group = RankGroup.start(size, engine(), where.config(smallSlots()))) {
            group.run(c -> {
                try (Arena arena = where.arena()) {
                    everyOperation(new Matrix(c, arena), size);
                }
            });
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Where.class)
    void busyPollingRanksMatchTheReferenceToo(Where where) throws Exception {
        int size = 3;
        CommunicatorConfig config = where.config(smallSlots()).withBusyPoll(true);
        try (RankGroup group = RankGroup.start(size, engine(), config)) {
            group.run(c -> {
                assertTrue(c.config().busyPoll(), "the rank runs with the configuration given");
                try (Arena arena = where.arena()) {
                    everyOperation(new Matrix(c, arena), size);
                }
            });
            // A busy-polling rank is driven by the thread that joined: a call from any other is refused, at once
            // and changing nothing (closing the group below still takes every rank through a barrier).
            IllegalStateException refused = assertThrows(IllegalStateException.class, group.ranks[1]::barrier);
            assertTrue(refused.getMessage().contains("rank-1"), refused.getMessage());
        }
    }

    static Stream<Arguments> sizesAndSharing() {
        return Stream.of(2, 4, 8).flatMap(n -> Stream.of(CoreSharing.SHARED, CoreSharing.DEDICATED).map(s -> Arguments.of(n, s)));
    }

    @ParameterizedTest(name = "{0} ranks, {1}")
    @MethodSource("sizesAndSharing")
    void smallAllreducesFoldRanksInPairsOnlyWhenTheyShareCores(int size, CoreSharing sharing) throws Exception {
        CommunicatorConfig config = Where.CALLER.config(smallSlots());
        try (RankGroup group = RankGroup.start(size, engine(), config.withCoreSharing(sharing))) {
            group.run(c -> {
                boolean folds = sharing == CoreSharing.SHARED && size >= 4;
                assertEquals(sharing == CoreSharing.SHARED, c.coresShared());
                try (Arena arena = Arena.ofConfined()) {
                    Matrix m = new Matrix(c, arena);
                    long before = c.rank() == 0 ? Probe.messagesSentTo(c, size / 2) : 0;
                    boolean inPlace = false;
                    for (DataType type : DataType.values()) {
                        for (ReduceOp op : ReduceOp.values()) {
                            for (long count : new long[] {1, size + 1, HalvingDoubling.DOUBLING_BYTES / type.byteSize()}) {
                                m.allreduce(Algorithm.HALVING_DOUBLING, type, op, count, inPlace = !inPlace);
                            }
                        }
                    }
                    if (c.rank() == 0) {
                        // Folded, rank 0 hands its data to rank 1 and gets the result back: it never talks to the
                        // rank half-way round, its last partner in recursive doubling among all.
                        long sent = Probe.messagesSentTo(c, size / 2) - before;
                        assertEquals(folds, sent == 0, () -> "rank 0 sent " + sent + " messages to rank " + size / 2);
                    }
                }
            });
        }
    }

    @ParameterizedTest(name = "middle ranks on one CPU: {0}")
    @ValueSource(booleans = {true, false})
    void fourRanksSharingCoresMoveTheMiddleStepOffTheCoreItsRanksShare(boolean oneCpu) throws Exception {
        CommunicatorConfig config = Where.CALLER.config(smallSlots()).withCoreSharing(CoreSharing.SHARED);
        try (RankGroup group = RankGroup.start(4, engine(), config)) {
            group.run(c -> {
                // Every rank on "CPU 7": the middle ranks always share it, so ranks 0 and 1 swap roles after every
                // operation. Or each on a CPU of its own: rank 1 keeps the middle step.
                Probe.reportCpu(c, oneCpu ? () -> 7 : c::rank);
                int operations = 6;
                long before = c.rank() < 2 ? Probe.messagesSentTo(c, 3) : 0;
                try (Arena arena = Arena.ofConfined()) {
                    Matrix m = new Matrix(c, arena);
                    for (int i = 0; i < operations; i++) {
                        m.allreduce(Algorithm.HALVING_DOUBLING, i % 2 == 0 ? DataType.FLOAT : DataType.LONG, ReduceOp.SUM,
                                i + 1, i % 3 == 0);
                    }
                }
                if (c.rank() < 2) {
                    // The survivor of ranks 0 and 1 is the one that talks to rank 3: rank 1 first, then by turns.
                    long sent = Probe.messagesSentTo(c, 3) - before;
                    long expected = oneCpu ? operations / 2 : c.rank() == 1 ? operations : 0;
                    assertEquals(expected, sent, () -> "rank " + c.rank() + " sent " + sent + " messages to rank 3");
                }
            });
        }
    }

    private static void everyOperation(Matrix m, int size) throws Exception {
        boolean inPlace = false;
        for (Algorithm algorithm : new Algorithm[] {Algorithm.RING, Algorithm.HALVING_DOUBLING}) {
            for (DataType type : DataType.values()) {
                for (ReduceOp op : ReduceOp.values()) {
                    for (long count : new long[] {size + 1, 3001}) {
                        m.allreduce(algorithm, type, op, count, inPlace = !inPlace);
                    }
                }
            }
            for (long count : m.counts()) {
                m.allreduce(algorithm, DataType.FLOAT, ReduceOp.SUM, count, inPlace = !inPlace);
                m.allreduce(algorithm, DataType.LONG, ReduceOp.MAX, count, inPlace = !inPlace);
            }
        }
        for (DataType type : new DataType[] {DataType.FLOAT, DataType.INT, DataType.DOUBLE, DataType.BFLOAT16}) {
            for (ReduceOp op : ReduceOp.values()) {
                m.reduceScatter(type, op, uniform(size, 700), inPlace = !inPlace);
                m.reduceScatter(type, op, uneven(size, 333), inPlace = !inPlace);
            }
        }
        m.reduceScatter(DataType.FLOAT16, ReduceOp.SUM, uniform(size, 1), false);
        // Blocks of several loops of slices: the next loop's slices leave during the last step's receives.
        m.reduceScatter(DataType.FLOAT, ReduceOp.SUM, uniform(size, 5000), inPlace = !inPlace);
        for (Algorithm algorithm : new Algorithm[] {Algorithm.RING, Algorithm.DIRECT}) {
            for (DataType type : new DataType[] {DataType.FLOAT, DataType.LONG, DataType.FLOAT16}) {
                for (long count : new long[] {1, 1000, 2500}) {
                    m.allgather(algorithm, type, uniform(size, count), inPlace = !inPlace);
                }
                m.allgather(algorithm, type, uneven(size, 1200), inPlace = !inPlace);
            }
        }
        for (Algorithm algorithm : new Algorithm[] {Algorithm.TREE, Algorithm.RING, Algorithm.DIRECT}) {
            for (int root : new int[] {0, size / 2, size - 1}) {
                for (long count : new long[] {1, 1000, 5003}) {
                    m.broadcast(algorithm, DataType.INT, count, root);
                }
            }
            m.broadcast(algorithm, DataType.DOUBLE, 777, size - 1);
        }
        for (Algorithm algorithm : new Algorithm[] {Algorithm.TREE, Algorithm.RING}) {
            for (int root : new int[] {0, size / 2, size - 1}) {
                for (ReduceOp op : ReduceOp.values()) {
                    m.reduce(algorithm, DataType.FLOAT, op, 3001, root, inPlace = !inPlace);
                }
                m.reduce(algorithm, DataType.LONG, ReduceOp.SUM, size + 1, root, inPlace = !inPlace);
                m.reduce(algorithm, DataType.FLOAT16, ReduceOp.MAX, 1000, root, inPlace = !inPlace);
                // Several loops, where most ranks skip the last step's receives altogether.
                m.reduce(algorithm, DataType.INT, ReduceOp.SUM, 5000L * size + 7, root, inPlace = !inPlace);
            }
        }
        for (long count : new long[] {1, 700, 2100}) {
            m.allToAll(DataType.FLOAT, square(size, count), true);
        }
        long[][] counts = new long[size][size];
        for (int q = 0; q < size; q++) {
            for (int p = 0; p < size; p++) {
                counts[q][p] = (q * 3L + p * 5L) % 7 * 300 + q;
            }
        }
        m.allToAll(DataType.INT, counts, false);
        m.allToAll(DataType.DOUBLE, counts, false);
    }

    private static long[] uniform(int size, long count) {
        long[] counts = new long[size];
        Arrays.fill(counts, count);
        return counts;
    }

    /** Counts that differ per rank, one of them 0 when there are several ranks. */
    private static long[] uneven(int size, long base) {
        long[] counts = new long[size];
        for (int r = 0; r < size; r++) {
            counts[r] = r == 1 ? 0 : base + r * 37L;
        }
        return counts;
    }

    private static long[][] square(int size, long count) {
        long[][] counts = new long[size][];
        for (int q = 0; q < size; q++) {
            counts[q] = uniform(size, count);
        }
        return counts;
    }

    @Test
    void largeOperationsWithTheDefaultSlots() throws Exception {
        try (RankGroup group = RankGroup.start(3, engine(), CommunicatorConfig.defaults())) {
            group.run(c -> {
                try (Arena arena = Arena.ofConfined()) {
                    Matrix m = new Matrix(c, arena);
                    m.allreduce(Algorithm.RING, DataType.FLOAT, ReduceOp.SUM, 8L << 20, true); // 32 MiB
                    m.allreduce(Algorithm.HALVING_DOUBLING, DataType.INT, ReduceOp.MAX, (1L << 20) + 3, false);
                    m.allreduce(Algorithm.AUTO, DataType.DOUBLE, ReduceOp.SUM, (1L << 19) + 5, false);
                    m.broadcast(Algorithm.AUTO, DataType.LONG, (1L << 18) + 1, 1);
                    m.allgather(Algorithm.AUTO, DataType.FLOAT, uniform(3, 1L << 18), false);
                }
            });
        }
    }

    @Test
    void severalSubflowsPerQueuePair() throws Exception {
        CommunicatorConfig config = smallSlots().withQueuePairs(smallSlots().queuePairs().withSubflows(3));
        try (RankGroup group = RankGroup.start(3, engine(), config)) {
            group.run(c -> {
                try (Arena arena = Arena.ofConfined()) {
                    Matrix m = new Matrix(c, arena);
                    m.allreduce(Algorithm.RING, DataType.FLOAT, ReduceOp.SUM, 300_007, false);
                    m.allToAll(DataType.INT, square(3, 50_001), true);
                }
            });
        }
    }

    @Test
    void aRankThatNeverJoinsFailsTheRendezvousNamingIt() throws Exception {
        CommunicatorConfig config = smallSlots().withEngine(engine()).withHostStore(false)
                .withTimeouts(Duration.ofSeconds(30), Duration.ofMillis(2500));
        // A thread per rank: the common pool has one worker on two cores, and rank 1 would wait behind rank 0.
        try (RendezvousServer store = RendezvousServer.start(new InetSocketAddress("127.0.0.1", 0), 3,
                config.connectTimeout());
             ExecutorService ranks = Executors.newFixedThreadPool(2)) {
            List<CompletableFuture<Communicator>> joining = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                joining.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return Communicator.rendezvous(rank, 3, store.address(), config);
                    } catch (IOException e) {
                        throw new CompletionException(e);
                    }
                }, ranks));
            }
            for (var f : joining) {
                ExecutionException e = assertThrows(ExecutionException.class,
                        () -> f.get(20, TimeUnit.SECONDS));
                assertTrue(e.getCause().getMessage().contains("ranks [2] did not join"), e.getCause()::getMessage);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void manyOperationsInARowOfEveryKind(Where where) throws Exception {
        // One slot per peer: every message waits for the one before it to be consumed, the tightest flow control.
        CommunicatorConfig oneSlot = where.config(CommunicatorConfig.defaults().withSlots(1, 2048));
        try (RankGroup group = RankGroup.start(3, engine(), oneSlot)) {
            group.run(c -> {
                try (Arena arena = where.arena()) {
                    Matrix m = new Matrix(c, arena);
                    for (int i = 0; i < 300; i++) {
                        long count = 1 + i * 37L % 2000;
                        switch (i % 5) {
                            case 0 -> m.allreduce(Algorithm.AUTO, DataType.FLOAT, ReduceOp.SUM, count, i % 2 == 0);
                            case 1 -> m.broadcast(Algorithm.AUTO, DataType.INT, count, i % 3);
                            case 2 -> c.barrier();
                            case 3 -> m.allgather(Algorithm.AUTO, DataType.INT, uniform(3, count), false);
                            default -> m.reduce(Algorithm.AUTO, DataType.LONG, ReduceOp.MIN, count, i % 3, false);
                        }
                    }
                }
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void ranksThatDisagreeOnTheCountFailInsteadOfMixingData(Where where) throws Exception {
        List<String> messages = new CopyOnWriteArrayList<>();
        try (RankGroup group = RankGroup.start(2, engine(), where.config(smallSlots()))) {
            group.run(c -> {
                try (Arena arena = where.arena()) {
                    MemorySegment data = arena.allocate(4000);
                    long count = c.rank() == 0 ? 100 : 200;
                    CollectiveException e = assertThrows(CollectiveException.class,
                            () -> c.allreduce(data, count, DataType.FLOAT, ReduceOp.SUM));
                    assertEquals(1 - c.rank(), e.peer(), e::getMessage);
                    messages.add(e.getMessage());
                    CollectiveException later = assertThrows(CollectiveException.class, c::barrier);
                    assertTrue(later.getMessage().contains("broken"), later::getMessage);
                }
            });
        }
        // The rank that sees the other's message first says why; the other may only see its link end.
        assertTrue(messages.stream().anyMatch(m -> m.contains("the ranks passed different counts")),
                messages::toString);
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void ranksThatCallDifferentOperationsFail(Where where) throws Exception {
        try (RankGroup group = RankGroup.start(3, engine(), where.config(smallSlots()))) {
            group.run(c -> {
                try (Arena arena = where.arena()) {
                    MemorySegment data = arena.allocate(4000);
                    // Settles every link's first receive credits: a WRITE waiting for its peer's first credit
                    // is flushed, never sent, when its rank fails first and closes its queue pairs.
                    c.barrier();
                    // The root of a broadcast only sends, so it may learn of the mismatch only in its next call.
                    CollectiveException e = assertThrows(CollectiveException.class, () -> {
                        if (c.rank() == 0) {
                            c.broadcast(data, 100, DataType.INT, 0, Algorithm.RING);
                        } else {
                            c.allreduce(data, data, 100, DataType.INT, ReduceOp.SUM, Algorithm.RING);
                        }
                        c.barrier();
                    });
                    if (c.rank() == 1) {
                        assertTrue(e.getMessage().contains("same operations"), e::getMessage);
                        assertEquals(0, e.peer(), e::getMessage);
                    }
                }
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void aRankThatNeverComesFailsTheOthersWithinTheTimeout(Where where) throws Exception {
        Duration timeout = Duration.ofMillis(800);
        CommunicatorConfig config = where.config(smallSlots().withTimeouts(timeout, Duration.ofSeconds(30)));
        try (RankGroup group = RankGroup.start(3, engine(), config)) {
            group.run(c -> {
                if (c.rank() == 2) {
                    return; // sits this operation out
                }
                try (Arena arena = where.arena()) {
                    MemorySegment data = arena.allocate(4000);
                    long start = System.nanoTime();
                    CollectiveException e = assertThrows(CollectiveException.class,
                            () -> c.allreduce(data, 1000, DataType.FLOAT, ReduceOp.SUM));
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    assertTrue(millis < timeout.toMillis() + 2000, () -> "failed after " + millis + " ms: " + e);
                }
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void anOperationCalledWithTheInterruptSetFailsBeforeItBeginsAndKeepsTheInterrupt(Where where) throws Exception {
        whileRank2SitsOut(where, (c, data) -> {
            Thread.currentThread().interrupt();
            CollectiveException e = assertThrows(CollectiveException.class,
                    () -> c.allreduce(data, 1000, DataType.FLOAT, ReduceOp.SUM));
            assertTrue(Thread.interrupted(), "the caller's interrupt status is kept");
            assertTrue(e.getMessage().contains("interrupted before the operation began"), e::getMessage);
        });
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void aCallerInterruptedWhileWaitingFailsSayingSoAndItsPeerFailsToo(Where where) throws Exception {
        whileRank2SitsOut(where, (c, data) -> {
            Thread caller = Thread.currentThread();
            Thread interrupter = c.rank() == 0
                    ? Thread.ofPlatform().start(() -> {
                        LockSupport.parkNanos(300_000_000L);
                        caller.interrupt();
                    })
                    : null;
            long start = System.nanoTime();
            CollectiveException e = assertThrows(CollectiveException.class,
                    () -> c.allreduce(data, 1000, DataType.FLOAT, ReduceOp.SUM));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis < 20_000, () -> "failed after " + millis + " ms, not at the interrupt: " + e);
            if (interrupter != null) {
                interrupter.join();
                assertTrue(Thread.interrupted(), "the caller's interrupt status is kept");
                assertTrue(e.getMessage().contains("the calling thread was interrupted ("), e::getMessage);
            } else {
                assertEquals(0, e.peer(), e::getMessage);
            }
        });
    }

    /** What ranks 0 and 1 of three do with 4000 bytes of memory while rank 2 never calls: they wait for it. */
    private interface WithoutRank2 {
        void run(Communicator c, MemorySegment data) throws Exception;
    }

    private void whileRank2SitsOut(Where where, WithoutRank2 body) throws Exception {
        CommunicatorConfig config = where.config(smallSlots().withTimeouts(Duration.ofSeconds(60), Duration.ofSeconds(30)));
        try (RankGroup group = RankGroup.start(3, engine(), config)) {
            group.run(c -> {
                if (c.rank() == 2) {
                    return;
                }
                try (Arena arena = where.arena()) {
                    body.run(c, arena.allocate(4000));
                }
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void anOperationCompletesWithWhatLiveRanksStillSendAfterARankThatDidItsPartLeft(Where where) throws Exception {
        CountDownLatch left = new CountDownLatch(1);
        try (RankGroup group = RankGroup.start(3, engine(), where.config(smallSlots()))) {
            group.run(c -> {
                try (Arena arena = where.arena()) {
                    MemorySegment input = arena.allocate(400);
                    MemorySegment output = arena.allocate(400);
                    for (int i = 0; i < 100; i++) {
                        input.setAtIndex(ValueLayout.JAVA_INT, i, (c.rank() + 1) * 1000 + i);
                    }
                    c.barrier(); // settles every link's first receive credits
                    // A tree reduce to rank 2: ranks 0 and 1 each send their part straight to it.
                    switch (c.rank()) {
                        case 1 -> {
                            c.reduce(input, output, 100, DataType.INT, ReduceOp.SUM, 2, Algorithm.TREE);
                            Thread.sleep(200); // its part lands
                            c.abort();
                            left.countDown();
                        }
                        case 0 -> {
                            left.await();
                            Thread.sleep(50); // rank 2 finds rank 1's link ended before this part leaves
                            c.reduce(input, output, 100, DataType.INT, ReduceOp.SUM, 2, Algorithm.TREE);
                        }
                        default -> {
                            c.reduce(input, output, 100, DataType.INT, ReduceOp.SUM, 2, Algorithm.TREE);
                            for (int i = 0; i < 100; i++) {
                                assertEquals(6000 + 3 * i, output.getAtIndex(ValueLayout.JAVA_INT, i), "element " + i);
                            }
                        }
                    }
                }
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void aRankFailingMidOperationFailsEveryOtherRank(Where where) throws Exception {
        try (RankGroup group = RankGroup.start(5, engine(), where.config(smallSlots()))) {
            group.run(c -> {
                try (Arena arena = where.arena()) {
                    MemorySegment data = arena.allocate(4L << 20);
                    if (c.rank() == 3) {
                        Thread.sleep(50);
                        c.abort();
                        return;
                    }
                    long start = System.nanoTime();
                    CollectiveException e = assertThrows(CollectiveException.class, () -> {
                        for (int i = 0; i < 1000; i++) {
                            c.allreduce(data, 1L << 20, DataType.FLOAT, ReduceOp.SUM);
                        }
                    });
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    assertTrue(millis < 10_000, () -> "failed after " + millis + " ms: " + e);
                    assertTrue(e.getMessage().contains("rank"), e::getMessage);
                }
            });
        }
    }

    @Test
    void aQueuePairWhoseListenerThrowsFailsItsRankAloneAndTheAbortStillFreesTheStaging() throws Exception {
        CountDownLatch failed = new CountDownLatch(1);
        try (RankGroup group = RankGroup.start(2, engine(), smallSlots())) {
            Probe.queuePairTo(group.ranks[0], 1).onCompletions(() -> {
                throw new IllegalStateException("a completion listener's bug");
            });
            group.run(c -> {
                if (c.rank() == 1) {
                    // Its message's completion at rank 0 runs the listener, which fails that queue pair alone (not
                    // rank 0's loop): rank 1 hears of it from the queue pair's end.
                    try {
                        assertThrows(CollectiveException.class, c::barrier);
                    } finally {
                        failed.countDown();
                    }
                    return;
                }
                assertTrue(failed.await(RankGroup.WAIT.toSeconds(), TimeUnit.SECONDS), "rank 1's barrier never ended");
                QueuePair broken = Probe.queuePairTo(c, 1);
                assertEquals(QpState.ERROR, broken.state());
                assertTrue(broken.errorReason().contains("a completion listener's bug"), broken::errorReason);
                c.abort();
                assertTrue(Probe.stagingFreed(c), "the staging memory is not freed by the abort");
                c.close(); // closed cleanly once: nothing more to free or say
                group.ranks[0] = null;
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void anOperationThatThrowsOnOneRankFailsItsPeerBeforeThePeersTimeout(Where where) throws Exception {
        Duration timeout = Duration.ofSeconds(20);
        CommunicatorConfig config = where.config(smallSlots().withTimeouts(timeout, Duration.ofSeconds(30)));
        CountDownLatch freed = new CountDownLatch(1);
        CountDownLatch peerDone = new CountDownLatch(1);
        try (RankGroup group = RankGroup.start(2, engine(), config)) {
            group.run(c -> {
                c.barrier(); // settles every link's first receive credits
                long count = 10_000; // more pieces than rank 1 has slots: rank 0 waits for it mid-operation
                if (c.rank() == 0) {
                    Arena arena = Arena.ofShared();
                    long sentBefore = Probe.messagesSentTo(c, 1);
                    Thread freer = Thread.ofPlatform().start(() -> {
                        freeOnceSending(c, sentBefore, arena);
                        freed.countDown();
                    });
                    // The memory freed under it: touching it throws, as a bug of the operation's own would.
                    assertThrows(IllegalStateException.class,
                            () -> c.allreduce(arena.allocate(count * 4), count, DataType.FLOAT, ReduceOp.SUM));
                    freer.join();
                    // Only after rank 1 learnt or timed out: a further call here would tell it as well.
                    assertTrue(peerDone.await(RankGroup.WAIT.toSeconds(), TimeUnit.SECONDS), "rank 1 never finished");
                    CollectiveException later = assertThrows(CollectiveException.class, c::barrier);
                    assertTrue(later.getMessage().contains("broken"), later::getMessage);
                    return;
                }
                assertTrue(freed.await(RankGroup.WAIT.toSeconds(), TimeUnit.SECONDS), "rank 0 never sent");
                try (Arena arena = where.arena()) {
                    MemorySegment data = arena.allocate(count * 4);
                    long start = System.nanoTime();
                    CollectiveException e;
                    try {
                        e = assertThrows(CollectiveException.class,
                                () -> c.allreduce(data, count, DataType.FLOAT, ReduceOp.SUM));
                    } finally {
                        peerDone.countDown();
                    }
                    long millis = (System.nanoTime() - start) / 1_000_000;
                    assertTrue(millis < timeout.toMillis(), () -> "rank 1 learnt only at its timeout: " + e);
                    assertEquals(0, e.peer(), e::getMessage);
                }
            });
        }
    }

    /** Closes {@code arena} once rank {@code c} is inside an operation: it has sent since {@code sentBefore}. */
    private static void freeOnceSending(Communicator c, long sentBefore, Arena arena) {
        long deadline = System.nanoTime() + RankGroup.WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (Probe.messagesSentTo(c, 1) > sentBefore) {
                try {
                    arena.close();
                    return;
                } catch (IllegalStateException inUse) {
                    // The operation is touching the memory right now: try again once it waits.
                }
            }
            LockSupport.parkNanos(5_000_000);
        }
        throw new AssertionError("rank " + c.rank() + " never began to send");
    }
}
