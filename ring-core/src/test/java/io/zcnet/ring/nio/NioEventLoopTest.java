package io.zcnet.ring.nio;

import io.zcnet.ring.MsgFlags;
import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.Op;
import io.zcnet.ring.internal.UserData;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * NIO-engine specifics, driven inline on the test thread (the loop's owner). The behaviour both engines
 * share is covered by the engine-contract suite; here: exact flag layouts, ring order, partial results,
 * link and cancel corner cases, close, confinement, counters.
 */
class NioEventLoopTest {
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    /** One completion: op, tag, result, flags. */
    private record Cqe(int op, int tag, int result, int flags) {
        @Override
        public String toString() {
            return Op.name(op) + " tag=" + tag + " result=" + result + " (" + Errno.name(result) + ") flags=0x"
                    + Integer.toHexString(flags);
        }
    }

    private final List<Cqe> cqes = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private NioEventLoop loop;
    private Arena arena;
    private int handler;

    @BeforeEach
    void open() throws IOException {
        loop = NioEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.NIO));
        handler = loop.registerHandler((op, tag, result, flags) -> cqes.add(new Cqe(op, tag, result, flags)));
        arena = Arena.ofConfined();
    }

    @AfterEach
    void close() throws Exception {
        loop.close();
        for (AutoCloseable c : closeables) {
            c.close();
        }
        arena.close();
    }

    /** Polls until {@code count} completions arrived in total; returns them all. */
    private List<Cqe> awaitCompletions(int count) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (cqes.size() < count) {
            if (System.nanoTime() - deadline > 0) {
                fail("expected " + count + " completions within 5 s, got " + cqes + "; " + loop);
            }
            loop.poll(TimeUnit.MILLISECONDS.toNanos(10));
        }
        return cqes;
    }

    private Cqe awaitOne() {
        int before = cqes.size();
        return awaitCompletions(before + 1).get(before);
    }

    /** A listening socket on the loop, a blocking peer connected to it, and the accepted handle. */
    private record Pair(int listener, int server, Socket peer) {
    }

    private Pair connectedPair() throws IOException {
        int listener = loop.listen(new InetSocketAddress(LOOPBACK, 0), 16);
        Socket peer = new Socket();
        closeables.add(peer);
        peer.setSoTimeout(5_000);
        peer.connect(loop.localAddress(listener), 5_000);
        loop.accept(handler, 1, listener, false);
        Cqe accepted = awaitOne();
        assertEquals(Op.ACCEPT, accepted.op());
        assertTrue(accepted.result() >= 0, accepted.toString());
        assertEquals(0, accepted.flags(), "single-shot accept has no MORE");
        cqes.clear();
        return new Pair(listener, accepted.result(), peer);
    }

    private MemorySegment bytes(int length, int seed) {
        MemorySegment segment = arena.allocate(length);
        for (int i = 0; i < length; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return segment;
    }

    private static byte[] readExactly(InputStream in, int length) throws IOException {
        byte[] out = in.readNBytes(length);
        assertEquals(length, out.length, "peer got EOF early");
        return out;
    }

    @Test
    void reportsItselfAsNioWithNotes() {
        assertEquals(EngineKind.NIO, loop.engine());
        assertEquals(EngineKind.NIO, loop.features().engine());
        assertEquals("nio", loop.features().summary());
        assertTrue(loop.features().notes().stream().anyMatch(n -> n.contains("zero-copy")), "notes say what NIO lacks");
    }

    @Test
    void nopCompletesWithZeroAndCountsSubmissionsAndCompletions() {
        long userData = loop.nop(handler, 77);
        assertEquals(1, loop.pending(), "recorded operations are pending");
        assertEquals(List.of(new Cqe(Op.NOP, 77, 0, 0)), awaitCompletions(1));
        assertEquals(0, loop.pending());
        assertEquals(Op.NOP, UserData.op(userData));
        assertEquals(1, loop.counters().submittedOps());
        assertEquals(1, loop.counters().completions());
    }

    @Test
    void waitAllReceiveGathersPiecesAndPlainReceiveReturnsWhatIsThere() throws Exception {
        Pair pair = connectedPair();
        MemorySegment in = arena.allocate(1000);
        loop.recv(handler, 2, pair.server(), in, 0, 1000, MsgFlags.WAITALL);
        loop.poll(0);
        pair.peer().getOutputStream().write(new byte[600]);
        loop.poll(TimeUnit.MILLISECONDS.toNanos(50));
        assertTrue(cqes.isEmpty(), "600 of 1000 bytes do not complete a MSG_WAITALL receive: " + cqes);
        byte[] rest = new byte[400];
        rest[399] = 9;
        pair.peer().getOutputStream().write(rest);
        assertEquals(new Cqe(Op.RECV, 2, 1000, 0), awaitOne());
        assertEquals(9, in.get(ValueLayout.JAVA_BYTE, 999));

        pair.peer().getOutputStream().write(new byte[10]);
        loop.recv(handler, 3, pair.server(), in, 100, 900, MsgFlags.NONE);
        assertEquals(new Cqe(Op.RECV, 3, 10, 0), awaitOne(), "without waitAll a receive is short");
    }

    @Test
    void waitAllSendOfFourMegabytesArrivesIntactInOneCompletion() throws Exception {
        Pair pair = connectedPair();
        int length = 4 << 20;
        MemorySegment out = bytes(length, 5);
        loop.send(handler, 4, pair.server(), out, 0, length, MsgFlags.WAITALL);
        byte[] expected = out.toArray(ValueLayout.JAVA_BYTE);
        AtomicReference<byte[]> received = new AtomicReference<>();
        Thread reader = Thread.ofPlatform().start(() -> {
            try {
                received.set(readExactly(pair.peer().getInputStream(), length));
            } catch (IOException e) {
                received.set(new byte[0]);
            }
        });
        assertEquals(new Cqe(Op.SEND, 4, length, 0), awaitOne());
        reader.join(5_000);
        assertArrayEquals(expected, received.get());
    }

    @Test
    void multishotReceiveUsesBuffersInFifoOrderMarksNonEmptyAndStopsOnEmptyRing() throws Exception {
        Pair pair = connectedPair();
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(64, 8)))) {
            NioBufferRing ring = (NioBufferRing) loop.createBufferRing(1, pool, 4, 64);
            byte[] data = new byte[64 * 6];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) i;
            }
            pair.peer().getOutputStream().write(data);
            Thread.sleep(50); // all 384 bytes are in the socket before the receive is armed
            loop.recvMultishot(handler, 5, pair.server(), ring);
            List<Cqe> got = awaitCompletions(5);
            for (int i = 0; i < 4; i++) {
                Cqe c = got.get(i);
                assertEquals(64, c.result(), c.toString());
                assertTrue(CqeFlags.hasBuffer(c.flags()) && CqeFlags.hasMore(c.flags()), c.toString());
                assertEquals(i, CqeFlags.bufferId(c.flags()), "buffers are used in ring order");
                assertTrue((c.flags() & CqeFlags.SOCK_NONEMPTY) != 0,
                        "SOCK_NONEMPTY: data was left after each of the 4 buffers (the last by FIONREAD): " + c);
                assertEquals((byte) (i * 64), ring.buffer(i).get(ValueLayout.JAVA_BYTE, 0));
            }
            assertEquals(new Cqe(Op.RECV_MULTISHOT, 5, -Errno.ENOBUFS, 0), got.get(4));
            assertEquals(1, loop.counters().noBufferEvents());
            assertEquals(0, loop.pending(), "ENOBUFS ends the multishot");

            ring.recycle(3);
            ring.recycle(1);
            ring.recycle(0); // one spare, so the stream's end is seen as EOF rather than ENOBUFS
            cqes.clear();
            loop.recvMultishot(handler, 6, pair.server(), ring);
            List<Cqe> rest = awaitCompletions(2);
            assertEquals(3, CqeFlags.bufferId(rest.get(0).flags()), "recycled order is the ring order");
            assertEquals(1, CqeFlags.bufferId(rest.get(1).flags()));
            assertTrue((rest.get(0).flags() & CqeFlags.SOCK_NONEMPTY) != 0, "64 bytes left after it: " + rest);
            assertEquals(0, rest.get(1).flags() & CqeFlags.SOCK_NONEMPTY, "it emptied the socket: " + rest);
            assertEquals((byte) 0, ring.buffer(3).get(ValueLayout.JAVA_BYTE, 0), "byte 256 of the stream");
            assertEquals((byte) 64, ring.buffer(1).get(ValueLayout.JAVA_BYTE, 0), "byte 320: nothing was lost");

            pair.peer().shutdownOutput();
            assertEquals(new Cqe(Op.RECV_MULTISHOT, 6, 0, 0), awaitCompletions(3).get(2),
                    "EOF: result 0, no MORE, no buffer");
            ring.close();
            loop.close(); // gives back the pins on the pool's slab, so the pool may close
        }
    }

    @Test
    void zeroCopySendCompletesWithMoreThenACopiedNotification() throws Exception {
        Pair pair = connectedPair();
        MemorySegment out = bytes(3000, 1);
        loop.sendZeroCopy(handler, 8, pair.server(), out, 0, 3000, -1, MsgFlags.NONE);
        List<Cqe> got = awaitCompletions(2);
        assertEquals(new Cqe(Op.SEND_ZC, 8, 3000, CqeFlags.MORE), got.get(0));
        assertEquals(new Cqe(Op.SEND_ZC, 8, CqeFlags.ZC_COPIED, CqeFlags.NOTIF), got.get(1));
        assertEquals(1, loop.counters().zeroCopySendsCopied());
        assertArrayEquals(out.toArray(ValueLayout.JAVA_BYTE), readExactly(pair.peer().getInputStream(), 3000));
    }

    @Test
    void fixedBuffersAreNumberedAndChecked() throws Exception {
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(4096, 2)))) {
            assertEquals(0, loop.registerFixedBuffers(pool.slabRegion(0))[0]);
            assertEquals(0, loop.registerFixedBuffers(pool.slabRegion(0))[0], "registered again: same index");
            MemorySegment slab = pool.slabRegion(0).segment();
            assertThrows(IllegalArgumentException.class,
                    () -> loop.sendZeroCopy(handler, 0, 0, slab, 0, 10, 1, MsgFlags.NONE), "index not registered");
            assertThrows(IllegalArgumentException.class,
                    () -> loop.sendZeroCopy(handler, 0, 0, arena.allocate(10), 0, 10, 0, MsgFlags.NONE), "outside the region");
            loop.close(); // gives back the pins on the pool's slab, so the pool may close
        }
    }

    @Test
    void linkTimeoutCancelsAReceiveThatGetsNoData() throws Exception {
        Pair pair = connectedPair();
        long start = System.nanoTime();
        loop.recv(handler, 10, pair.server(), arena.allocate(16), 0, 16, MsgFlags.NONE);
        loop.linkTimeout(handler, 11, TimeUnit.MILLISECONDS.toNanos(50));
        List<Cqe> got = awaitCompletions(2);
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(50), "fired early");
        assertEquals(List.of(new Cqe(Op.RECV, 10, -Errno.ECANCELED, 0),
                new Cqe(Op.LINK_TIMEOUT, 11, -Errno.ETIME, 0)), got);
        assertEquals(0, loop.pending());
    }

    @Test
    void linkTimeoutIsCancelledWhenItsOperationCompletesFirstEvenAtOnce() throws Exception {
        Pair pair = connectedPair();
        pair.peer().getOutputStream().write(new byte[5]);
        Thread.sleep(20);
        loop.recv(handler, 12, pair.server(), arena.allocate(16), 0, 16, MsgFlags.NONE);
        loop.linkTimeout(handler, 13, TimeUnit.SECONDS.toNanos(10));
        assertEquals(List.of(new Cqe(Op.RECV, 12, 5, 0), new Cqe(Op.LINK_TIMEOUT, 13, -Errno.ECANCELED, 0)),
                awaitCompletions(2));
        assertEquals(0, loop.pending());
    }

    @Test
    void linkTimeoutNeedsAPrecedingOperationInTheSameBatch() {
        assertThrows(IllegalStateException.class, () -> loop.linkTimeout(handler, 0, 1000));
        loop.nop(handler, 0);
        loop.linkTimeout(handler, 1, 1000);
        assertThrows(IllegalStateException.class, () -> loop.linkTimeout(handler, 2, 1000));
        awaitCompletions(2);
        assertThrows(IllegalStateException.class, () -> loop.linkTimeout(handler, 3, 1000), "after a poll");
    }

    @Test
    void cancellingAPartialWaitAllReceiveReportsTheBytesReceived() throws Exception {
        Pair pair = connectedPair();
        long recv = loop.recv(handler, 14, pair.server(), arena.allocate(100), 0, 100, MsgFlags.WAITALL);
        loop.poll(0);
        pair.peer().getOutputStream().write(new byte[30]);
        assertTrue(loop.toString().contains(" recv"), "the receive waits on its socket: " + loop);
        Thread.sleep(20);
        loop.poll(TimeUnit.MILLISECONDS.toNanos(20));
        loop.cancel(handler, 15, recv);
        assertEquals(List.of(new Cqe(Op.RECV, 14, 30, 0), new Cqe(Op.CANCEL, 15, 0, 0)), awaitCompletions(2),
                "the kernel reports done_io for a cancelled partial MSG_WAITALL receive");
    }

    @Test
    void cancelFindsTimeoutsButNotLinkTimeoutsOrUnknownOperations() {
        long timeout = loop.timeout(handler, 16, TimeUnit.SECONDS.toNanos(10));
        loop.cancel(handler, 17, timeout);
        assertEquals(List.of(new Cqe(Op.TIMEOUT, 16, -Errno.ECANCELED, 0), new Cqe(Op.CANCEL, 17, 0, 0)),
                awaitCompletions(2));
        cqes.clear();
        loop.cancel(handler, 18, 0xDEADL);
        assertEquals(new Cqe(Op.CANCEL, 18, -Errno.ENOENT, 0), awaitOne());
        cqes.clear();
        loop.timeout(handler, 19, TimeUnit.SECONDS.toNanos(10));
        long link = loop.linkTimeout(handler, 20, TimeUnit.SECONDS.toNanos(10));
        loop.cancel(handler, 21, link);
        assertEquals(new Cqe(Op.CANCEL, 21, -Errno.ENOENT, 0), awaitOne(), "link timeouts are not cancellable");
        assertEquals(2, loop.pending());
    }

    @Test
    void timeoutFiresWithEtimeNoEarlierThanAsked() {
        long start = System.nanoTime();
        loop.timeout(handler, 22, TimeUnit.MILLISECONDS.toNanos(30));
        assertEquals(new Cqe(Op.TIMEOUT, 22, -Errno.ETIME, 0), awaitOne());
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(30));
    }

    @Test
    void closingASocketCancelsItsOperationsThenFreesTheHandle() throws Exception {
        Pair pair = connectedPair();
        loop.recv(handler, 23, pair.server(), arena.allocate(8), 0, 8, MsgFlags.NONE);
        loop.poll(0);
        loop.close(handler, 24, pair.server());
        loop.recv(handler, 25, pair.server(), arena.allocate(8), 0, 8, MsgFlags.NONE);
        assertEquals(List.of(new Cqe(Op.RECV, 23, -Errno.ECANCELED, 0), new Cqe(Op.CLOSE, 24, 0, 0),
                new Cqe(Op.RECV, 25, -Errno.EBADF, 0)), awaitCompletions(3));
        assertEquals(-1, pair.peer().getInputStream().read(), "the peer sees the connection closed");
        loop.close(handler, 26, 999);
        assertEquals(new Cqe(Op.CLOSE, 26, -Errno.EBADF, 0), awaitOne());
        assertEquals(pair.server(), loop.socket(new InetSocketAddress(LOOPBACK, 1)), "handles are reused");
    }

    @Test
    void errorsBecomeErrnoCompletions() throws Exception {
        InetSocketAddress closedPort;
        try (ServerSocket probe = new ServerSocket(0, 1, LOOPBACK)) {
            closedPort = new InetSocketAddress(LOOPBACK, probe.getLocalPort());
        }
        int refused = loop.socket(closedPort);
        loop.connect(handler, 27, refused, closedPort);
        assertEquals(new Cqe(Op.CONNECT, 27, -Errno.ECONNREFUSED, 0), awaitOne());

        int unconnected = loop.socket(closedPort);
        loop.send(handler, 28, unconnected, arena.allocate(4), 0, 4, MsgFlags.NONE);
        loop.recv(handler, 29, unconnected, arena.allocate(4), 0, 4, MsgFlags.NONE);
        assertEquals(List.of(new Cqe(Op.SEND, 28, -Errno.EPIPE, 0), new Cqe(Op.RECV, 29, -Errno.ENOTCONN, 0)),
                awaitCompletions(3).subList(1, 3));

        cqes.clear();
        Pair pair = connectedPair();
        loop.shutdown(handler, 30, pair.server(), EventLoop.SHUT_WR);
        loop.send(handler, 31, pair.server(), arena.allocate(4), 0, 4, MsgFlags.NONE);
        assertEquals(List.of(new Cqe(Op.SHUTDOWN, 30, 0, 0), new Cqe(Op.SEND, 31, -Errno.EPIPE, 0)),
                awaitCompletions(2));
        assertEquals(-1, pair.peer().getInputStream().read(), "the peer sees EOF after SHUT_WR");
    }

    @Test
    void connectSucceedsAndOperationsPreparedMeanwhileWaitForIt() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 4, LOOPBACK)) {
            InetSocketAddress address = (InetSocketAddress) server.getLocalSocketAddress();
            int client = loop.socket(address);
            MemorySegment out = bytes(10, 3);
            loop.connect(handler, 32, client, address);
            loop.send(handler, 33, client, out, 0, 10, MsgFlags.WAITALL);
            assertEquals(List.of(new Cqe(Op.CONNECT, 32, 0, 0), new Cqe(Op.SEND, 33, 10, 0)), awaitCompletions(2));
            try (Socket accepted = server.accept()) {
                accepted.setSoTimeout(5_000);
                assertArrayEquals(out.toArray(ValueLayout.JAVA_BYTE), readExactly(accepted.getInputStream(), 10));
            }
        }
    }

    @Test
    void closeCancelsEverythingPendingAndRejectsLaterUse() throws Exception {
        Pair pair = connectedPair();
        loop.recv(handler, 34, pair.server(), arena.allocate(8), 0, 8, MsgFlags.NONE);
        loop.timeout(handler, 35, TimeUnit.SECONDS.toNanos(10));
        loop.poll(0);
        loop.nop(handler, 36);
        loop.close();
        assertEquals(3, cqes.size(), cqes.toString());
        assertTrue(cqes.stream().allMatch(c -> c.result() == -Errno.ECANCELED), cqes.toString());
        assertEquals(0, loop.pending());
        assertEquals(-1, pair.peer().getInputStream().read(), "channels still open are closed");
        assertThrows(IllegalStateException.class, () -> loop.nop(handler, 0));
        assertThrows(IllegalStateException.class, () -> loop.poll(0));
        assertThrows(java.util.concurrent.RejectedExecutionException.class, () -> loop.execute(() -> { }));
        loop.close(); // idempotent
    }

    @Test
    void otherThreadsMayOnlyExecuteAndWakeup() throws Exception {
        loop.poll(0); // the test thread owns the loop now
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        Thread other = Thread.ofPlatform().start(() -> {
            try {
                loop.nop(handler, 0);
            } catch (Throwable t) {
                thrown.set(t);
            }
            loop.execute(ran::countDown);
        });
        long start = System.nanoTime();
        while (ran.getCount() > 0 && System.nanoTime() - start < WAIT_NANOS) {
            loop.poll(TimeUnit.SECONDS.toNanos(10)); // execute() wakes this long wait
        }
        other.join(5_000);
        assertEquals(0, ran.getCount(), "the task ran on the loop");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "wakeup interrupted the select");
        assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
        assertTrue(loop.counters().wakeups() >= 1);
        assertEquals(1, loop.counters().tasksRun());
    }

    @Test
    void validatesArguments() throws IOException {
        MemorySegment segment = arena.allocate(16);
        assertThrows(IllegalArgumentException.class, () -> loop.send(handler, 0, 0, segment, 0, -1, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.send(handler, 0, 0, segment, 8, 9, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.send(handler, 0, 0, segment, -1, 1, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.recv(handler, 0, 0, null, 0, 1, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class,
                () -> loop.recv(handler, 0, 0, segment.asReadOnly(), 0, 1, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.recv(handler, 0, -1, segment, 0, 1, MsgFlags.NONE));
        assertThrows(IllegalArgumentException.class, () -> loop.shutdown(handler, 0, 0, 3));
        assertThrows(IllegalArgumentException.class, () -> loop.timeout(handler, 0, -1));
        assertThrows(IllegalArgumentException.class, () -> loop.nop(-1, 0));
        assertThrows(IllegalArgumentException.class, () -> loop.connect(handler, 0, 0, null));
        assertThrows(IllegalArgumentException.class, () -> loop.recvMultishot(handler, 0, 0, null));
        assertThrows(IllegalArgumentException.class, () -> loop.listen(new InetSocketAddress(LOOPBACK, 0), -1));
        assertThrows(IOException.class, () -> loop.localAddress(12345));
        assertEquals(0, loop.pending(), "rejected operations are not recorded");
        loop.send(handler, 40, 12345, segment, 0, 16, MsgFlags.NONE);
        assertEquals(new Cqe(Op.SEND, 40, -Errno.EBADF, 0), awaitOne(), "an unknown handle is EBADF");
    }

    @Test
    void steadyPingPongOnReusedSegmentsAllocatesNothingInTheLoop() throws Throwable {
        Pair pair = connectedPair();
        int[] completed = new int[1];
        int counting = loop.registerHandler((op, tag, result, flags) -> completed[0]++);
        MemorySegment out = bytes(64, 2);
        MemorySegment in = arena.allocate(64);
        byte[] echo = new byte[64];
        MethodHandle allocatedBytes = currentThreadAllocatedBytes();
        long inLoop = 0;
        int rounds = 4000;
        int warmup = 2000;
        for (int i = 0; i < rounds; i++) {
            int expected = completed[0] + 2;
            long before = (long) allocatedBytes.invokeExact();
            loop.send(counting, 41, pair.server(), out, 0, 64, MsgFlags.WAITALL);
            loop.recv(counting, 42, pair.server(), in, 0, 64, MsgFlags.WAITALL);
            loop.poll(0);
            long after = (long) allocatedBytes.invokeExact();
            pair.peer().getInputStream().readNBytes(echo, 0, 64);
            pair.peer().getOutputStream().write(echo);
            long deadline = System.nanoTime() + WAIT_NANOS;
            long pollBefore = (long) allocatedBytes.invokeExact();
            while (completed[0] < expected && System.nanoTime() - deadline < 0) {
                loop.poll(TimeUnit.MILLISECONDS.toNanos(10));
            }
            long pollAfter = (long) allocatedBytes.invokeExact();
            assertEquals(expected, completed[0]);
            if (i >= warmup) {
                inLoop += (after - before) + (pollAfter - pollBefore);
            }
        }
        // A per-operation view or operation object would be 50+ bytes per round; the selector's own
        // bookkeeping may allocate now and then, hence an average rather than zero.
        long perRound = inLoop / (rounds - warmup);
        assertTrue(perRound < 16, "the loop allocated " + perRound + " bytes per round trip");
        assertArrayEquals(out.toArray(ValueLayout.JAVA_BYTE), in.toArray(ValueLayout.JAVA_BYTE));
        assertTrue(loop.counters().syscalls() >= 3L * rounds, "selects, reads and writes are counted");
    }

    /**
     * {@code com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes}, looked up reflectively because
     * the test compiles inside module io.zcnet.ring, which does not read jdk.management (tests run on the
     * class path, where it is readable).
     */
    static MethodHandle currentThreadAllocatedBytes() throws ReflectiveOperationException {
        Object bean = Class.forName("java.lang.management.ManagementFactory").getMethod("getThreadMXBean")
                .invoke(null);
        Class<?> type = Class.forName("com.sun.management.ThreadMXBean");
        return MethodHandles.publicLookup().findVirtual(type, "getCurrentThreadAllocatedBytes",
                MethodType.methodType(long.class)).bindTo(bean);
    }

    @Test
    void pollWithAHugeFiniteTimeoutDoesNotOverflowIntoANegativeSelectTimeout() {
        loop.wakeup(); // so the poll returns at once instead of sleeping for ~292 years
        assertEquals(0, loop.poll(Long.MAX_VALUE - 1), "nothing to handle");
        loop.wakeup();
        assertEquals(0, loop.poll(Long.MAX_VALUE - 999_998), "nothing to handle");
    }

    @Test
    void aHandlerThatThrowsLeavesTheRestForTheNextPollInOrder() {
        int thrower = loop.registerHandler((op, tag, result, flags) -> {
            throw new IllegalStateException("injected");
        });
        loop.nop(handler, 1);
        loop.nop(thrower, 2);
        loop.nop(handler, 3);
        assertThrows(IllegalStateException.class, () -> loop.poll(0));
        assertEquals(List.of(new Cqe(Op.NOP, 1, 0, 0)), cqes, "dispatched before the throw");
        loop.nop(handler, 4);
        awaitCompletions(3);
        assertEquals(List.of(new Cqe(Op.NOP, 1, 0, 0), new Cqe(Op.NOP, 3, 0, 0), new Cqe(Op.NOP, 4, 0, 0)), cqes,
                "the rest first, then what completed later");
    }
}
