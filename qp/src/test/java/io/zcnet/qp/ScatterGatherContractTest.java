package io.zcnet.qp;

import static io.zcnet.qp.QpPair.assertStatus;
import static io.zcnet.qp.QpPair.assertSuccess;
import static io.zcnet.qp.QpPair.next;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.Availability;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Scatter/gather lists (ibv_post_send(3)/ibv_post_recv(3) {@code sg_list}) over real loopback TCP on one
 * engine: every work-request kind with 1 to {@link QpConfig#MAX_SGE} elements of odd sizes (elements of 0
 * bytes, frames across element boundaries, elements in two regions, up to a SEND of 16 MiB - 1), checked by
 * CRC32C at the destination, receives scattered over several elements with the bytes around them untouched,
 * and bad lists refused with the status verbs gives them. Subclassed once per engine.
 */
@Timeout(180)
abstract class ScatterGatherContractTest {
    static final int MIB = 1 << 20;
    /** Bytes each side's two regions have. */
    static final long REGION = 24L * MIB;
    static final byte GUARD = (byte) 0xA7;

    protected abstract EventLoopConfig.Choice engine();

    @BeforeEach
    void requireEngine() {
        if (engine() == EventLoopConfig.Choice.URING) {
            Availability uring = EventLoops.uringAvailability();
            assumeTrue(uring.usable(), () -> "io_uring not usable here: " + uring.reason());
        }
    }

    QpConfig config(int maxSge) {
        return QpConfig.defaults().withMaxSge(maxSge, maxSge);
    }

    /** Both sides' regions: the pair's own and one more, so elements alternate between two regions. */
    static final class Sides implements AutoCloseable {
        final QpPair pair;
        final MemoryRegion[] client;
        final MemoryRegion[] server;

        Sides(QpPair pair) {
            this.pair = pair;
            this.client = new MemoryRegion[] {pair.clientRegion,
                    pair.clientContext.register(pair.arena.allocate(REGION, 4096), Access.ALL)};
            this.server = new MemoryRegion[] {pair.serverRegion,
                    pair.serverContext.register(pair.arena.allocate(REGION, 4096), Access.ALL)};
        }

        @Override
        public void close() {
            pair.close();
        }
    }

    private Sides sides(int maxSge) throws Exception {
        return new Sides(new QpPair(engine(), config(maxSge), REGION));
    }

    /**
     * Elements laid out in two regions, alternating, each at a gap of 16 to 4 KiB after the one before in its
     * region: what a work request or receive names, and what the bytes they hold are.
     */
    static final class Elements {
        final List<MemoryRegion> regions = new ArrayList<>();
        final List<Long> offsets = new ArrayList<>();
        final List<Integer> lengths = new ArrayList<>();
        /** Where the elements of each region start and end (guard bytes around and between them). */
        final long[] first = new long[2];
        final long[] end = new long[2];

        Elements(MemoryRegion[] in, int[] sizes, SplittableRandom random) {
            this(in, sizes, random, new long[2]);
        }

        /** Elements placed after {@code at}, where each region's last elements end; {@code at} moves past them. */
        Elements(MemoryRegion[] in, int[] sizes, SplittableRandom random, long[] at) {
            for (int i = 0; i < sizes.length; i++) {
                int r = i % 2;
                at[r] += 16 + random.nextInt(4096);
                if (at[r] + sizes[i] + 16 > REGION) {
                    throw new IllegalStateException("elements do not fit the test's regions");
                }
                first[r] = regions.size() < 2 ? at[r] - 16 : first[r];
                regions.add(in[r]);
                offsets.add(at[r]);
                lengths.add(sizes[i]);
                at[r] += sizes[i];
                end[r] = at[r] + 16;
            }
        }

        long total() {
            long t = 0;
            for (int n : lengths) {
                t += n;
            }
            return t;
        }

        WorkRequest addTo(WorkRequest wr) {
            for (int i = 0; i < lengths.size(); i++) {
                wr.sge(regions.get(i).localKey(), offsets.get(i), lengths.get(i));
            }
            return wr;
        }

        ReceiveRequest addTo(ReceiveRequest rr) {
            for (int i = 0; i < lengths.size(); i++) {
                rr.sge(regions.get(i).localKey(), offsets.get(i), lengths.get(i));
            }
            return rr;
        }

        /** Fills every element with bytes from {@code seed}. */
        void fill(long seed) {
            for (int i = 0; i < lengths.size(); i++) {
                QpPair.fill(regions.get(i), offsets.get(i), lengths.get(i), seed + i);
            }
        }

        /** Fills both regions' spans of elements, the elements and the gaps between them, with {@link #GUARD}. */
        void guard() {
            for (int r = 0; r < Math.min(2, regions.size()); r++) {
                regions.get(r).segment().asSlice(first[r], end[r] - first[r]).fill(GUARD);
            }
        }

        /** CRC32C of the first {@code bytes} bytes of the elements' concatenation. */
        long crc(long bytes) {
            CRC32C crc = new CRC32C();
            long left = bytes;
            for (int i = 0; i < lengths.size() && left > 0; i++) {
                long n = Math.min(left, lengths.get(i));
                crc.update(regions.get(i).segment().asSlice(offsets.get(i), n).asByteBuffer());
                left -= n;
            }
            return crc.getValue();
        }

        /**
         * Asserts that, after the first {@code bytes} bytes of the elements, every byte of the guarded spans
         * still holds {@link #GUARD}: the gaps, the ends, and what the message left of the elements.
         */
        void assertNothingWrittenBeyond(long bytes) {
            for (int r = 0; r < Math.min(2, regions.size()); r++) {
                MemorySegment s = regions.get(r).segment();
                long from = first[r];
                for (int i = r; i < lengths.size(); i += 2) {
                    long written = Math.max(0, Math.min(lengths.get(i), bytes - startOf(i)));
                    assertGuarded(s, from, offsets.get(i)); // the gap before the element
                    assertGuarded(s, offsets.get(i) + written, offsets.get(i) + lengths.get(i)); // what it left
                    from = offsets.get(i) + lengths.get(i);
                }
                assertGuarded(s, from, end[r]);
            }
        }

        private long startOf(int element) {
            long start = 0;
            for (int i = 0; i < element; i++) {
                start += lengths.get(i);
            }
            return start;
        }

        private static void assertGuarded(MemorySegment s, long from, long to) {
            for (long at = from; at < to; at++) {
                if (s.get(ValueLayout.JAVA_BYTE, at) != GUARD) {
                    throw new AssertionError("byte " + at + " outside the message's elements was written");
                }
            }
        }

        @Override
        public String toString() {
            return lengths.toString();
        }
    }

    /** {@code total} bytes cut into {@code n} elements of odd sizes, about a quarter of them empty. */
    static int[] split(long total, int n, SplittableRandom random) {
        int[] sizes = new int[n];
        List<Integer> full = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (n == 1 || random.nextInt(4) != 0) {
                full.add(i);
            }
        }
        if (full.isEmpty()) {
            full.add(random.nextInt(n));
        }
        long[] cuts = new long[full.size() + 1];
        cuts[full.size()] = total;
        for (int c = 1; c < full.size(); c++) {
            cuts[c] = random.nextLong(total + 1);
        }
        java.util.Arrays.sort(cuts, 1, full.size());
        for (int c = 0; c < full.size(); c++) {
            sizes[full.get(c)] = (int) (cuts[c + 1] - cuts[c]);
        }
        return sizes;
    }

    /** Message sizes the rounds cycle through: 0, odd small ones, around a segment, and some MiB. */
    static final long[] TOTALS = {0, 1, 63, 4097, 65_535, 65_537, 300_001, MIB + 17, 3L * MIB + 5};

    // ---------------------------------------------------------------- every kind, 1..max elements

    @Test
    void sendsOfOneToMaxElementsLandScatteredOverReceivesOfSeveral() throws Exception {
        try (Sides s = sides(QpConfig.MAX_SGE)) {
            SplittableRandom random = new SplittableRandom(41);
            WorkRequest wr = new WorkRequest();
            ReceiveRequest rr = new ReceiveRequest();
            for (int n = 1; n <= QpConfig.MAX_SGE + 1; n++) {
                // The last round: a SEND of the largest message, 16 MiB - 1, over five elements.
                long total = n > QpConfig.MAX_SGE ? (1 << 24) - 1 : TOTALS[n % TOTALS.length];
                Elements source = new Elements(s.client, split(total, n > QpConfig.MAX_SGE ? 5 : n, random), random);
                int m = 1 + random.nextInt(QpConfig.MAX_SGE);
                long room = total + (random.nextBoolean() ? 0 : random.nextInt(5000));
                Elements sink = new Elements(s.server, split(room, m, random), random);
                source.fill(n);
                sink.guard();
                assertTrue(s.pair.server.postReceive(sink.addTo(rr.receive(n))));
                boolean imm = n % 2 == 1;
                assertTrue(s.pair.client.postSend(source.addTo(imm ? wr.sendWithImmediate(n, 0x300 + n) : wr.send(n))));
                WorkCompletion received = next(s.pair.server);
                assertSuccess(received, n, WorkCompletion.OP_RECV, (int) total);
                assertEquals(imm, received.hasImmediate(), received::toString);
                assertEquals(source.crc(total), sink.crc(total), () -> "SEND of " + source + " into " + sink);
                sink.assertNothingWrittenBeyond(total);
                assertSuccess(next(s.pair.client), n, WorkCompletion.OP_SEND, (int) total);
            }
        }
    }

    @Test
    void writesOfOneToMaxElementsPlaceTheirConcatenation() throws Exception {
        try (Sides s = sides(QpConfig.MAX_SGE)) {
            SplittableRandom random = new SplittableRandom(42);
            WorkRequest wr = new WorkRequest();
            MemoryRegion target = s.server[0];
            for (int n = 1; n <= QpConfig.MAX_SGE + 1; n++) {
                // The last round: a WRITE of two messages (longer than one) over three elements.
                long total = n > QpConfig.MAX_SGE ? 20L * MIB + 3 : TOTALS[n % TOTALS.length];
                Elements source = new Elements(s.client, split(total, n > QpConfig.MAX_SGE ? 3 : n, random), random);
                source.fill(100 + n);
                long at = random.nextInt(4096);
                boolean imm = n % 2 == 0;
                if (imm) {
                    assertTrue(s.pair.server.postReceive(n, target.localKey(), 0, 0));
                    source.addTo(wr.writeWithImmediate(n, target.remoteKey(), at, 0x500 + n));
                } else {
                    source.addTo(wr.write(n, target.remoteKey(), at));
                }
                assertTrue(s.pair.client.postSend(wr));
                assertSuccess(next(s.pair.client), n, WorkCompletion.OP_RDMA_WRITE, (int) total);
                if (imm) {
                    WorkCompletion received = next(s.pair.server);
                    assertEquals(0x500 + n, received.immediate(), received::toString);
                }
                assertEquals(source.crc(total), crc(target, at, total), () -> "WRITE of " + source);
            }
        }
    }

    @Test
    void readsOfOneToMaxElementsScatterConsecutiveRemoteRanges() throws Exception {
        try (Sides s = sides(QpConfig.MAX_SGE)) {
            SplittableRandom random = new SplittableRandom(43);
            WorkRequest wr = new WorkRequest();
            MemoryRegion remote = s.server[1];
            for (int n = 1; n <= QpConfig.MAX_SGE + 1; n++) {
                // The last round: one sink longer than a message, read with two requests, beside small ones.
                int[] sizes = n > QpConfig.MAX_SGE ? new int[] {5, 17 * MIB + 1, 0, 3}
                        : split(TOTALS[n % TOTALS.length], n, random);
                Elements sinks = new Elements(s.client, sizes, random);
                long total = sinks.total();
                long at = random.nextInt(4096);
                QpPair.fill(remote, at, total, 200 + n);
                sinks.guard();
                assertTrue(s.pair.client.postSend(sinks.addTo(wr.read(n, remote.remoteKey(), at))));
                assertSuccess(next(s.pair.client), n, WorkCompletion.OP_RDMA_READ, (int) total);
                assertEquals(crc(remote, at, total), sinks.crc(total), () -> "READ into " + sinks);
                sinks.assertNothingWrittenBeyond(total);
            }
        }
    }

    private static long crc(MemoryRegion region, long offset, long length) {
        CRC32C crc = new CRC32C();
        crc.update(region.segment().asSlice(offset, length).asByteBuffer());
        return crc.getValue();
    }

    @Test
    void elementsOfZeroBytesMakeMessagesOfZeroBytes() throws Exception {
        try (Sides s = sides(4)) {
            int key = s.client[0].localKey();
            WorkRequest wr = new WorkRequest();
            ReceiveRequest rr = new ReceiveRequest();
            assertTrue(s.pair.server.postReceive(rr.receive(1).sge(s.server[0].localKey(), 0, 0).sge(s.server[1].localKey(), 9, 0)));
            assertTrue(s.pair.client.postSend(wr.send(1).sge(key, 0, 0).sge(key, 100, 0).sge(s.client[1].localKey(), 7, 0)));
            assertSuccess(next(s.pair.server), 1, WorkCompletion.OP_RECV, 0);
            assertSuccess(next(s.pair.client), 1, WorkCompletion.OP_SEND, 0);
            assertTrue(s.pair.client.postSend(wr.write(2, s.server[0].remoteKey(), 0).sge(key, 0, 0).sge(key, 1, 0)));
            assertSuccess(next(s.pair.client), 2, WorkCompletion.OP_RDMA_WRITE, 0);
            assertTrue(s.pair.client.postSend(wr.read(3, s.server[0].remoteKey(), 0).sge(key, 0, 0).sge(key, 1, 0)));
            assertSuccess(next(s.pair.client), 3, WorkCompletion.OP_RDMA_READ, 0);
        }
    }

    @Test
    void gatheredFramesOfASubflowThatDiesAreResentIntactOverTheOthers() throws Exception {
        try (Sides s = new Sides(new QpPair(engine(), config(8).withSubflows(3), REGION))) {
            SplittableRandom random = new SplittableRandom(44);
            int messages = 16;
            long[] sourceAt = new long[2];
            long[] sinkAt = new long[2];
            List<Elements> sources = new ArrayList<>();
            List<Elements> sinks = new ArrayList<>();
            ReceiveRequest rr = new ReceiveRequest();
            for (int i = 0; i < messages; i++) {
                long total = MIB + random.nextInt(100_000);
                Elements sink = new Elements(s.server, split(total, 1 + random.nextInt(8), random), random, sinkAt);
                sink.guard();
                assertTrue(s.pair.server.postReceive(sink.addTo(rr.receive(i))));
                sinks.add(sink);
                Elements source = new Elements(s.client, split(total, 1 + random.nextInt(8), random), random, sourceAt);
                source.fill(300 + i);
                sources.add(source);
            }
            WorkRequest wr = new WorkRequest();
            for (int i = 0; i < messages; i++) {
                assertTrue(s.pair.client.postSend(sources.get(i).addTo(wr.send(i))));
            }
            // Killed once it carries frames, while 16 MiB are still on their way: a kill at a fixed point of
            // the posting could come after everything it carried was acknowledged, and resend nothing.
            while (s.pair.client.statistics().subflows().get(1).payloadBytes() == 0) {
                Thread.onSpinWait();
            }
            SubflowDrill.kill(s.pair.client, 1);
            for (int i = 0; i < messages; i++) {
                long total = sources.get(i).total();
                assertSuccess(next(s.pair.server), i, WorkCompletion.OP_RECV, (int) total);
                assertEquals(sources.get(i).crc(total), sinks.get(i).crc(total), "message " + i);
                sinks.get(i).assertNothingWrittenBeyond(total);
            }
            for (int i = 0; i < messages; i++) {
                assertSuccess(next(s.pair.client), i, WorkCompletion.OP_SEND, (int) sources.get(i).total());
            }
            assertEquals(2, s.pair.client.liveSubflows());
            QpStatistics stats = s.pair.client.statistics();
            assertTrue(stats.framesResent() > 0, () -> "the kill came after frames were handed out: " + stats);
        }
    }

    // ---------------------------------------------------------------- bad lists

    @Test
    void aCountOutsideTheQueuePairsLimitsIsRefusedWhenPosted() throws Exception {
        try (Sides s = sides(3)) {
            int key = s.client[0].localKey();
            WorkRequest wr = new WorkRequest();
            assertThrows(IllegalArgumentException.class, () -> s.pair.client.postSend(wr.send(1)), "no element");
            IllegalArgumentException four = assertThrows(IllegalArgumentException.class, () -> s.pair.client.postSend(
                    wr.send(1).sge(key, 0, 1).sge(key, 1, 1).sge(key, 2, 1).sge(key, 3, 1)));
            assertTrue(four.getMessage().contains("1..3"), four.getMessage());
            ReceiveRequest rr = new ReceiveRequest();
            assertThrows(IllegalArgumentException.class, () -> s.pair.server.postReceive(rr.receive(1)));
            int serverKey = s.server[0].localKey();
            assertThrows(IllegalArgumentException.class, () -> s.pair.server.postReceive(
                    rr.receive(1).sge(serverKey, 0, 1).sge(serverKey, 1, 1).sge(serverKey, 2, 1).sge(serverKey, 3, 1)));
            WorkRequest full = new WorkRequest().send(1);
            for (int i = 0; i < QpConfig.MAX_SGE; i++) {
                full.sge(key, i, 1);
            }
            assertThrows(IllegalArgumentException.class, () -> full.sge(key, 0, 1), "the holder's own limit");
            assertThrows(IllegalArgumentException.class, () -> QpConfig.defaults().withMaxSge(0, 1));
            assertThrows(IllegalArgumentException.class, () -> QpConfig.defaults().withMaxSge(1, QpConfig.MAX_SGE + 1));
            assertEquals(QpState.RTS, s.pair.client.state());
            assertEquals(QpState.RTS, s.pair.server.state());
        }
    }

    @Test
    void aWriteOrReadOfMoreThan2GiBInAllIsRefusedWhenPosted() throws Exception {
        try (Sides s = sides(2)) {
            int key = s.client[0].localKey();
            int rkey = s.server[0].remoteKey();
            // Each element fits an int, the two together do not; the post refuses before any key is looked at,
            // so the elements need not be registered memory of that size.
            int half = 3 << 29;
            long total = 2L * half;
            WorkRequest write = new WorkRequest().write(1, rkey, 0).sge(key, 0, half).sge(key, 0, half);
            WorkRequest read = new WorkRequest().read(2, rkey, 0).sge(key, 0, half).sge(key, 0, half);
            for (WorkRequest wr : List.of(write, read)) {
                assertEquals(total, wr.length(), "the holder counts its elements exactly");
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> s.pair.client.postSend(wr));
                assertTrue(e.getMessage().contains(total + " bytes") && e.getMessage().contains("at most "
                        + WorkRequest.MAX_LENGTH), e.getMessage());
            }
            assertTrue(s.pair.client.postSend(new WorkRequest().write(3, key, 0, 64, rkey, 0)));
            assertSuccess(next(s.pair.client), 3, WorkCompletion.OP_RDMA_WRITE, 64);
            assertEquals(QpState.RTS, s.pair.client.state());
        }
    }

    @Test
    void aRefusedElementFailsTheWorkRequestWithLocalProtectionAndSaysWhich() throws Exception {
        for (int kind = 0; kind < 3; kind++) {
            try (Sides s = sides(4)) {
                MemoryRegion readOnly = s.pair.clientContext.register(s.pair.arena.allocate(4096), Access.REMOTE_READ);
                int key = s.client[0].localKey();
                WorkRequest wr = switch (kind) {
                    case 0 -> new WorkRequest().send(1).sge(key, 0, 10).sge(key ^ 0x100, 0, 10); // a bad key
                    case 1 -> new WorkRequest().write(1, s.server[0].remoteKey(), 0).sge(key, 0, 10)
                            .sge(s.client[1].localKey(), REGION - 5, 10); // past the region's end
                    default -> new WorkRequest().read(1, s.server[0].remoteKey(), 0).sge(key, 0, 10)
                            .sge(readOnly.localKey(), 0, 10); // a sink without LOCAL_WRITE
                };
                assertTrue(s.pair.client.postSend(wr));
                WorkCompletion wc = next(s.pair.client);
                assertEquals(WorkCompletion.statusName(WorkCompletion.LOCAL_PROTECTION_ERROR),
                        WorkCompletion.statusName(wc.status()), wc::toString);
                assertEquals(QpState.ERROR, s.pair.client.state());
                String reason = s.pair.client.statistics().errorReason();
                assertTrue(reason.contains("element 1"), reason);
            }
        }
    }

    @Test
    void aRefusedReceiveElementCompletesTheReceiveWithLocalProtection() throws Exception {
        try (Sides s = sides(4)) {
            int key = s.server[0].localKey();
            assertTrue(s.pair.server.postReceive(new ReceiveRequest().receive(9).sge(key, 0, 10).sge(key + 1, 0, 10)));
            assertStatus(next(s.pair.server), 9, WorkCompletion.LOCAL_PROTECTION_ERROR);
            assertEquals(QpState.ERROR, s.pair.server.state());
        }
    }

    /**
     * The receive a WRITE with immediate consumes completes with the whole write's length, up to the
     * largest message (a write of more than {@code messageChunk} bytes used to become two messages, and the
     * receiver reported only the last one's bytes); one byte more fails before anything is sent.
     */
    @Test
    void aWriteWithImmediateOfTheLargestMessageCompletesItsReceiveWithItsWholeLength() throws Exception {
        try (Sides s = sides(4)) {
            int a = s.client[0].localKey();
            int b = s.client[1].localKey();
            int longest = 16 * MIB - 1;
            MemoryRegion target = s.server[0];
            assertTrue(s.pair.server.postReceive(21, target.localKey(), 0, 0));
            WorkRequest wr = new WorkRequest().writeWithImmediate(21, target.remoteKey(), 0, 0x5eed)
                    .sge(a, 0, 8 * MIB).sge(b, 0, 8 * MIB - 1);
            assertTrue(s.pair.client.postSend(wr));
            assertSuccess(next(s.pair.client), 21, WorkCompletion.OP_RDMA_WRITE, longest);
            WorkCompletion received = next(s.pair.server);
            assertSuccess(received, 21, WorkCompletion.OP_RECV_RDMA_WITH_IMM, longest);
            assertEquals(0x5eed, received.immediate(), received::toString);

            assertTrue(s.pair.client.postSend(wr.writeWithImmediate(22, target.remoteKey(), 0, 1)
                    .sge(a, 0, 8 * MIB).sge(b, 0, 8 * MIB)));
            assertStatus(next(s.pair.client), 22, WorkCompletion.LOCAL_LENGTH_ERROR);
        }
    }

    @Test
    void totalsOverTheLimitsFailWithLocalLength() throws Exception {
        try (Sides s = sides(4)) {
            int a = s.client[0].localKey();
            int b = s.client[1].localKey();
            WorkRequest wr = new WorkRequest().send(1).sge(a, 0, 8 * MIB).sge(b, 0, 8 * MIB); // 16 MiB: one byte over
            assertTrue(s.pair.client.postSend(wr));
            assertStatus(next(s.pair.client), 1, WorkCompletion.LOCAL_LENGTH_ERROR);
        }
        // A READ takes a message per sink at least: three small sinks do not fit a window of two.
        try (Sides s = new Sides(new QpPair(engine(), config(4).withMessageWindow(2), REGION))) {
            int a = s.client[0].localKey();
            WorkRequest wr = new WorkRequest().read(1, s.server[0].remoteKey(), 0).sge(a, 0, 1).sge(a, 8, 1).sge(a, 16, 1);
            assertTrue(s.pair.client.postSend(wr));
            assertStatus(next(s.pair.client), 1, WorkCompletion.LOCAL_LENGTH_ERROR);
        }
    }

    @Test
    void aSendLongerThanAllTheReceivesElementsIsALocalLengthErrorThere() throws Exception {
        try (Sides s = sides(4)) {
            Elements sink = new Elements(s.server, new int[] {100, 0, 70_000}, new SplittableRandom(5));
            sink.guard();
            assertTrue(s.pair.server.postReceive(sink.addTo(new ReceiveRequest().receive(4))));
            Elements source = new Elements(s.client, new int[] {70_000, 101}, new SplittableRandom(6));
            assertTrue(s.pair.client.postSend(source.addTo(new WorkRequest().send(4))));
            assertStatus(next(s.pair.server), 4, WorkCompletion.LOCAL_LENGTH_ERROR);
            assertNotEquals(WorkCompletion.SUCCESS, next(s.pair.client).status());
            sink.assertNothingWrittenBeyond(sink.total()); // the frames that fitted may have landed, nothing else

        }
    }
}
