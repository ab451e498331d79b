package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Buffer;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.LoopHarness.LoopAction;
import io.zcnet.ring.Recorder.Completion;
import io.zcnet.ring.internal.UserData;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The behaviour every engine must show, identically: subclassed once per engine
 * ({@link UringEngineContractTest}, {@link NioEngineContractTest}), so a handler written against one
 * engine cannot tell it runs on the other.
 *
 * <p>Each test gets a fresh loop on its own thread ({@link LoopHarness}) and drives it only through
 * {@code h.call}/{@code h.run}; the peers are blocking {@code java.net} sockets on the test thread
 * ({@link Peers}). Expected results are the Linux kernel's (io_uring CQEs as in
 * {@code include/uapi/linux/io_uring.h} and the {@code io_uring_prep_*} man pages). Every wait is
 * bounded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class EngineContractTest {
    private static final long MILLIS = 1_000_000L;
    private static final long SEED = 0x2C2E7_5EEDL;

    protected LoopHarness h;
    protected EventLoop loop;
    private final Arena arena = Arena.ofShared();
    private final List<Socket> peers = new ArrayList<>();

    /** The engine under test. */
    protected abstract EventLoopConfig.Choice engine();

    /** A socket on the loop and the blocking peer at its other end. */
    private record Connection(int socket, Socket peer) {
    }

    @BeforeEach
    void startLoop() throws Exception {
        h = LoopHarness.start(engine());
        loop = h.loop();
    }

    @AfterEach
    void stopLoop() throws Exception {
        try {
            if (h != null) {
                h.close();
            }
        } finally {
            for (Socket s : peers) {
                s.close();
            }
            arena.close();
        }
    }

    // ------------------------------------------------------------------ helpers

    private Socket peer(Socket s) {
        peers.add(s);
        return s;
    }

    /** A loop socket accepted (single-shot accept) from a blocking client. */
    private Connection accepted() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        int listener = h.call(() -> h.track(loop.listen(Peers.loopback(0), 16)));
        int port = h.call(() -> loop.localAddress(listener).getPort());
        h.run(() -> loop.accept(id, 7, listener, false));
        Socket client = peer(Peers.connect(Peers.loopback(port)));
        Completion c = r.next();
        assertEquals(Op.ACCEPT, c.op(), "op of " + c);
        assertEquals(7, c.tag(), "tag of " + c);
        assertTrue(c.result() >= 0, "accept should give a socket handle: " + c);
        assertFalse(c.more(), "single-shot accept must not say MORE: " + c);
        h.run(() -> h.track(c.result()));
        return new Connection(c.result(), client);
    }

    /** A loop socket connected (loop-side connect) to a blocking listener. */
    private Connection connectedFromLoop() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        try (ServerSocket listener = Peers.listener()) {
            var address = Peers.loopback(listener.getLocalPort());
            int socket = h.call(() -> h.track(loop.socket(address)));
            h.run(() -> loop.connect(id, 3, socket, address));
            Socket peer = peer(listener.accept());
            peer.setSoTimeout(Peers.IO_TIMEOUT_MILLIS);
            Completion c = r.next();
            assertEquals(Op.CONNECT, c.op(), "op of " + c);
            assertEquals(0, c.result(), "connect to a listener: " + c);
            return new Connection(socket, peer);
        }
    }

    /** Copies {@code length} bytes at the start of a ring buffer, on the loop (the buffer is the app's). */
    private byte[] bufferBytes(BufferRing ring, int bufferId, int length) throws Exception {
        return h.call(() -> ring.buffer(bufferId).asSlice(0, length).toArray(ValueLayout.JAVA_BYTE));
    }

    private MemorySegment segmentOf(byte[] data) {
        MemorySegment s = arena.allocate(Math.max(1, data.length));
        MemorySegment.copy(data, 0, s, ValueLayout.JAVA_BYTE, 0, data.length);
        return s;
    }

    private static Completion only(List<Completion> completions, int op) {
        Completion found = null;
        for (Completion c : completions) {
            if (c.op() == op) {
                assertNull(found, "two " + Op.name(op) + " completions in " + completions);
                found = c;
            }
        }
        assertNotNull(found, "no " + Op.name(op) + " completion in " + completions);
        return found;
    }

    // ------------------------------------------------------------------ NOP and dispatch

    @Test
    void nopsReachTheirOwnHandlerWithOpTagAndZeroResult() throws Exception {
        Recorder even = new Recorder();
        Recorder odd = new Recorder();
        int evenId = h.register(even);
        int oddId = h.register(odd);
        long completionsBefore = loop.counters().completions();
        int count = 64;

        long[] userData = h.call(() -> {
            long[] u = new long[count];
            for (int tag = 0; tag < count; tag++) {
                u[tag] = loop.nop(tag % 2 == 0 ? evenId : oddId, tag);
            }
            return u;
        });

        for (int tag = 0; tag < count; tag++) {
            assertEquals(UserData.pack(tag % 2 == 0 ? evenId : oddId, Op.NOP, tag), userData[tag],
                    "user_data returned for nop " + tag);
        }
        String loopThread = h.call(() -> Thread.currentThread().getName());
        Set<Integer> evenTags = new HashSet<>();
        for (Completion c : even.next(count / 2)) {
            assertEquals(Op.NOP, c.op(), c.toString());
            assertEquals(0, c.result(), c.toString());
            assertEquals(0, c.flags(), c.toString());
            assertEquals(loopThread, c.thread().getName(), "handlers run on the loop thread");
            assertEquals(0, c.tag() % 2, "odd tag reached the even handler: " + c);
            evenTags.add(c.tag());
        }
        Set<Integer> oddTags = new HashSet<>();
        for (Completion c : odd.next(count / 2)) {
            assertEquals(Op.NOP, c.op(), c.toString());
            assertEquals(0, c.result(), c.toString());
            assertEquals(1, c.tag() % 2, "even tag reached the odd handler: " + c);
            oddTags.add(c.tag());
        }
        assertEquals(count / 2, evenTags.size(), "each even tag exactly once");
        assertEquals(count / 2, oddTags.size(), "each odd tag exactly once");
        even.assertQuietFor(50);
        odd.assertQuietFor(0);
        assertTrue(loop.counters().completions() >= completionsBefore + count,
                "completion counter: " + loop.counters());
        assertTrue(loop.counters().submittedOps() >= count, "submission counter: " + loop.counters());
    }

    @Test
    void completionsOfAnUnregisteredHandlerAreDroppedAndCounted() throws Exception {
        Recorder r = new Recorder();
        long before = loop.counters().droppedCompletions();
        h.run(() -> {
            int id = loop.registerHandler(r);
            loop.nop(id, 1);
            loop.unregisterHandler(id);
        });
        LoopHarness.await(() -> loop.counters().droppedCompletions() == before + 1,
                "one dropped completion; counters: " + loop.counters());
        r.assertQuietFor(50);
        assertEquals(before + 1, loop.counters().droppedCompletions(), "dropped exactly once");
    }

    @Test
    void featuresNameTheEngine() {
        EngineFeatures f = loop.features();
        assertEquals(loop.engine(), f.engine(), "features().engine()");
        assertNotNull(f.summary());
        if (loop.engine() == EngineKind.URING) {
            assertTrue(f.sqEntries() > 0 && f.cqEntries() >= f.sqEntries(), "ring sizes: " + f);
            assertTrue(f.supportedOps().size() > 0, "probe lists opcodes: " + f);
            assertTrue(f.summary().startsWith("io_uring"), f.summary());
        } else {
            assertEquals(0, f.setupFlagBits(), "NIO negotiates no setup flags");
            assertEquals("nio", f.summary());
        }
    }

    // ------------------------------------------------------------------ echo

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {1, 63, 4096, 65537, 1 << 20, 4 << 20})
    void echoReturnsEveryByteInOrder(int size) throws Exception {
        echo(size, h.echoServer(1, 64, LoopHarness.LARGE));
    }

    @Test
    void echoThroughATinyRingRecoversFromEnobufsWithoutLoss() throws Exception {
        EchoServer server = h.echoServer(8, 4, LoopHarness.SMALL);
        echo(1 << 20, server);
        assertTrue(loop.counters().noBufferEvents() > 0, "a 4 x 2 KiB ring must run dry: " + loop.counters());
        assertTrue(h.call(server::rearmsAfterNoBuffers) > 0, "the server re-armed after -ENOBUFS");
    }

    /** Sends {@code size} random bytes through {@code server} and checks both ends byte for byte. */
    private void echo(int size, EchoServer server) throws Exception {
        byte[] payload = Peers.randomBytes(size, SEED + size);
        Socket client = peer(Peers.connect(Peers.loopback(server.port())));
        Peers.Writer writer = new Peers.Writer(client, payload, 64 * 1024, true);
        byte[] echoed = Peers.readExactly(client, size);
        writer.join();
        Peers.assertEof(client);

        Peers.assertSameBytes(payload, echoed, "echo of " + size + " bytes (seed " + (SEED + size) + ")");
        EchoServer.ConnStats seen = h.call(() -> server.stats(0));
        assertEquals(size, seen.bytes(), "bytes the server received");
        assertEquals(Peers.crc32c(payload), seen.crc32c(), "CRC32C of what the server received");
        assertTrue(seen.eof(), "server saw EOF after the client's shutdown");
        assertEquals(0, seen.sendErrors(), "failed echo sends");
        assertEquals(List.of(), server.errors(), "server errors");
    }

    @Test
    void thousandConcurrentConnectionsAreAllAnswered() throws Exception {
        int connections = 1000;
        EchoServer server = h.echoServer(2, 1024, LoopHarness.SMALL);
        Socket[] clients = new Socket[connections];
        byte[][] messages = new byte[connections][];
        for (int i = 0; i < connections; i++) {
            clients[i] = peer(Peers.connect(Peers.loopback(server.port())));
            messages[i] = String.format("connection %04d of %d, hello", i, connections)
                    .getBytes(StandardCharsets.US_ASCII);
            clients[i].getOutputStream().write(messages[i]);
        }
        for (int i = 0; i < connections; i++) {
            assertArrayEquals(messages[i], Peers.readExactly(clients[i], messages[i].length), "echo on connection " + i);
        }
        for (Socket c : clients) {
            c.shutdownOutput();
        }
        for (int i = 0; i < connections; i++) {
            Peers.assertEof(clients[i]);
        }
        assertEquals(connections, server.accepted(), "connections accepted");
        assertEquals(List.of(), server.errors(), "server errors");
        assertEquals(0, loop.counters().cqOverflows(), "no completion lost to CQ overflow: " + loop.counters());
    }

    // ------------------------------------------------------------------ connection ends

    @Test
    void peerResetFailsAPendingReceiveWithEconnreset() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(4096);
        h.run(() -> loop.recv(id, 1, c.socket(), buffer, 0, 4096, MsgFlags.NONE));
        r.assertQuietFor(20);

        c.peer().setSoLinger(true, 0);
        c.peer().close();

        Completion done = r.next();
        assertEquals(Op.RECV, done.op(), done.toString());
        assertEquals(-Errno.ECONNRESET, done.result(), "a reset reaches a pending recv as the kernel reports it: " + done);
        assertEquals(0, done.flags(), done.toString());

        // The recv consumed the socket error; from now on the kernel says EOF to reads and EPIPE to writes.
        h.run(() -> loop.recv(id, 2, c.socket(), buffer, 0, 4096, MsgFlags.NONE));
        Completion eof = r.next();
        h.run(() -> loop.send(id, 3, c.socket(), buffer, 0, 16, MsgFlags.NONE));
        Completion send = r.next();
        assertEquals(List.of("RECV 0", "SEND " + -Errno.EPIPE),
                List.of(Op.name(eof.op()) + " " + eof.result(), Op.name(send.op()) + " " + send.result()),
                "after a reported reset: recv gives EOF, send gives EPIPE (MSG_NOSIGNAL); got " + eof + ", " + send);
    }

    @Test
    void peerResetEndsAMultishotReceiveWithEconnresetAfterTheData() throws Exception {
        Connection c = accepted();
        BufferRing ring = h.bufferRing(3, 8, LoopHarness.TINY);
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.recvMultishot(id, 1, c.socket(), ring));

        byte[] data = Peers.randomBytes(100, SEED);
        c.peer().getOutputStream().write(data);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        while (got.size() < data.length) {
            Completion d = r.next();
            assertTrue(d.more() && CqeFlags.hasBuffer(d.flags()) && d.result() > 0, "data completion expected: " + d);
            got.write(bufferBytes(ring, CqeFlags.bufferId(d.flags()), d.result()));
            h.run(() -> ring.recycle(CqeFlags.bufferId(d.flags())));
        }
        Peers.assertSameBytes(data, got.toByteArray(), "data before the reset");

        c.peer().setSoLinger(true, 0);
        c.peer().close();

        Completion end = r.next();
        assertEquals(Op.RECV_MULTISHOT, end.op(), end.toString());
        assertEquals(-Errno.ECONNRESET, end.result(), end.toString());
        assertFalse(end.more(), "an error ends the multishot: " + end);
        assertFalse(CqeFlags.hasBuffer(end.flags()), "an error carries no buffer: " + end);
        r.assertQuietFor(20);
    }

    @Test
    void halfCloseGivesEofWhileTheOtherDirectionStillWorks() throws Exception {
        Connection c = accepted();
        BufferRing ring = h.bufferRing(4, 8, LoopHarness.TINY);
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.recvMultishot(id, 1, c.socket(), ring));

        byte[] hello = "hello, half-closed world".getBytes(StandardCharsets.US_ASCII);
        c.peer().getOutputStream().write(hello);
        c.peer().shutdownOutput();

        List<Completion> received = r.untilFinal(Op.RECV_MULTISHOT);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        for (Completion d : received.subList(0, received.size() - 1)) {
            assertEquals(Op.RECV_MULTISHOT, d.op(), d.toString());
            assertTrue(d.more() && CqeFlags.hasBuffer(d.flags()) && d.result() > 0, "data with BUFFER|MORE: " + d);
            got.write(bufferBytes(ring, CqeFlags.bufferId(d.flags()), d.result()));
            h.run(() -> ring.recycle(CqeFlags.bufferId(d.flags())));
        }
        Completion eof = received.getLast();
        assertEquals(0, eof.result(), "EOF is result 0: " + eof);
        assertFalse(eof.more(), "EOF ends the multishot: " + eof);
        assertFalse(CqeFlags.hasBuffer(eof.flags()), "EOF consumes no buffer: " + eof);
        assertArrayEquals(hello, got.toByteArray(), "bytes before EOF");

        // A single-shot receive after EOF sees EOF again.
        MemorySegment buffer = arena.allocate(64);
        h.run(() -> loop.recv(id, 2, c.socket(), buffer, 0, 64, MsgFlags.NONE));
        Completion again = r.next();
        assertEquals(Op.RECV, again.op(), again.toString());
        assertEquals(0, again.result(), "recv after EOF: " + again);

        // The half-closed socket still sends, and its own shutdown reaches the peer as EOF.
        byte[] bye = "bye after your FIN".getBytes(StandardCharsets.US_ASCII);
        MemorySegment out = segmentOf(bye);
        h.run(() -> loop.send(id, 3, c.socket(), out, 0, bye.length, MsgFlags.WAITALL));
        Completion sent = r.next();
        assertEquals(Op.SEND, sent.op(), sent.toString());
        assertEquals(bye.length, sent.result(), sent.toString());
        assertArrayEquals(bye, Peers.readExactly(c.peer(), bye.length), "reply on the half-closed connection");

        h.run(() -> loop.shutdown(id, 4, c.socket(), EventLoop.SHUT_WR));
        Completion shut = r.next();
        assertEquals(Op.SHUTDOWN, shut.op(), shut.toString());
        assertEquals(0, shut.result(), shut.toString());
        Peers.assertEof(c.peer());
    }

    @Test
    void connectToAPortWithoutListenerIsRefused() throws Exception {
        int port = Peers.unusedPort();
        Recorder r = new Recorder();
        int id = h.register(r);
        int socket = h.call(() -> h.track(loop.socket(Peers.loopback(port))));
        h.run(() -> loop.connect(id, 5, socket, Peers.loopback(port)));
        Completion c = r.next();
        assertEquals(Op.CONNECT, c.op(), c.toString());
        assertEquals(5, c.tag(), c.toString());
        assertEquals(-Errno.ECONNREFUSED, c.result(), c.toString());
    }

    @Test
    void loopConnectsSendsAllAndReceivesExactlyWithWaitAll() throws Exception {
        Connection c = connectedFromLoop();
        Recorder r = new Recorder();
        int id = h.register(r);
        assertEquals(Peers.LOOPBACK, h.call(() -> loop.localAddress(c.socket())).getAddress(), "local address");
        h.run(() -> {
            loop.setTcpNoDelay(c.socket(), true);
            loop.setBufferSizes(c.socket(), 64 * 1024, 64 * 1024);
        });

        byte[] out = Peers.randomBytes(300_000, SEED + 1);
        MemorySegment outSegment = segmentOf(out);
        h.run(() -> loop.send(id, 1, c.socket(), outSegment, 0, out.length, MsgFlags.WAITALL));
        Peers.assertSameBytes(out, Peers.readExactly(c.peer(), out.length), "loop -> peer");
        Completion sent = r.next();
        assertEquals(Op.SEND, sent.op(), sent.toString());
        assertEquals(out.length, sent.result(), "MSG_WAITALL send is all or an error: " + sent);

        byte[] in = Peers.randomBytes(70_000, SEED + 2);
        MemorySegment inSegment = arena.allocate(in.length + 16);
        h.run(() -> loop.recv(id, 2, c.socket(), inSegment, 16, in.length, MsgFlags.WAITALL));
        Peers.Writer writer = new Peers.Writer(c.peer(), in, 1000, false);
        Completion got = r.next();
        writer.join();
        assertEquals(Op.RECV, got.op(), got.toString());
        assertEquals(in.length, got.result(), "MSG_WAITALL recv of data sent in 1000-byte pieces: " + got);
        Peers.assertSameBytes(in, inSegment.asSlice(16, in.length).toArray(ValueLayout.JAVA_BYTE), "peer -> loop");
    }

    @Test
    void waitAllReceiveReturnsWhatCameBeforeEof() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(100);
        h.run(() -> loop.recv(id, 1, c.socket(), buffer, 0, 100, MsgFlags.WAITALL));
        c.peer().getOutputStream().write(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
        r.assertQuietFor(30); // MSG_WAITALL holds the receive until 100 bytes or EOF
        c.peer().shutdownOutput();
        Completion got = r.next();
        assertEquals(Op.RECV, got.op(), got.toString());
        assertEquals(10, got.result(), "MSG_WAITALL receive cut short by EOF returns the bytes it has: " + got);
    }

    @Test
    void multishotAcceptStaysArmedUntilItsListenerCloses() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        int listener = h.call(() -> loop.listen(Peers.loopback(0), 16));
        int port = h.call(() -> loop.localAddress(listener).getPort());
        h.run(() -> loop.accept(id, 1, listener, true));
        int clients = 5;
        Set<Integer> handles = new HashSet<>();
        for (int i = 0; i < clients; i++) {
            peer(Peers.connect(Peers.loopback(port)));
            Completion a = r.next();
            assertEquals(Op.ACCEPT, a.op(), a.toString());
            assertTrue(a.result() >= 0, "accept result is a socket handle: " + a);
            assertTrue(a.more(), "multishot accept stays armed: " + a);
            assertTrue(handles.add(a.result()), "handle given twice: " + a);
            h.run(() -> h.track(a.result()));
        }
        assertFalse(handles.contains(listener), "accepted handles differ from the listener's");

        h.run(() -> loop.close(id, 2, listener));
        List<Completion> both = r.next(2);
        Completion end = only(both, Op.ACCEPT);
        assertEquals(-Errno.ECANCELED, end.result(), "closing the listener cancels its accept: " + both);
        assertFalse(end.more(), "the cancelled multishot accept is final: " + end);
        assertEquals(0, only(both, Op.CLOSE).result(), both.toString());
        r.assertQuietFor(20);
    }

    // ------------------------------------------------------------------ cancel, close, timeouts

    @Test
    void cancelFailsAPendingReceiveAndUnknownTargetsGiveEnoent() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(64);
        long recv = h.call(() -> loop.recv(id, 1, c.socket(), buffer, 0, 64, MsgFlags.NONE));
        r.assertQuietFor(20);

        h.run(() -> loop.cancel(id, 2, recv));
        List<Completion> both = r.next(2);
        Completion cancelled = only(both, Op.RECV);
        Completion cancel = only(both, Op.CANCEL);
        assertEquals(-Errno.ECANCELED, cancelled.result(), "cancelled recv: " + both);
        assertEquals(0, cancel.result(), "cancel that found its target: " + both);

        h.run(() -> loop.cancel(id, 3, recv));
        Completion stale = r.next();
        assertEquals(Op.CANCEL, stale.op(), stale.toString());
        assertEquals(-Errno.ENOENT, stale.result(), "cancel of a completed operation: " + stale);
        h.run(() -> loop.cancel(id, 4, UserData.pack(id, Op.RECV, 0x5eed)));
        Completion unknown = r.next();
        assertEquals(-Errno.ENOENT, unknown.result(), "cancel of a user_data never submitted: " + unknown);

        // The socket is untouched by the cancel: a new receive gets the data.
        h.run(() -> loop.recv(id, 5, c.socket(), buffer, 0, 64, MsgFlags.NONE));
        c.peer().getOutputStream().write(new byte[] {1, 2, 3});
        Completion data = r.next();
        assertEquals(5, data.tag(), data.toString());
        assertEquals(3, data.result(), data.toString());
    }

    @Test
    void closeCancelsWhatIsPendingOnTheSocket() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(64);
        h.run(() -> loop.recv(id, 1, c.socket(), buffer, 0, 64, MsgFlags.NONE));
        r.assertQuietFor(20);
        h.run(() -> {
            h.untrack(c.socket());
            loop.close(id, 2, c.socket());
        });
        List<Completion> both = r.next(2);
        assertEquals(-Errno.ECANCELED, only(both, Op.RECV).result(), both.toString());
        assertEquals(0, only(both, Op.CLOSE).result(), both.toString());
        Peers.assertEof(c.peer());
    }

    @Test
    void timeoutCompletesWithEtimeAfterItsDuration() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        long duration = 50 * MILLIS;
        long start = System.nanoTime();
        h.run(() -> loop.timeout(id, 1, duration));
        Completion c = r.next();
        assertEquals(Op.TIMEOUT, c.op(), c.toString());
        assertEquals(-Errno.ETIME, c.result(), c.toString());
        long elapsed = c.nanos() - start;
        assertTrue(elapsed >= duration, "fired after " + elapsed / MILLIS + " ms, asked for 50 ms");
    }

    @Test
    void cancelledTimeoutCompletesWithEcanceled() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        long start = System.nanoTime();
        long timeout = h.call(() -> loop.timeout(id, 1, 10_000 * MILLIS));
        h.run(() -> loop.cancel(id, 2, timeout));
        List<Completion> both = r.next(2);
        assertEquals(-Errno.ECANCELED, only(both, Op.TIMEOUT).result(), both.toString());
        assertEquals(0, only(both, Op.CANCEL).result(), both.toString());
        assertTrue(System.nanoTime() - start < 5_000 * MILLIS, "cancel did not wait for the timeout");
    }

    @Test
    void linkTimeoutCancelsAReceiveThatGetsNoData() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(64);
        long duration = 50 * MILLIS;
        long start = System.nanoTime();
        h.run(() -> {
            loop.recv(id, 1, c.socket(), buffer, 0, 64, MsgFlags.NONE);
            loop.linkTimeout(id, 2, duration);
        });
        List<Completion> both = r.next(2);
        Completion recv = only(both, Op.RECV);
        Completion timer = only(both, Op.LINK_TIMEOUT);
        assertEquals(-Errno.ECANCELED, recv.result(), both.toString());
        assertEquals(-Errno.ETIME, timer.result(), both.toString());
        assertEquals(2, timer.tag(), timer.toString());
        long elapsed = recv.nanos() - start;
        assertTrue(elapsed >= duration, "recv cancelled after " + elapsed / MILLIS + " ms, limit was 50 ms");
        r.assertQuietFor(20);
    }

    @Test
    void linkTimeoutIsCancelledWhenTheReceiveCompletesFirst() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(64);
        long start = System.nanoTime();
        h.run(() -> {
            loop.recv(id, 1, c.socket(), buffer, 0, 64, MsgFlags.NONE);
            loop.linkTimeout(id, 2, 10_000 * MILLIS);
        });
        r.assertQuietFor(20);
        c.peer().getOutputStream().write(new byte[] {9, 8, 7, 6, 5});
        List<Completion> both = r.next(2);
        assertEquals(5, only(both, Op.RECV).result(), both.toString());
        assertEquals(-Errno.ECANCELED, only(both, Op.LINK_TIMEOUT).result(), both.toString());
        assertTrue(System.nanoTime() - start < 5_000 * MILLIS, "link timeout held the receive back");
        assertArrayEquals(new byte[] {9, 8, 7, 6, 5}, h.call(() -> buffer.asSlice(0, 5).toArray(ValueLayout.JAVA_BYTE)));
    }

    // ------------------------------------------------------------------ provided buffers

    /**
     * Copies every received buffer out in completion order. Until {@link #recycling} is set it keeps the
     * buffers (so the ring runs dry); afterwards it recycles each at once and re-arms on -ENOBUFS.
     * Loop thread, except the volatile flag and what it forwards to its recorder.
     */
    private static final class Collector implements CompletionHandler {
        final EventLoop loop;
        final BufferRing ring;
        final Recorder recorder = new Recorder();
        final ByteArrayOutputStream data = new ByteArrayOutputStream();
        final List<Integer> held = new ArrayList<>();
        final AtomicLong rearms = new AtomicLong();
        int handler;
        int socket;
        volatile boolean recycling;

        Collector(EventLoop loop, BufferRing ring) {
            this.loop = loop;
            this.ring = ring;
        }

        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            if (CqeFlags.hasBuffer(flags)) {
                int bufferId = CqeFlags.bufferId(flags);
                data.writeBytes(ring.buffer(bufferId).asSlice(0, Math.max(result, 0)).toArray(ValueLayout.JAVA_BYTE));
                if (recycling) {
                    ring.recycle(bufferId);
                } else {
                    held.add(bufferId);
                }
            }
            if (recycling && result == -Errno.ENOBUFS && !CqeFlags.hasMore(flags)) {
                rearms.incrementAndGet();
                loop.recvMultishot(handler, tag, socket, ring);
            }
            recorder.onCompletion(op, tag, result, flags);
        }
    }

    @Test
    void exhaustedBufferRingGivesEnobufsThenLosesNothingAfterRecycling() throws Exception {
        int buffers = 4;
        Connection c = accepted();
        BufferRing ring = h.bufferRing(5, buffers, LoopHarness.TINY);
        assertEquals(buffers, ring.bufferCount());
        assertEquals(LoopHarness.TINY, ring.bufferSize());
        assertEquals(5, ring.groupId());
        assertEquals(buffers, h.call(ring::available), "all buffers start with the engine");
        Collector collector = new Collector(loop, ring);
        collector.socket = c.socket();
        collector.handler = h.register(collector);
        long noBuffersBefore = loop.counters().noBufferEvents();

        byte[] payload = Peers.randomBytes(256 * 1024, SEED + 3);
        Peers.Writer writer = new Peers.Writer(c.peer(), payload, 16 * 1024, true);
        h.run(() -> loop.recvMultishot(collector.handler, 1, c.socket(), ring));

        // Phase 1: nobody recycles, so each buffer is filled once and then the ring is dry.
        List<Completion> dry = collector.recorder.untilFinal(Op.RECV_MULTISHOT);
        Completion last = dry.getLast();
        assertEquals(-Errno.ENOBUFS, last.result(), "a dry ring ends the multishot with -ENOBUFS: " + dry);
        assertFalse(last.more(), last.toString());
        assertEquals(buffers, dry.size() - 1, "one data completion per buffer before the ring ran dry: " + dry);
        Set<Integer> ids = new HashSet<>();
        for (Completion d : dry.subList(0, dry.size() - 1)) {
            assertTrue(d.more() && CqeFlags.hasBuffer(d.flags()), "data with BUFFER|MORE: " + d);
            assertTrue(d.result() > 0 && d.result() <= LoopHarness.TINY, d.toString());
            assertTrue(ids.add(CqeFlags.bufferId(d.flags())), "buffer handed out twice: " + dry);
        }
        assertEquals(0, h.call(ring::available), "no buffer left with the engine");
        assertTrue(loop.counters().noBufferEvents() > noBuffersBefore, "noBufferEvents: " + loop.counters());

        // Phase 2: give the buffers back, re-arm, and recycle as the data comes.
        h.run(() -> {
            collector.recycling = true;
            for (int id : collector.held) {
                ring.recycle(id);
            }
            loop.recvMultishot(collector.handler, 1, c.socket(), ring);
        });
        Completion end;
        do {
            end = collector.recorder.next();
            assertTrue(end.result() >= 0 || end.result() == -Errno.ENOBUFS, "unexpected " + end);
        } while (!(end.result() == 0 && !end.more()));
        writer.join();

        byte[] received = h.call(collector.data::toByteArray);
        Peers.assertSameBytes(payload, received, "stream through a 4 x 256 B ring (" + collector.rearms.get()
                + " re-arms after ENOBUFS)");
        assertEquals(buffers, h.call(ring::available), "every buffer is back with the engine");
    }

    @Test
    void bufferRingRejectsBadArguments() throws Exception {
        BufferRing ring = h.bufferRing(6, 4, LoopHarness.TINY);
        Map<String, LoopAction> cases = new LinkedHashMap<>();
        cases.put("recycle(-1)", () -> ring.recycle(-1));
        cases.put("recycle(count)", () -> ring.recycle(4));
        cases.put("buffer(-1)", () -> ring.buffer(-1));
        cases.put("buffer(count)", () -> ring.buffer(4));
        assertAllRejected(cases);
        assertEquals(4, h.call(ring::available), "rejected calls changed nothing");
    }

    // ------------------------------------------------------------------ zero-copy send

    /**
     * Sends a whole payload with SEND_ZC, issuing the next send from the result completion when the
     * kernel took only part. Loop thread.
     */
    private static final class ZeroCopySender implements CompletionHandler {
        final EventLoop loop;
        final Recorder recorder = new Recorder();
        final MemorySegment payload;
        final int length;
        final int fixedIndex;
        int handler;
        int socket;
        long offset;

        ZeroCopySender(EventLoop loop, MemorySegment payload, int length, int fixedIndex) {
            this.loop = loop;
            this.payload = payload;
            this.length = length;
            this.fixedIndex = fixedIndex;
        }

        void sendRest() {
            loop.sendZeroCopy(handler, (int) offset, socket, payload, offset, (int) (length - offset), fixedIndex, MsgFlags.NONE);
        }

        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            if (!CqeFlags.isNotification(flags) && result > 0) {
                offset += result;
                if (offset < length) {
                    sendRest();
                }
            }
            recorder.onCompletion(op, tag, result, flags);
        }
    }

    private void assertZeroCopySend(MemorySegment payload, byte[] expected, int fixedIndex) throws Exception {
        Connection c = connectedFromLoop();
        ZeroCopySender sender = new ZeroCopySender(loop, payload, expected.length, fixedIndex);
        sender.socket = c.socket();
        sender.handler = h.register(sender);
        long copiedBefore = loop.counters().zeroCopySendsCopied();

        h.run(sender::sendRest);
        Peers.assertSameBytes(expected, Peers.readExactly(c.peer(), expected.length), "data sent with SEND_ZC");

        int results = 0;
        int bytes = 0;
        int outstanding = 0;
        int copied = 0;
        while (bytes < expected.length || outstanding > 0) {
            Completion z = sender.recorder.next();
            assertEquals(Op.SEND_ZC, z.op(), z.toString());
            if (z.notification()) {
                assertFalse(z.more(), "a notification is final: " + z);
                assertTrue(outstanding > 0, "notification without a result completion before it: " + z);
                // Loopback always copies (skb_orphan_frags_rx), and the kernel says so with REPORT_USAGE.
                assertEquals(CqeFlags.ZC_COPIED, z.result(), "loopback notification reports the copy: " + z);
                outstanding--;
                copied++;
            } else {
                assertTrue(z.result() > 0, "send result: " + z);
                assertTrue(z.more(), "a successful SEND_ZC result announces its notification with MORE: " + z);
                outstanding++;
                results++;
                bytes += z.result();
            }
        }
        assertEquals(expected.length, bytes, "bytes reported by the result completions");
        assertTrue(results >= 1);
        sender.recorder.assertQuietFor(50);
        assertEquals(copiedBefore + copied, loop.counters().zeroCopySendsCopied(), "zeroCopySendsCopied: " + loop.counters());
        long before = loop.counters().syscalls();
        Thread.sleep(200);
        long idle = loop.counters().syscalls() - before;
        assertTrue(idle <= 10, idle + " syscalls in 200 ms after every notification arrived; loop " + h.call(loop::toString));
    }

    @Test
    void sendZeroCopyGivesResultWithMoreThenNotification() throws Exception {
        byte[] payload = Peers.randomBytes(256 * 1024, SEED + 4);
        assertZeroCopySend(segmentOf(payload), payload, -1);
    }

    @Test
    void sendZeroCopyFromARegisteredFixedBuffer() throws Exception {
        byte[] payload = Peers.randomBytes(LoopHarness.LARGE, SEED + 5);
        Buffer buffer = h.call(() -> {
            Buffer b = h.pool().lease(LoopHarness.LARGE);
            MemorySegment.copy(payload, 0, b.segment(), ValueLayout.JAVA_BYTE, 0, payload.length);
            return b;
        });
        MemoryRegion region = buffer.region();
        int index = h.call(() -> loop.registerFixedBuffers(region))[0];
        assertTrue(index >= 0, "registration numbers the region: " + region);
        try {
            assertZeroCopySend(buffer.segment(), payload, index);
        } finally {
            h.run(buffer::release);
        }
    }

    // ------------------------------------------------------------------ shutdown and threads

    @Test
    void closeUnderLoadReturnsInBoundedTimeWithNothingPending() throws Exception {
        EchoServer server = h.echoServer(7, 64, LoopHarness.LARGE);
        int connections = 32;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong echoed = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Socket> clients = new ArrayList<>();
        List<Thread> pingers = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            Socket client = peer(Peers.connect(Peers.loopback(server.port())));
            clients.add(client);
            byte[] chunk = Peers.randomBytes(16 * 1024, SEED + 100 + i);
            pingers.add(Thread.ofPlatform().daemon(true).name("pinger-" + i).start(() -> {
                try {
                    while (!stop.get()) {
                        client.getOutputStream().write(chunk);
                        byte[] back = Peers.readExactly(client, chunk.length);
                        if (!Arrays.equals(chunk, back)) {
                            throw new AssertionError("echo differs");
                        }
                        echoed.addAndGet(chunk.length);
                    }
                } catch (Throwable t) {
                    if (!stop.get()) {
                        failure.compareAndSet(null, t);
                    }
                }
            }));
        }
        LoopHarness.await(() -> echoed.get() > 4L << 20 || failure.get() != null, "4 MiB echoed under load");
        assertNull(failure.get(), "streaming failed before the shutdown");

        long start = System.nanoTime();
        stop.set(true);
        h.stopLoop();
        long elapsed = System.nanoTime() - start;

        assertTrue(elapsed < 10_000 * MILLIS, "EventLoopThread.close() took " + elapsed / MILLIS + " ms");
        assertFalse(h.thread().isAlive(), "loop thread ended");
        assertNull(h.thread().failure(), "loop thread failure");
        assertEquals(0, loop.pending(), "operations still pending after close");
        for (Socket client : clients) {
            client.close();
        }
        for (Thread t : pingers) {
            t.join(5_000);
            assertFalse(t.isAlive(), "pinger stuck after its socket closed");
        }
    }

    @Test
    void executeRunsTasksOnTheLoopThreadAndForeignCallsAreRefused() throws Exception {
        String loopThread = h.call(() -> Thread.currentThread().getName());
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        AtomicBoolean inLoop = new AtomicBoolean();
        CountDownLatch ran = new CountDownLatch(1);
        loop.execute(() -> {
            ranOn.set(Thread.currentThread());
            inLoop.set(loop.inLoop());
            ran.countDown();
        });
        assertTrue(ran.await(Recorder.WAIT_MILLIS, TimeUnit.MILLISECONDS), "task never ran");
        assertEquals(loopThread, ranOn.get().getName(), "task thread");
        assertTrue(inLoop.get(), "inLoop() inside a task");
        assertFalse(loop.inLoop(), "inLoop() on the test thread");

        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(64);
        assertThrows(IllegalStateException.class, () -> loop.nop(id, 1), "nop from a foreign thread");
        assertThrows(IllegalStateException.class, () -> loop.timeout(id, 2, MILLIS), "timeout from a foreign thread");
        assertThrows(IllegalStateException.class, () -> loop.recv(id, 3, 0, buffer, 0, 64, MsgFlags.NONE),
                "recv from a foreign thread");
        assertThrows(IllegalStateException.class, () -> loop.poll(0), "poll from a foreign thread");
        r.assertQuietFor(50);

        h.run(() -> loop.nop(id, 4));
        assertEquals(4, r.next().tag(), "the loop still works after refusing foreign calls");
        assertNull(h.thread().failure());
    }

    @Test
    void aDrivingJobRunsOnTheLoopThreadAndWaitsForItsCompletionsByPollingItself() throws Exception {
        EventLoopThread t = h.thread();
        AtomicLong fired = new AtomicLong();
        int handler = h.call(() -> loop.registerHandler((op, tag, result, flags) -> fired.incrementAndGet()));
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        AtomicLong polls = new AtomicLong();
        for (int round = 0; round < 3; round++) {
            long before = fired.get();
            t.runDriving(() -> {
                ranOn.set(Thread.currentThread());
                loop.timeout(handler, 1, 20 * MILLIS);
                long deadline = System.nanoTime() + Recorder.WAIT_MILLIS * MILLIS;
                // Nothing else runs the loop while the job does: only its own polls deliver the timeout.
                while (fired.get() == before && System.nanoTime() < deadline) {
                    loop.poll(50 * MILLIS);
                    polls.incrementAndGet();
                }
            });
            assertEquals(before + 1, fired.get(), "the job's own polls delivered its timeout, round " + round);
        }
        assertEquals(t.thread(), ranOn.get(), "the job ran on the loop thread");
        assertTrue(polls.get() >= 3, "each job polled the loop: " + polls.get());
        assertEquals("ran after", h.call(() -> "ran after"), "the loop goes on running tasks after the jobs");
    }

    @Test
    void aDrivingJobsFailureReachesItsCallerAndOneStartedOnTheLoopThreadRunsAtOnce() throws Exception {
        EventLoopThread t = h.thread();
        IOException thrown = new IOException("the job failed");
        IOException got = assertThrows(IOException.class, () -> t.runDriving(() -> {
            throw thrown;
        }));
        assertEquals(thrown, got, "the job's own exception, unwrapped");
        AtomicReference<Thread> inner = new AtomicReference<>();
        h.call(() -> {
            t.runDriving(() -> inner.set(Thread.currentThread()));
            return null;
        });
        assertEquals(t.thread(), inner.get(), "a job from the loop thread ran there, at once");
        assertThrows(IllegalArgumentException.class, () -> t.runDriving(null));
    }

    @Test
    void aDrivingJobForAStoppedLoopThreadFailsInsteadOfWaitingForever() throws Exception {
        EventLoopThread t = EventLoopThread.start("zcnet-stopped", EventLoopConfig.defaults().withEngine(engine()));
        t.close();
        AtomicBoolean ran = new AtomicBoolean();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> t.runDriving(() -> ran.set(true)));
        assertTrue(e.getMessage().contains("stopped"), e::getMessage);
        assertFalse(ran.get(), "the job did not run");
    }

    @Test
    void executeWakesALoopBlockedInPoll() throws Exception {
        // EventLoopThread blocks up to 500 ms per poll. The wake-up counter, not the latency, says the
        // wake-up ended that wait: two busy cores can hold any thread back as long. Eight rounds, and
        // more (bounded) until the loop was found asleep at least once.
        List<Long> micros = new ArrayList<>();
        long deadline = System.nanoTime() + Recorder.WAIT_MILLIS * MILLIS;
        for (int round = 0; round < 8 || loop.counters().wakeups() == 0 && System.nanoTime() < deadline; round++) {
            Thread.sleep(30); // let the loop go back to sleep in the kernel or the selector
            CountDownLatch ran = new CountDownLatch(1);
            long start = System.nanoTime();
            loop.execute(ran::countDown);
            assertTrue(ran.await(Recorder.WAIT_MILLIS, TimeUnit.MILLISECONDS), "task never ran");
            micros.add((System.nanoTime() - start) / 1000);
        }
        assertTrue(loop.counters().wakeups() > 0, "wake-ups are counted: " + loop.counters()
                + "; wake-up latencies (us) " + micros);
    }

    @Test
    void aLoopWaitingOnPendingOperationsBlocksInsteadOfSpinning() throws Exception {
        // EventLoopConfig: with no idle strategy the thread blocks in the kernel (500 ms per poll).
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(64);
        h.run(() -> {
            loop.recv(id, 1, c.socket(), buffer, 0, 64, MsgFlags.NONE);
            loop.timeout(id, 2, 10_000 * MILLIS);
        });
        Thread.sleep(50);
        long before = loop.counters().syscalls();
        Thread.sleep(300);
        long during = loop.counters().syscalls() - before;
        assertTrue(during <= 10, during + " syscalls in 300 ms with a recv and a timeout pending and nothing happening; "
                + loop.counters() + "; loop " + h.call(loop::toString));
    }

    @ParameterizedTest(name = "zero-copy={0}")
    @ValueSource(booleans = {false, true})
    void aSendBlockedOnAFullSocketWaitsWithoutSpinning(boolean zeroCopy) throws Exception {
        Connection c = connectedFromLoop();
        byte[] payload = Peers.randomBytes(8 << 20, SEED + 6);
        MemorySegment data = segmentOf(payload);
        // SEND_ZC has no MSG_WAITALL: the sender re-issues the rest after each short result.
        ZeroCopySender sender = new ZeroCopySender(loop, data, payload.length, -1);
        sender.socket = c.socket();
        sender.handler = h.register(sender);
        h.run(() -> {
            if (zeroCopy) {
                sender.sendRest();
            } else {
                loop.send(sender.handler, 1, c.socket(), data, 0, payload.length, MsgFlags.WAITALL);
            }
        });
        Thread.sleep(50); // the socket buffers fill; the peer reads nothing yet
        long before = loop.counters().syscalls();
        Thread.sleep(300);
        long during = loop.counters().syscalls() - before;
        byte[] got = Peers.readExactly(c.peer(), payload.length);
        assertTrue(during <= 10, during + " syscalls in 300 ms while a send waited for socket space; " + loop.counters());
        Peers.assertSameBytes(payload, got, "data sent while the peer was slow");
        if (!zeroCopy) {
            Completion sent = sender.recorder.next();
            assertEquals(Op.SEND, sent.op(), sent.toString());
            assertEquals(payload.length, sent.result(), "MSG_WAITALL send: " + sent);
        }
    }

    @Test
    void closingALoopThreadRightAfterItWorkedIsPrompt() throws Exception {
        // close() sets a stop flag and calls wakeup(); a wakeup that lands while the loop is between
        // polls must still stop the next poll from sleeping (Selector.wakeup semantics), else close
        // waits out the 500 ms poll.
        List<Long> millis = new ArrayList<>();
        for (int round = 0; round < 10; round++) {
            EventLoopThread t = EventLoopThread.start("zcnet-close-" + round, EventLoopConfig.defaults().withEngine(engine()));
            Recorder r = new Recorder();
            int tag = round;
            t.call(() -> t.loop().nop(t.loop().registerHandler(r), tag));
            r.next();
            long start = System.nanoTime();
            t.close();
            millis.add((System.nanoTime() - start) / MILLIS);
        }
        assertTrue(millis.stream().allMatch(m -> m < 10_000), "EventLoopThread.close() right after a completion took (ms) " + millis);
    }

    @Test
    void wakeupBeforePollKeepsThatPollFromSleeping() throws Exception {
        try (EventLoop own = EventLoops.open(EventLoopConfig.defaults().withEngine(engine()))) {
            own.poll(0); // the test thread becomes the owner
            List<Long> millis = new ArrayList<>();
            for (int round = 0; round < 3; round++) {
                Thread waker = Thread.ofPlatform().start(own::wakeup);
                waker.join();
                long start = System.nanoTime();
                own.poll(20_000 * MILLIS); // a lost wake-up sleeps it out: far beyond any scheduling delay
                millis.add((System.nanoTime() - start) / MILLIS);
            }
            assertTrue(millis.stream().allMatch(m -> m < 10_000), "poll(20 s) after a wakeup() from another thread took (ms) " + millis);
        }
    }

    @Test
    void closingAnIdleLoopThreadIsPrompt() throws Exception {
        Thread.sleep(30);
        long start = System.nanoTime();
        h.stopLoop();
        long elapsed = System.nanoTime() - start;
        assertTrue(elapsed < 10_000 * MILLIS, "EventLoopThread.close() of an idle loop took " + elapsed / MILLIS + " ms");
    }

    @Test
    void operationsPreparedByATaskAreSubmittedWithoutWaitingForAnotherWakeUp() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        List<Long> micros = new ArrayList<>();
        long worst = 0;
        for (int round = 0; round < 8; round++) {
            Thread.sleep(30);
            long start = System.nanoTime();
            h.run(() -> loop.nop(id, 1));
            long took = r.next().nanos() - start;
            micros.add(took / 1000);
            worst = Math.max(worst, took);
        }
        assertTrue(worst < 10_000 * MILLIS, "nop-from-a-task latencies (us) " + micros + "; loop " + h.call(loop::toString));
    }

    @Test
    void tasksFromManyThreadsAllRunOnTheLoop() throws Exception {
        int threads = 4;
        int perThread = 2_000;
        String loopThread = h.call(() -> Thread.currentThread().getName());
        AtomicLong ran = new AtomicLong();
        AtomicLong wrongThread = new AtomicLong();
        AtomicLong rejected = new AtomicLong();
        long tasksBefore = loop.counters().tasksRun();
        List<Thread> producers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            producers.add(Thread.ofPlatform().start(() -> {
                Runnable task = () -> {
                    if (!Thread.currentThread().getName().equals(loopThread)) {
                        wrongThread.incrementAndGet();
                    }
                    ran.incrementAndGet();
                };
                for (int i = 0; i < perThread; i++) {
                    // The queue is bounded: a full queue is a RejectedExecutionException, never a block.
                    for (int attempt = 0; ; attempt++) {
                        try {
                            loop.execute(task);
                            break;
                        } catch (RejectedExecutionException e) {
                            rejected.incrementAndGet();
                            if (attempt > 100_000) {
                                return;
                            }
                            LockSupport.parkNanos(50_000);
                        }
                    }
                }
            }));
        }
        for (Thread t : producers) {
            t.join(10_000);
            assertFalse(t.isAlive(), "producer stuck");
        }
        LoopHarness.await(() -> ran.get() == (long) threads * perThread, "all tasks to run; ran " + ran.get());
        assertEquals(0, wrongThread.get(), "tasks that ran off the loop thread");
        // The loop adds a batch to the counter after the batch has run, so the count may trail the tasks briefly.
        LoopHarness.await(() -> loop.counters().tasksRun() >= tasksBefore + (long) threads * perThread,
                "the tasks counter to count every task; " + loop.counters());
    }

    // ------------------------------------------------------------------ argument validation

    private void assertAllRejected(Map<String, LoopAction> cases) throws Exception {
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, LoopAction> e : cases.entrySet()) {
            Throwable thrown = h.thrownOnLoop(e.getValue());
            if (!(thrown instanceof IllegalArgumentException) || thrown.getMessage() == null
                    || thrown.getMessage().isBlank()) {
                wrong.add(e.getKey() + " -> " + (thrown == null ? "no exception" : thrown));
            }
        }
        assertEquals(List.of(), wrong, "calls that should throw IllegalArgumentException with a message");
    }

    @Test
    void invalidArgumentsAreRejectedBeforeAnythingIsSubmitted() throws Exception {
        Connection c = accepted();
        int s = c.socket();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment seg = arena.allocate(64);
        Map<String, LoopAction> cases = new LinkedHashMap<>();
        cases.put("send length -1", () -> loop.send(id, 0, s, seg, 0, -1, MsgFlags.NONE));
        cases.put("send offset -1", () -> loop.send(id, 0, s, seg, -1, 8, MsgFlags.NONE));
        cases.put("send past the segment end", () -> loop.send(id, 0, s, seg, 60, 8, MsgFlags.NONE));
        cases.put("send null buffer", () -> loop.send(id, 0, s, null, 0, 8, MsgFlags.NONE));
        cases.put("send negative socket", () -> loop.send(id, 0, -1, seg, 0, 8, MsgFlags.NONE));
        cases.put("recv length -1", () -> loop.recv(id, 0, s, seg, 0, -1, MsgFlags.NONE));
        cases.put("recv offset past the end", () -> loop.recv(id, 0, s, seg, 65, 0, MsgFlags.NONE));
        cases.put("recv past the segment end", () -> loop.recv(id, 0, s, seg, 1, 64, MsgFlags.NONE));
        cases.put("recv null buffer", () -> loop.recv(id, 0, s, null, 0, 8, MsgFlags.NONE));
        cases.put("sendZeroCopy length -1", () -> loop.sendZeroCopy(id, 0, s, seg, 0, -1, -1, MsgFlags.NONE));
        cases.put("sendZeroCopy past the segment end", () -> loop.sendZeroCopy(id, 0, s, seg, 32, 64, -1, MsgFlags.NONE));
        cases.put("recvMultishot null ring", () -> loop.recvMultishot(id, 0, s, null));
        cases.put("connect null address", () -> loop.connect(id, 0, s, null));
        cases.put("shutdown how=3", () -> loop.shutdown(id, 0, s, 3));
        cases.put("timeout -1 ns", () -> loop.timeout(id, 0, -1));
        cases.put("registerHandler(null)", () -> loop.registerHandler(null));
        cases.put("createBufferRing count 3", () -> loop.createBufferRing(40, h.pool(), 3, LoopHarness.TINY));
        cases.put("createBufferRing count 0", () -> loop.createBufferRing(41, h.pool(), 0, LoopHarness.TINY));
        cases.put("createBufferRing group -1", () -> loop.createBufferRing(-1, h.pool(), 4, LoopHarness.TINY));
        cases.put("createBufferRing group 65536", () -> loop.createBufferRing(65536, h.pool(), 4, LoopHarness.TINY));
        cases.put("createBufferRing size above every class",
                () -> loop.createBufferRing(42, h.pool(), 4, 2 * LoopHarness.LARGE));
        cases.put("createBufferRing null pool", () -> loop.createBufferRing(43, null, 4, LoopHarness.TINY));
        assertAllRejected(cases);
        r.assertQuietFor(50);

        // The loop is unharmed by what it refused.
        h.run(() -> loop.nop(id, 77));
        assertEquals(77, r.next().tag());
    }

    @Test
    void unknownSocketHandlesCompleteWithEbadf() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment seg = arena.allocate(64);
        int unknown = 1_000_000;
        h.run(() -> loop.recv(id, 1, unknown, seg, 0, 64, MsgFlags.NONE));
        Completion recv = r.next();
        assertEquals(Op.RECV, recv.op(), recv.toString());
        assertEquals(-Errno.EBADF, recv.result(), "recv on a handle this loop never opened: " + recv);
        h.run(() -> loop.send(id, 2, unknown, seg, 0, 64, MsgFlags.NONE));
        Completion send = r.next();
        assertEquals(Op.SEND, send.op(), send.toString());
        assertEquals(-Errno.EBADF, send.result(), "send on a handle this loop never opened: " + send);
    }

    @Test
    void operationsOnAClosedSocketCompleteWithEbadf() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> {
            h.untrack(c.socket());
            loop.close(id, 1, c.socket());
        });
        assertEquals(0, r.next().result(), "close");
        MemorySegment seg = arena.allocate(64);
        h.run(() -> loop.recv(id, 2, c.socket(), seg, 0, 64, MsgFlags.NONE));
        Completion recv = r.next();
        assertEquals(-Errno.EBADF, recv.result(), "recv on a closed handle: " + recv);
    }

    @Test
    void listenAndSocketRejectBadAddresses() throws Exception {
        Map<String, LoopAction> cases = new LinkedHashMap<>();
        cases.put("listen null", () -> loop.listen(null, 16));
        cases.put("socket null", () -> loop.socket(null));
        assertAllRejected(cases);
        Throwable inUse;
        try (ServerSocket taken = Peers.listener()) {
            inUse = h.thrownOnLoop(() -> loop.listen(Peers.loopback(taken.getLocalPort()), 16));
        }
        assertInstanceOf(IOException.class, inUse, "listen on a port in use");
    }

    @Test
    void stoppedLoopHasNothingPendingAndReadableCounters() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.nop(id, 1));
        assertEquals(Op.NOP, r.next().op());
        h.stopLoop();
        assertFalse(h.thread().isAlive());
        assertEquals(0, loop.pending(), "pending after close");
        assertTrue(loop.counters().completions() >= 1, "counters stay readable after close: " + loop.counters());
    }

    // ------------------------------------------------------------------ close and buffer ring discipline

    /** Re-arms a receive on every completion, errors included: the worst case for a loop that closes. */
    private static final class Rearmer implements CompletionHandler {
        final EventLoop loop;
        final MemorySegment buffer;
        final AtomicLong completions = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        int handler;
        int socket;

        Rearmer(EventLoop loop, MemorySegment buffer) {
            this.loop = loop;
            this.buffer = buffer;
        }

        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            completions.incrementAndGet();
            if (result > 0) {
                bytes.addAndGet(result);
            }
            loop.recv(handler, tag, socket, buffer, 0, (int) buffer.byteSize(), MsgFlags.NONE);
        }
    }

    @Test
    void closeIsPromptWhileAHandlerKeepsReArmingAndThePeerKeepsSending() throws Exception {
        Connection c = accepted();
        Rearmer rearmer = new Rearmer(loop, arena.allocate(4096));
        rearmer.socket = c.socket();
        rearmer.handler = h.register(rearmer);
        AtomicBoolean stop = new AtomicBoolean();
        Thread sender = Thread.ofPlatform().daemon(true).name("peer-sender").start(() -> {
            byte[] chunk = new byte[8192];
            try {
                for (int i = 0; i < 1_000_000 && !stop.get(); i++) {
                    c.peer().getOutputStream().write(chunk);
                }
            } catch (IOException expected) {
                // the loop closed the socket under the sender
            }
        });
        h.run(() -> loop.recv(rearmer.handler, 1, c.socket(), rearmer.buffer, 0, 4096, MsgFlags.NONE));
        LoopHarness.await(() -> rearmer.bytes.get() > 1 << 20, "1 MiB received through the re-arming handler");

        long start = System.nanoTime();
        h.stopLoop();
        long elapsed = System.nanoTime() - start;
        stop.set(true);

        assertTrue(elapsed < 10_000 * MILLIS, "close with a handler re-arming during the drain took "
                + elapsed / MILLIS + " ms");
        assertFalse(h.thread().isAlive(), "loop thread ended");
        assertNull(h.thread().failure(), "loop thread failure");
        assertEquals(0, loop.pending(), "operations still pending after close");
        c.peer().close();
        sender.join(5_000);
        assertFalse(sender.isAlive(), "sender stuck after its socket closed");
    }

    @Test
    void bufferRingRefusesEveryThreadButItsLoops() throws Exception {
        BufferRing ring = h.bufferRing(8, 4, LoopHarness.TINY);
        IllegalStateException close = assertThrows(IllegalStateException.class, ring::close, "close off the loop");
        assertTrue(close.getMessage().contains("thread"), close.getMessage());
        IllegalStateException recycle = assertThrows(IllegalStateException.class, () -> ring.recycle(0),
                "recycle off the loop");
        assertTrue(recycle.getMessage().contains("thread"), recycle.getMessage());
        assertEquals(4, h.call(ring::available), "the refused close left the ring open");
        h.run(ring::close);
        assertEquals(0, h.call(ring::available), "closed on its loop");
        // The group id is free again only if the kernel (or NIO's table) really let go of it.
        BufferRing again = h.bufferRing(8, 4, LoopHarness.TINY);
        assertEquals(4, h.call(again::available));
    }

    @Test
    void closingABufferRingWithAnArmedMultishotReceiveIsRefused() throws Exception {
        Connection c = accepted();
        BufferRing ring = h.bufferRing(9, 4, LoopHarness.TINY);
        Recorder r = new Recorder();
        int id = h.register(r);
        long[] receive = new long[1];
        Throwable refused = h.thrownOnLoop(() -> {
            receive[0] = loop.recvMultishot(id, 4, c.socket(), ring);
            ring.close(); // armed since it was prepared, submitted or not
        });
        assertInstanceOf(IllegalStateException.class, refused, "close with an armed multishot receive");
        assertTrue(refused.getMessage().contains("armed"), refused.getMessage());

        c.peer().getOutputStream().write(new byte[] {1, 2, 3});
        Completion data = r.next();
        assertEquals(3, data.result(), "the receive still works after the refused close: " + data);
        assertTrue(data.more() && CqeFlags.hasBuffer(data.flags()), data.toString());
        Throwable stillRefused = h.thrownOnLoop(ring::close);
        assertInstanceOf(IllegalStateException.class, stillRefused, "close while the receive is still armed");

        h.run(() -> loop.cancel(id, 5, receive[0]));
        List<Completion> rest = r.next(2);
        Completion end = only(rest, Op.RECV_MULTISHOT);
        assertEquals(-Errno.ECANCELED, end.result(), "cancelled: " + rest);
        assertFalse(end.more() || CqeFlags.hasBuffer(end.flags()), end.toString());
        h.run(() -> {
            ring.recycle(CqeFlags.bufferId(data.flags()));
            ring.close();
        });
        assertEquals(0, h.call(ring::available), "closed once no receive was armed on it");
        assertEquals(0, h.call(loop::pending));
    }

    // ------------------------------------------------------------------ multishot receive: when to retry

    /** Writes {@code length} bytes from the peer and gives loopback time to queue them at the loop's socket. */
    private static byte[] queueAtLoop(Connection c, int length, long seed) throws Exception {
        byte[] data = Peers.randomBytes(length, seed);
        c.peer().getOutputStream().write(data);
        Thread.sleep(30);
        return data;
    }

    @Test
    void multishotReceiveThatFillsTheLastBufferStaysArmedWhileNothingMoreIsQueued() throws Exception {
        Connection c = accepted();
        BufferRing ring = h.bufferRing(10, 2, LoopHarness.TINY);
        Recorder r = new Recorder();
        int id = h.register(r);
        byte[] data = queueAtLoop(c, 2 * LoopHarness.TINY, SEED + 10);
        h.run(() -> loop.recvMultishot(id, 1, c.socket(), ring));

        // io_recv_finish retries only while the socket is known non-empty: after the second buffer it is
        // empty, so the receive stays armed instead of looking for a third buffer (-ENOBUFS).
        List<Completion> got = r.next(2);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (Completion d : got) {
            assertEquals(LoopHarness.TINY, d.result(), "a full buffer: " + got);
            assertTrue(d.more() && CqeFlags.hasBuffer(d.flags()), "data with BUFFER|MORE: " + got);
            bytes.write(bufferBytes(ring, CqeFlags.bufferId(d.flags()), d.result()));
        }
        assertArrayEquals(data, bytes.toByteArray(), "bytes of both buffers");
        assertEquals(CqeFlags.SOCK_NONEMPTY, got.get(0).flags() & CqeFlags.SOCK_NONEMPTY,
                "the first buffer left data queued: " + got);
        assertEquals(0, got.get(1).flags() & CqeFlags.SOCK_NONEMPTY, "the second one emptied the socket: " + got);
        r.assertQuietFor(100);

        h.run(() -> {
            for (Completion d : got) {
                ring.recycle(CqeFlags.bufferId(d.flags()));
            }
        });
        byte[] more = queueAtLoop(c, 10, SEED + 11);
        Completion next = r.next();
        assertEquals(10, next.result(), "the receive is still armed: " + next);
        assertTrue(next.more() && CqeFlags.hasBuffer(next.flags()), next.toString());
        assertArrayEquals(more, bufferBytes(ring, CqeFlags.bufferId(next.flags()), 10), "bytes after recycling");
    }

    @Test
    void multishotReceiveSaysSockNonemptyOnTheLastBufferBeforeEnobufs() throws Exception {
        Connection c = accepted();
        BufferRing ring = h.bufferRing(11, 2, LoopHarness.TINY);
        Recorder r = new Recorder();
        int id = h.register(r);
        queueAtLoop(c, 3 * LoopHarness.TINY + 40, SEED + 12);
        h.run(() -> loop.recvMultishot(id, 1, c.socket(), ring));

        List<Completion> got = r.next(3);
        for (Completion d : got.subList(0, 2)) {
            assertEquals(LoopHarness.TINY, d.result(), "a full buffer: " + got);
            assertEquals(CqeFlags.BUFFER | CqeFlags.MORE | CqeFlags.SOCK_NONEMPTY,
                    d.flags() & ~(0xFFFF << CqeFlags.BUFFER_SHIFT), "more data was queued after each: " + got);
        }
        assertEquals(-Errno.ENOBUFS, got.get(2).result(), "then the ring is dry: " + got);
        assertEquals(0, got.get(2).flags(), "ENOBUFS ends the receive: " + got);
        r.assertQuietFor(20);
    }

    @Test
    void singleReceiveSaysSockNonemptyWhenDataIsLeft() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        queueAtLoop(c, 1000, SEED + 13);
        MemorySegment buffer = arena.allocate(1000);
        h.run(() -> loop.recv(id, 1, c.socket(), buffer, 0, 100, MsgFlags.NONE));
        Completion first = r.next();
        assertEquals(100, first.result(), first.toString());
        assertEquals(CqeFlags.SOCK_NONEMPTY, first.flags(), "900 bytes are left: " + first);
        h.run(() -> loop.recv(id, 2, c.socket(), buffer, 100, 900, MsgFlags.WAITALL));
        Completion rest = r.next();
        assertEquals(900, rest.result(), rest.toString());
        assertEquals(0, rest.flags(), "nothing is left: " + rest);
    }

    @Test
    void completionsAfterAHandlerThatThrowsAreStillDispatchedWhenTheLoopCloses() throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        int thrower = h.register((op, tag, result, flags) -> {
            throw new IllegalStateException("handler failure injected by the test");
        });
        h.run(() -> {
            loop.nop(thrower, 1);
            loop.nop(id, 2);
            loop.nop(id, 3);
        });
        // The loop thread dies of the handler's exception and closes the loop: the two completions
        // reaped with the one that threw must still reach their handler.
        LoopHarness.await(() -> !h.thread().isAlive(), "the loop thread to end");
        assertInstanceOf(IllegalStateException.class, h.thread().failure(), "the handler's exception ended the loop");
        List<Completion> rest = r.next(2);
        assertEquals(List.of(2, 3), List.of(rest.get(0).tag(), rest.get(1).tag()), "completions after the throw: " + rest);
        assertEquals(0, rest.get(0).result(), rest.toString());
        assertEquals(0, loop.pending(), "pending after close");
    }

    // ------------------------------------------------------------------ gathered sends, buffer-select receive, links

    @Test
    void sendMessageGathersHeaderAndPayloadSlicesIntoOneByteStream() throws Exception {
        Connection c = connectedFromLoop();
        byte[] header = Peers.randomBytes(32, SEED + 20);
        byte[] payload = Peers.randomBytes(200 * 1024, SEED + 21);
        MemorySegment headerSegment = segmentOf(header);
        MemorySegment payloadSegment = segmentOf(payload);
        // Two slices of one segment, out of their memory order: each piece keeps its own range.
        GatherList message = GatherList.allocate(arena, 4)
                .add(headerSegment, 0, header.length)
                .add(payloadSegment, 100_000, payload.length - 100_000)
                .add(payloadSegment, 0, 100_000);
        byte[] expected = new byte[header.length + payload.length];
        System.arraycopy(header, 0, expected, 0, header.length);
        System.arraycopy(payload, 100_000, expected, header.length, payload.length - 100_000);
        System.arraycopy(payload, 0, expected, header.length + payload.length - 100_000, 100_000);
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.sendMessage(id, 1, c.socket(), message, MsgFlags.WAITALL));
        Peers.assertSameBytes(expected, Peers.readExactly(c.peer(), expected.length), "gathered stream");
        Completion done = r.next();
        assertEquals(Op.SENDMSG, done.op(), done.toString());
        assertEquals(expected.length, done.result(), "all bytes with WAITALL: " + done);
        assertFalse(done.more(), done.toString());
    }

    /**
     * Pieces of every size around where an engine may treat small and large pieces differently, many
     * times over the socket buffers, so the send stops and resumes inside pieces; without WAITALL the
     * send may end short, and what it reports must be exactly the prefix the peer got.
     */
    @Test
    void gatheredPiecesOfEverySizeArriveInOrderThroughAFullSocketBuffer() throws Exception {
        Connection c = connectedFromLoop();
        int[] sizes = {0, 1, 31, 32, 4095, 4096, 4097, 16383, 16384, 16385, 65535, 65536, 65537, 3, 200_000, 7};
        int rounds = 8;
        byte[] source = Peers.randomBytes(300_000, SEED + 24);
        MemorySegment sourceSegment = segmentOf(source);
        GatherList message = GatherList.allocate(arena, sizes.length * rounds);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        int at = 0;
        for (int round = 0; round < rounds; round++) {
            for (int size : sizes) {
                int offset = at % (source.length - size);
                message.add(sourceSegment, offset, size);
                expected.write(source, offset, size);
                at += 7919;
            }
        }
        byte[] all = expected.toByteArray();
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.sendMessage(id, 1, c.socket(), message, MsgFlags.WAITALL));
        Peers.assertSameBytes(all, Peers.readExactly(c.peer(), all.length), "gathered stream with WAITALL");
        assertEquals(all.length, r.next().result(), "all bytes with WAITALL");

        h.run(() -> loop.sendMessage(id, 2, c.socket(), message, 0));
        Completion shortOrWhole = r.next();
        int sent = shortOrWhole.result();
        assertTrue(sent > 0 && sent <= all.length, "bytes of a send without WAITALL: " + shortOrWhole);
        Peers.assertSameBytes(Arrays.copyOf(all, sent), Peers.readExactly(c.peer(), sent), "the prefix it reported");
    }

    @Test
    void aPlainSendAfterGatheredOnesSendsItsOwnBytes() throws Exception {
        Connection c = connectedFromLoop();
        byte[] gathered = Peers.randomBytes(64, SEED + 22);
        byte[] plain = Peers.randomBytes(96, SEED + 23);
        MemorySegment gatheredSegment = segmentOf(gathered);
        MemorySegment plainSegment = segmentOf(plain);
        GatherList message = GatherList.allocate(arena, 2).add(gatheredSegment, 0, 32).add(gatheredSegment, 32, 32);
        Recorder r = new Recorder();
        int id = h.register(r);
        // Operation objects may be recycled between the two: the plain send must not reuse the gathered pieces.
        for (int round = 0; round < 3; round++) {
            h.run(() -> loop.sendMessage(id, 1, c.socket(), message, MsgFlags.WAITALL));
            Peers.assertSameBytes(gathered, Peers.readExactly(c.peer(), gathered.length), "gathered send " + round);
            assertEquals(gathered.length, r.next().result());
            h.run(() -> loop.send(id, 2, c.socket(), plainSegment, 0, plain.length, MsgFlags.WAITALL));
            Peers.assertSameBytes(plain, Peers.readExactly(c.peer(), plain.length), "plain send " + round);
            Completion done = r.next();
            assertEquals(plain.length, done.result(), done.toString());
        }
    }

    @Test
    void sendMessageZeroCopyGivesTheCountWithMoreThenTheNotification() throws Exception {
        Connection c = connectedFromLoop();
        byte[] header = Peers.randomBytes(16, SEED + 22);
        byte[] payload = Peers.randomBytes(64 * 1024, SEED + 23);
        GatherList message = GatherList.allocate(arena, 2)
                .add(segmentOf(header), 0, header.length)
                .add(segmentOf(payload), 0, payload.length);
        Recorder r = new Recorder();
        int id = h.register(r);
        h.run(() -> loop.sendMessageZeroCopy(id, 2, c.socket(), message, MsgFlags.WAITALL));
        byte[] got = Peers.readExactly(c.peer(), header.length + payload.length);
        Peers.assertSameBytes(header, Arrays.copyOf(got, header.length), "header");
        Peers.assertSameBytes(payload, Arrays.copyOfRange(got, header.length, got.length), "payload");
        Completion result = r.next();
        assertEquals(Op.SENDMSG_ZC, result.op(), result.toString());
        assertEquals(header.length + payload.length, result.result(), result.toString());
        assertTrue(result.more(), "a notification follows: " + result);
        Completion notification = r.next();
        assertTrue(notification.notification() && !notification.more(), notification.toString());
        assertEquals(CqeFlags.ZC_COPIED, notification.result(), "loopback copies: " + notification);
    }

    @Test
    void recvSelectTakesABufferOnlyWhenDataComesAndAnEmptyRingKeepsTheData() throws Exception {
        Connection c = accepted();
        BufferRing ring = h.bufferRing(21, 2, LoopHarness.TINY);
        Recorder r = new Recorder();
        int id = h.register(r);
        OutputStream out = c.peer().getOutputStream();
        for (int round = 0; round < 2; round++) {
            int tag = round;
            h.run(() -> loop.recvSelect(id, tag, c.socket(), ring));
            if (round == 0) {
                IllegalStateException armed = assertThrows(IllegalStateException.class, () -> h.run(ring::close),
                        "a ring with a buffer-select receive armed on it");
                assertTrue(armed.getMessage().contains("armed"), armed.getMessage());
            }
            byte[] data = Peers.randomBytes(100, SEED + 30 + round);
            out.write(data);
            Completion got = r.next();
            assertEquals(Op.RECV_SELECT, got.op(), got.toString());
            assertEquals(100, got.result(), got.toString());
            assertTrue(CqeFlags.hasBuffer(got.flags()), "BUFFER flag: " + got);
            assertFalse(got.more(), "single shot: " + got);
            Peers.assertSameBytes(data, bufferBytes(ring, CqeFlags.bufferId(got.flags()), 100), "round " + round);
        }
        assertEquals(0, (int) h.call(ring::available), "both buffers are the application's");
        byte[] kept = Peers.randomBytes(50, SEED + 40);
        out.write(kept);
        h.run(() -> loop.recvSelect(id, 9, c.socket(), ring));
        Completion empty = r.next();
        assertEquals(-Errno.ENOBUFS, empty.result(), "an empty ring: " + empty);
        assertFalse(CqeFlags.hasBuffer(empty.flags()), empty.toString());
        h.run(() -> ring.recycle(0));
        h.run(() -> loop.recvSelect(id, 10, c.socket(), ring));
        Completion later = r.next();
        assertEquals(50, later.result(), "the data waited in the socket: " + later);
        Peers.assertSameBytes(kept, bufferBytes(ring, CqeFlags.bufferId(later.flags()), 50), "kept data");
    }

    @Test
    void linkedOperationsRunInOrderAndAFailureCancelsTheRestOfTheChain() throws Exception {
        Connection c = accepted();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment in = arena.allocate(64);
        // A receive that asks for 8 bytes with WAITALL but gets 3 and EOF is short: the chain breaks.
        h.run(() -> {
            loop.recv(id, 1, c.socket(), in, 0, 8, MsgFlags.WAITALL);
            loop.linkNext();
            loop.nop(id, 2);
            loop.linkNext();
            loop.nop(id, 3);
            loop.nop(id, 4); // not in the chain
        });
        Completion unlinked = r.next();
        assertEquals(4, unlinked.tag(), "the operation outside the chain runs at once: " + unlinked);
        r.assertQuietFor(50); // the chained nops wait for the receive
        c.peer().getOutputStream().write(new byte[] {1, 2, 3});
        c.peer().shutdownOutput();
        List<Completion> rest = r.next(3);
        assertEquals(1, rest.get(0).tag(), "the receive first: " + rest);
        assertEquals(3, rest.get(0).result(), "3 bytes, then EOF: " + rest);
        assertEquals(-Errno.ECANCELED, rest.get(1).result(), "chained after a short WAITALL: " + rest);
        assertEquals(-Errno.ECANCELED, rest.get(2).result(), "and the one after it: " + rest);

        // A chain whose head succeeds runs through; an error (a handle that is no socket) breaks another.
        h.run(() -> {
            loop.nop(id, 5);
            loop.linkNext();
            loop.nop(id, 6);
        });
        assertEquals(List.of(5, 6), r.next(2).stream().map(x -> x.tag() * (x.result() == 0 ? 1 : -1)).toList());
        h.run(() -> {
            loop.send(id, 7, 4000, in, 0, 8, MsgFlags.NONE);
            loop.linkNext();
            loop.nop(id, 8);
        });
        List<Completion> failed = r.next(2);
        assertEquals(-Errno.EBADF, failed.get(0).result(), failed.toString());
        assertEquals(-Errno.ECANCELED, failed.get(1).result(), failed.toString());

        Throwable nothing = h.thrownOnLoop(loop::linkNext);
        assertTrue(nothing instanceof IllegalStateException, "linkNext with nothing prepared: " + nothing);
        Throwable afterTimeout = h.thrownOnLoop(() -> {
            loop.recv(id, 11, c.socket(), in, 0, 8, MsgFlags.NONE);
            loop.linkTimeout(id, 12, 10 * MILLIS);
            loop.linkNext();
        });
        assertTrue(afterTimeout instanceof IllegalStateException, "linkNext after a link timeout: " + afterTimeout);
        r.next(2); // the receive (EOF) and its timeout settle
    }

    @Test
    void msgFlagsTheEnginesCannotBothHonourAreRefusedBeforeAnythingIsPrepared() throws Exception {
        Connection c = accepted();
        int id = h.register(new Recorder());
        MemorySegment buffer = arena.allocate(16);
        int dontWait = 0x40;
        assertAllRejected(Map.of(
                "send MSG_DONTWAIT", () -> loop.send(id, 1, c.socket(), buffer, 0, 16, dontWait),
                "recv MSG_MORE", () -> loop.recv(id, 2, c.socket(), buffer, 0, 16, MsgFlags.MORE),
                "sendZeroCopy MSG_DONTWAIT", () -> loop.sendZeroCopy(id, 3, c.socket(), buffer, 0, 16,
                        EventLoop.NO_FIXED_BUFFER, dontWait),
                "sendMessage of an empty list", () -> loop.sendMessage(id, 4, c.socket(),
                        GatherList.allocate(arena, 1), MsgFlags.NONE)));
    }

    @Test
    void supportsNamesTheOperationsThisLoopCanRun() {
        for (int op : new int[] {Op.SEND_ZC, Op.SENDMSG, Op.SENDMSG_ZC, Op.RECV_SELECT, Op.RECV_MULTISHOT, Op.NOP}) {
            assertTrue(loop.supports(op), Op.name(op));
        }
        assertFalse(loop.supports(UserData.WAKEUP_OP), "the engine's own wake-up is no user operation");
        assertFalse(loop.supports(999));
    }
}
