package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Two contexts of this process connected by one queue pair over loopback, with a registered region on each
 * side: the fixture of the queue-pair tests. Each side has its own event loop thread, as two processes
 * would; the test thread posts and polls through the rings.
 */
final class QpPair implements AutoCloseable {
    static final Duration WAIT = Duration.ofSeconds(30);

    final QpContext serverContext;
    final QpContext clientContext;
    final QpListener listener;
    final QueuePair client;
    final QueuePair server;
    final Arena arena = Arena.ofShared();
    final MemoryRegion clientRegion;
    final MemoryRegion serverRegion;

    /** Waits up to 10 s for {@code condition}; fails with "still not {@code what}" when it never holds. */
    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still not " + what);
            }
            Thread.sleep(2);
        }
    }

    QpPair(EventLoopConfig.Choice engine, QpConfig config, long regionBytes) throws Exception {
        this(EventLoopConfig.defaults().withEngine(engine), config, regionBytes);
    }

    /** Both contexts' loops built as {@code loops} says (its idle strategy, if any, must keep no state). */
    QpPair(EventLoopConfig loops, QpConfig config, long regionBytes) throws Exception {
        serverContext = QpContext.open(loops);
        clientContext = QpContext.open(loops);
        listener = serverContext.listen(new InetSocketAddress("127.0.0.1", 0), config);
        client = clientContext.connect(listener.address(), config);
        server = listener.accept(WAIT);
        assertNotNull(server, "the listener accepted no queue pair");
        clientRegion = clientContext.register(arena.allocate(regionBytes, 4096), Access.ALL);
        serverRegion = serverContext.register(arena.allocate(regionBytes, 4096), Access.ALL);
    }

    /** Waits for the next completion and returns a copy. */
    static WorkCompletion next(QueuePair qp) {
        WorkCompletion wc = new WorkCompletion();
        assertTrue(qp.await(wc, WAIT), () -> "no completion within " + WAIT + ": " + qp);
        if (!wc.isSuccess()) {
            System.err.println(wc + " on " + qp.statistics());
        }
        return wc;
    }

    /** Waits for {@code n} completions. */
    static List<WorkCompletion> next(QueuePair qp, int n) {
        List<WorkCompletion> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(next(qp));
        }
        return list;
    }

    static void assertSuccess(WorkCompletion wc, long wrId, int opcode, int bytes) {
        assertEquals(WorkCompletion.statusName(WorkCompletion.SUCCESS), WorkCompletion.statusName(wc.status()), wc::toString);
        assertEquals(wrId, wc.workRequestId(), wc::toString);
        assertEquals(WorkCompletion.opcodeName(opcode), WorkCompletion.opcodeName(wc.opcode()), wc::toString);
        assertEquals(bytes, wc.byteCount(), wc::toString);
    }

    /** A completion of work request {@code wrId} with {@code status}, named in the message when it is not. */
    static void assertStatus(WorkCompletion wc, long wrId, int status) {
        assertEquals(wrId, wc.workRequestId(), wc::toString);
        assertEquals(WorkCompletion.statusName(status), WorkCompletion.statusName(wc.status()), wc::toString);
    }

    /** Fills {@code length} bytes at {@code offset} of {@code region} with a pattern from {@code seed}. */
    static void fill(MemoryRegion region, long offset, long length, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        MemorySegment s = region.segment();
        long i = 0;
        for (; i + 8 <= length; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, offset + i, random.nextLong());
        }
        for (; i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, offset + i, (byte) random.nextInt());
        }
    }

    /** Asserts that {@code length} bytes at {@code offset} of {@code region} hold the pattern of {@code seed}. */
    static void assertFilled(MemoryRegion region, long offset, long length, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        MemorySegment s = region.segment();
        long i = 0;
        for (; i + 8 <= length; i += 8) {
            long want = random.nextLong();
            long got = s.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + i);
            if (want != got) {
                throw new AssertionError("byte " + (offset + i) + ".." + (offset + i + 7) + " differs: 0x"
                        + Long.toHexString(got) + " instead of 0x" + Long.toHexString(want));
            }
        }
        for (; i < length; i++) {
            byte want = (byte) random.nextInt();
            assertEquals(want, s.get(ValueLayout.JAVA_BYTE, offset + i), "byte " + (offset + i));
        }
    }

    @Override
    public void close() {
        try {
            clientContext.close();
        } finally {
            try {
                serverContext.close();
            } finally {
                arena.close();
            }
        }
    }
}
