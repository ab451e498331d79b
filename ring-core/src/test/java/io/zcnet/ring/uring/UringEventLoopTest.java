package io.zcnet.ring.uring;

import io.zcnet.ring.MsgFlags;
import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EngineFeatures;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoopThread;
import io.zcnet.ring.Op;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.uring.Completions.Completion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Drives a real io_uring on the test thread over loopback. Every wait is bounded. */
class UringEventLoopTest {
    private static final long WAIT_MS = 5_000;

    private UringEventLoop loop;
    private Completions done;
    private int handler;
    private Arena arena;

    @BeforeEach
    void open() throws IOException {
        assumeTrue(Uring.availability().usable(), Uring.availability().reason());
        loop = UringEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING)
                .withEntries(512, 2048));
        done = new Completions();
        handler = loop.registerHandler(done);
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        if (loop != null) {
            loop.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    private void pollUntil(java.util.function.BooleanSupplier condition) {
        Completions.pollUntil(loop, condition, WAIT_MS);
    }

    /** A connected pair: [client, server] socket handles, both on this loop. */
    private int[] connectedPair() throws IOException {
        int listener = loop.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        InetSocketAddress bound = loop.localAddress(listener);
        assertTrue(bound.getPort() > 0);
        int client = loop.socket(bound);
        loop.accept(handler, 1, listener, false);
        loop.connect(handler, 2, client, bound);
        pollUntil(() -> done.last(Op.ACCEPT) != null && done.last(Op.CONNECT) != null);
        assertEquals(0, done.last(Op.CONNECT).result(), done.all.toString());
        int server = done.last(Op.ACCEPT).result();
        assertTrue(server >= 0, done.all.toString());
        closeSocket(listener);
        return new int[] {client, server};
    }

    private void closeSocket(int socket) {
        int before = done.of(Op.CLOSE).size();
        loop.close(handler, socket, socket);
        pollUntil(() -> done.of(Op.CLOSE).size() > before);
        assertEquals(0, done.last(Op.CLOSE).result());
    }

    private MemorySegment randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        MemorySegment s = arena.allocate(size, 64);
        MemorySegment.copy(bytes, 0, s, JAVA_BYTE, 0, size);
        return s;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 32, 256})
    void nopBatchCompletesInOneEnter(int batch) {
        loop.poll(0); // claims the loop, enables the ring and arms the wake-up read
        long syscalls = loop.counters().syscalls();
        long completions = loop.counters().completions();
        for (int i = 0; i < batch; i++) {
            loop.nop(handler, i);
        }
        assertEquals(batch, loop.pending());
        assertEquals(batch, loop.poll(0));
        assertEquals(1, loop.counters().syscalls() - syscalls, "one io_uring_enter per batch");
        assertEquals(batch, loop.counters().completions() - completions);
        assertEquals(batch, done.all.size());
        for (int i = 0; i < batch; i++) {
            Completion c = done.all.get(i);
            assertEquals(Op.NOP, c.op());
            assertEquals(i, c.tag());
            assertEquals(0, c.result());
        }
        assertEquals(0, loop.pending());
        assertEquals(0, loop.poll(0));
        assertEquals(1, loop.counters().syscalls() - syscalls, "an idle poll(0) makes no system call");
    }

    @Test
    void cqOverflowDelaysButLosesNothingAndIsReported() throws IOException {
        loop.close();
        loop = UringEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING)
                .withEntries(64, 64));
        handler = loop.registerHandler(done);
        for (int i = 0; i < 300; i++) { // the SQ flushes itself every ~62 SQEs; the 64-entry CQ overflows
            loop.nop(handler, i);
        }
        pollUntil(() -> done.all.size() == 300);
        for (int i = 0; i < 300; i++) {
            assertEquals(i, done.all.get(i).tag(), "in order, none lost");
        }
        assertEquals(0, loop.counters().cqOverflows(), "parked, not lost: " + loop.counters());
        assertTrue(loop.counters().cqOverflowEvents() > 0, "delayed completions are counted: " + loop.counters());
        assertTrue(loop.toString().contains("cqOverflowEvents=" + loop.counters().cqOverflowEvents()), loop.toString());
        assertTrue(loop.features().notes().stream().anyMatch(n -> n.contains("CQ ring overflowed")),
                loop.features().notes().toString());
        assertEquals(0, loop.pending());
    }

    @Test
    void negotiatedFeaturesAreVisible() {
        loop.poll(0);
        EngineFeatures f = loop.features();
        assertTrue(f.setupFlags().containsAll(List.of("SINGLE_ISSUER", "DEFER_TASKRUN", "SUBMIT_ALL", "NO_SQARRAY")),
                f.setupFlags().toString());
        assertFalse(f.setupFlags().contains("SQPOLL"));
        assertTrue(f.supportedOps().containsAll(List.of("SEND_ZC", "RECV", "ACCEPT", "CONNECT")));
        assertTrue(f.registeredRing(), f.notes().toString());
        assertEquals(512, f.sqEntries());
        assertEquals(2048, f.cqEntries());
        assertTrue(f.summary().startsWith("io_uring sq=512 cq=2048"), f.summary());
    }

    @Test
    void echoOverAcceptConnectSendRecv() throws IOException {
        int[] pair = connectedPair();
        loop.setTcpNoDelay(pair[0], true);
        loop.setBufferSizes(pair[1], 1 << 20, 1 << 20);
        int size = 300_000;
        MemorySegment out = randomBytes(size, 1);
        MemorySegment in = arena.allocate(size);
        MemorySegment back = arena.allocate(size);
        loop.send(handler, 10, pair[0], out, 0, size, MsgFlags.WAITALL);
        loop.recv(handler, 11, pair[1], in, 0, size, MsgFlags.WAITALL);
        pollUntil(() -> done.last(Op.SEND) != null && done.last(Op.RECV) != null);
        assertEquals(size, done.last(Op.SEND).result());
        assertEquals(size, done.last(Op.RECV).result());
        loop.send(handler, 12, pair[1], in, 0, size, MsgFlags.WAITALL);
        loop.recv(handler, 13, pair[0], back, 0, size, MsgFlags.WAITALL);
        pollUntil(() -> done.of(Op.SEND).size() == 2 && done.of(Op.RECV).size() == 2);
        assertEquals(size, done.last(Op.RECV).result());
        assertEquals(-1, out.mismatch(back));
        closeSocket(pair[0]);
        // the peer's close is EOF: result 0
        loop.recv(handler, 14, pair[1], in, 0, 16, MsgFlags.NONE);
        pollUntil(() -> done.of(Op.RECV).size() == 3);
        assertEquals(0, done.last(Op.RECV).result());
        closeSocket(pair[1]);
        assertEquals(0, loop.pending());
    }

    @Test
    void socketOptionsReachTheKernel() throws IOException {
        int[] pair = connectedPair();
        loop.setTcpNoDelay(pair[0], true);
        loop.setBufferSizes(pair[0], 256 * 1024, 0);
        MemorySegment value = arena.allocate(4);
        MemorySegment length = arena.allocate(4);
        Native sys = new Native(arena);
        length.set(JAVA_INT, 0, 4);
        assertEquals(0, sys.getsockopt(pair[0], Linux.IPPROTO_TCP, Linux.TCP_NODELAY, value, length));
        assertEquals(1, value.get(JAVA_INT, 0));
        length.set(JAVA_INT, 0, 4);
        assertEquals(0, sys.getsockopt(pair[0], Linux.SOL_SOCKET, Linux.SO_SNDBUF, value, length));
        assertEquals(2 * 256 * 1024, value.get(JAVA_INT, 0), "Linux doubles SO_SNDBUF for bookkeeping");
        assertThrows(IllegalArgumentException.class, () -> loop.setBufferSizes(pair[0], -1, 0));
        assertThrows(io.zcnet.ring.sys.ErrnoException.class, () -> loop.setTcpNoDelay(1_000_000, true));
        closeSocket(pair[0]);
        closeSocket(pair[1]);
    }

    @Test
    void closeFromAHandlerWaitsForTheEndOfTheBatch() {
        int closer = loop.registerHandler((op, tag, result, flags) -> loop.close());
        loop.nop(closer, 1);
        loop.nop(handler, 2);
        loop.poll(0);
        assertEquals(1, done.of(Op.NOP).size(), "the rest of the batch is still dispatched");
        assertThrows(IllegalStateException.class, () -> loop.poll(0));
        loop = null;
    }

    @Test
    void connectRefusedAndBadHandles() throws IOException {
        int probe = loop.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1);
        InetSocketAddress nobody = loop.localAddress(probe);
        closeSocket(probe);
        int client = loop.socket(nobody);
        loop.connect(handler, 1, client, nobody);
        pollUntil(() -> done.last(Op.CONNECT) != null);
        assertEquals(-Errno.ECONNREFUSED, done.last(Op.CONNECT).result());
        closeSocket(client);
        assertThrows(IllegalArgumentException.class, () -> loop.recv(handler, 0, -1, arena.allocate(8), 0, 8, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.send(handler, 0, 5, arena.allocate(8), 4, 8, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.send(handler, 0, 5, arena.allocate(8), 0, -1, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.nop(-2, 0));
        assertThrows(IllegalArgumentException.class, () -> loop.timeout(handler, 0, -1));
        assertThrows(IllegalArgumentException.class, () -> loop.shutdown(handler, 0, 5, 7));
        assertThrows(IllegalArgumentException.class, () -> loop.send(handler, 0, 5, MemorySegment.ofArray(new byte[8]), 0, 8, MsgFlags.NONE));
        assertEquals(0, loop.pending());
    }

    @Test
    void multishotRecvRecoversFromEnobufsWithoutLosingBytes() throws IOException {
        int[] pair = connectedPair();
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(4096, 8)))) {
            BufferRing ring = loop.createBufferRing(7, pool, 4, 4096);
            assertEquals(4, ring.available());
            int size = 256 * 1024;
            MemorySegment out = randomBytes(size, 2);
            MemorySegment in = arena.allocate(size);
            long[] received = {0};
            int[] held = new int[4];
            int[] heldCount = {0};
            int[] arms = {0};
            int[] endedEnobufs = {0};
            int recvHandler = loop.registerHandler((op, tag, result, flags) -> {
                if (result > 0) {
                    assertTrue(CqeFlags.hasBuffer(flags));
                    int bid = CqeFlags.bufferId(flags);
                    MemorySegment.copy(ring.buffer(bid), 0, in, received[0], result);
                    received[0] += result;
                    held[heldCount[0]++] = bid; // keep it: the ring runs dry
                }
                if (!CqeFlags.hasMore(flags) && received[0] < size) {
                    assertEquals(-Errno.ENOBUFS, result, "the multishot ends only when buffers run out");
                    endedEnobufs[0]++;
                    for (int i = 0; i < heldCount[0]; i++) {
                        ring.recycle(held[i]);
                    }
                    heldCount[0] = 0;
                    if (received[0] < size) {
                        arms[0]++;
                        loop.recvMultishot(tagHandler[0], arms[0], pair[1], ring);
                    }
                }
            });
            tagHandler[0] = recvHandler;
            loop.recvMultishot(recvHandler, 0, pair[1], ring);
            loop.send(handler, 1, pair[0], out, 0, size, MsgFlags.WAITALL);
            pollUntil(() -> received[0] == size);
            assertEquals(size, done.last(Op.SEND).result());
            assertEquals(-1, out.mismatch(in), "bytes arrive in order, none lost");
            assertTrue(endedEnobufs[0] > 0);
            assertTrue(loop.counters().noBufferEvents() >= endedEnobufs[0]);
            // the last multishot is still armed: closing the socket cancels it
            closeSocket(pair[1]);
            closeSocket(pair[0]);
            pollUntil(() -> loop.pending() == 0);
            for (int i = 0; i < heldCount[0]; i++) {
                ring.recycle(held[i]);
            }
            assertEquals(4, ring.available(), "every buffer is back with the kernel");
            assertEquals(4, pool.stats().classes().get(0).leased());
            ring.close();
            assertEquals(0, pool.stats().classes().get(0).leased(), "close gives the buffers back to the pool");
            loop.close(); // gives back the pins on the pool's slab, so the pool may close
        }
    }

    private final int[] tagHandler = {0};

    @Test
    void sendZeroCopyGivesResultThenCopiedNotification() throws IOException {
        int[] pair = connectedPair();
        int size = 64 * 1024;
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(size, 2)))) {
            MemoryRegion slab = pool.slabRegion(0);
            assertEquals(0, loop.registerFixedBuffers(slab)[0]);
            MemorySegment out = pool.lease(size).segment();
            MemorySegment.copy(randomBytes(size, 3), 0, out, 0, size);
            MemorySegment in = arena.allocate(2L * size);
            loop.sendZeroCopy(handler, 1, pair[0], out, 0, size, -1, MsgFlags.NONE);
            loop.sendZeroCopy(handler, 2, pair[0], out, 0, size, loop.fixedBufferIndex(slab), MsgFlags.NONE);
            loop.recv(handler, 3, pair[1], in, 0, 2 * size, MsgFlags.WAITALL);
            pollUntil(() -> done.of(Op.SEND_ZC).size() == 4 && done.last(Op.RECV) != null);
            for (int tag = 1; tag <= 2; tag++) {
                int t = tag;
                List<Completion> zc = done.of(Op.SEND_ZC).stream().filter(c -> c.tag() == t).toList();
                assertEquals(size, zc.get(0).result(), zc.toString());
                assertTrue(CqeFlags.hasMore(zc.get(0).flags()), zc.toString());
                assertTrue(CqeFlags.isNotification(zc.get(1).flags()), zc.toString());
                assertFalse(CqeFlags.hasMore(zc.get(1).flags()));
                assertTrue((zc.get(1).result() & CqeFlags.ZC_COPIED) != 0, "loopback copies: " + zc);
            }
            assertEquals(2, loop.counters().zeroCopySendsCopied());
            assertEquals(2 * size, done.last(Op.RECV).result());
            assertEquals(-1, out.mismatch(in.asSlice(0, size)));
            assertEquals(-1, out.mismatch(in.asSlice(size, size)));
            assertThrows(IllegalArgumentException.class,
                    () -> loop.sendZeroCopy(handler, 4, pair[0], arena.allocate(64), 0, 64, 0, MsgFlags.NONE));
            assertThrows(IllegalArgumentException.class,
                    () -> loop.sendZeroCopy(handler, 4, pair[0], out, 0, 64, 5, MsgFlags.NONE));
            closeSocket(pair[0]);
            closeSocket(pair[1]);
            loop.close(); // gives back the pins on the pool's slab, so the pool may close
        }
    }

    @Test
    void linkTimeoutCancelsARecvThatNeverGetsData() throws IOException {
        int[] pair = connectedPair();
        MemorySegment in = arena.allocate(64);
        long start = System.nanoTime();
        loop.recv(handler, 1, pair[1], in, 0, 64, MsgFlags.NONE);
        loop.linkTimeout(handler, 2, TimeUnit.MILLISECONDS.toNanos(50));
        pollUntil(() -> done.last(Op.RECV) != null && done.last(Op.LINK_TIMEOUT) != null);
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50));
        assertEquals(-Errno.ECANCELED, done.last(Op.RECV).result());
        assertEquals(-Errno.ETIME, done.last(Op.LINK_TIMEOUT).result());

        // with data in time, the timeout is the one cancelled
        loop.send(handler, 3, pair[0], in, 0, 8, MsgFlags.NONE);
        loop.recv(handler, 4, pair[1], in, 0, 64, MsgFlags.NONE);
        loop.linkTimeout(handler, 5, TimeUnit.SECONDS.toNanos(5));
        pollUntil(() -> done.of(Op.RECV).size() == 2 && done.of(Op.LINK_TIMEOUT).size() == 2);
        assertEquals(8, done.last(Op.RECV).result());
        assertEquals(-Errno.ECANCELED, done.last(Op.LINK_TIMEOUT).result());

        loop.poll(0);
        assertThrows(IllegalStateException.class, () -> loop.linkTimeout(handler, 6, 1), "nothing unsubmitted to bound");
        closeSocket(pair[0]);
        closeSocket(pair[1]);
    }

    @Test
    void timeoutAndCancel() throws IOException {
        long start = System.nanoTime();
        loop.timeout(handler, 1, TimeUnit.MILLISECONDS.toNanos(30));
        pollUntil(() -> done.last(Op.TIMEOUT) != null);
        assertEquals(-Errno.ETIME, done.last(Op.TIMEOUT).result());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(30));

        int[] pair = connectedPair();
        long recv = loop.recv(handler, 2, pair[1], arena.allocate(64), 0, 64, MsgFlags.NONE);
        loop.poll(0);
        assertEquals(1, loop.pending());
        assertTrue(loop.toString().contains("1xRECV"), loop.toString());
        loop.cancel(handler, 3, recv);
        pollUntil(() -> done.last(Op.RECV) != null && done.last(Op.CANCEL) != null);
        assertEquals(-Errno.ECANCELED, done.last(Op.RECV).result());
        assertEquals(0, done.last(Op.CANCEL).result());
        loop.cancel(handler, 4, recv);
        pollUntil(() -> done.of(Op.CANCEL).size() == 2);
        assertEquals(-Errno.ENOENT, done.last(Op.CANCEL).result());
        closeSocket(pair[0]);
        closeSocket(pair[1]);
    }

    @Test
    void closeWithOperationsInFlightReturnsPromptly() throws IOException {
        int[] pair = connectedPair();
        int listener = loop.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
        loop.accept(handler, 1, listener, true);
        loop.recv(handler, 2, pair[1], arena.allocate(64), 0, 64, MsgFlags.NONE);
        loop.recv(handler, 3, pair[0], arena.allocate(64), 0, 64, MsgFlags.NONE);
        loop.timeout(handler, 4, TimeUnit.SECONDS.toNanos(60));
        loop.sendZeroCopy(handler, 5, pair[0], randomBytes(4096, 4), 0, 4096, -1, MsgFlags.NONE);
        loop.poll(0);
        long start = System.nanoTime();
        loop.close();
        long took = System.nanoTime() - start;
        assertTrue(took < CloseDrain.DEADLINE_NANOS, "close gave up waiting after " + took / 1_000_000 + " ms");
        assertEquals(0, loop.pending(), loop.toString());
        for (int op : new int[] {Op.ACCEPT, Op.TIMEOUT}) {
            assertEquals(-Errno.ECANCELED, done.last(op).result(), done.all.toString());
        }
        assertNotNull(done.of(Op.SEND_ZC).stream().filter(c -> CqeFlags.isNotification(c.flags())).findFirst().orElse(null),
                "close waits for the zero-copy notification: " + done.all);
        assertThrows(IllegalStateException.class, () -> loop.nop(handler, 0));
        loop = null;
    }

    @Test
    void opsFromAForeignThreadAreRejected() throws Exception {
        loop.poll(0);
        CompletableFuture<Throwable> thrown = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                loop.nop(handler, 0);
                thrown.complete(null);
            } catch (Throwable t) {
                thrown.complete(t);
            }
        });
        assertTrue(thrown.get(5, TimeUnit.SECONDS) instanceof IllegalStateException);
    }

    @Test
    void wakeupAndTasksFromOtherThreads() throws Exception {
        loop.close();
        loop = null;
        EventLoopConfig config = EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING);
        try (EventLoopThread t = EventLoopThread.start("uring-wakeup-test", config)) {
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            for (int i = 0; i < 20; i++) {
                assertEquals(i, (int) t.call(() -> {
                    ranOn.set(Thread.currentThread());
                    return 0;
                }) + i);
            }
            assertEquals("uring-wakeup-test", ranOn.get().getName());
            // A loop kept busy by the calls above may never have slept. Once idle it blocks in the kernel
            // (500 ms per poll), and a task sent then comes through the eventfd: the wake-up counter shows it.
            int sent = 20;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (t.loop().counters().wakeups() == 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
                t.call(() -> 0);
                sent++;
            }
            assertTrue(t.loop().counters().wakeups() > 0, t.loop().counters().toString());
            deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            while (t.loop().counters().tasksRun() < sent && System.nanoTime() < deadline) {
                Thread.sleep(1); // the loop counts a drained batch after its last task completed our future
            }
            assertEquals(sent, t.loop().counters().tasksRun());
        }
    }
}
