package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A connection accepted on one loop thread and served by another ({@link EventLoop#detach}, {@link EventLoop#adopt}),
 * identically on both engines: what a server of many loops needs to spread its connections. Subclassed per engine.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class SocketHandoffContractTest extends LoopPerTest {
    private final Arena arena = Arena.ofShared();
    /** The adopting loop, on a thread of its own. */
    private LoopHarness other;

    @BeforeEach
    void startOther() throws Exception {
        other = LoopHarness.start(engine());
    }

    @AfterEach
    void stopOther() throws Exception {
        try {
            other.close();
        } finally {
            arena.close();
        }
    }

    /** A connection from a plain socket, accepted on {@link #loop}: {@code [accepted socket, handler]}. */
    private int[] acceptFrom(Socket[] client) throws Exception {
        Recorder r = new Recorder();
        int id = h.register(r);
        int listener = h.call(() -> h.track(loop.listen(Peers.loopback(0), 4)));
        int port = h.call(() -> loop.localAddress(listener).getPort());
        h.run(() -> loop.accept(id, 1, listener, false));
        client[0] = Peers.connect(Peers.loopback(port));
        Recorder.Completion accepted = r.next();
        assertTrue(accepted.result() >= 0, "accept: " + accepted);
        return new int[] {accepted.result(), id};
    }

    @Test
    void aSocketDetachedFromOneLoopAndAdoptedByAnotherCarriesDataBothWays() throws Exception {
        Socket[] client = new Socket[1];
        int[] accepted = acceptFrom(client);
        try (Socket peer = client[0]) {
            // Sent before the move: the kernel keeps it for whoever reads the socket next.
            peer.getOutputStream().write("before".getBytes(StandardCharsets.US_ASCII));
            DetachedSocket moved = h.call(() -> loop.detach(accepted[0], accepted[1]));
            assertEquals(loop.engine(), moved.engine());
            Throwable gone = h.thrownOnLoop(() -> loop.setResetOnClose(accepted[0]));
            assertInstanceOf(IOException.class, gone, "the detaching loop no longer knows the handle");

            EventLoop adopter = other.loop();
            Recorder r = new Recorder();
            int id = other.register(r);
            int socket = other.call(() -> other.track(adopter.adopt(moved)));
            assertTrue(other.call(() -> adopter.remoteAddress(socket)) != null, "adopted socket is connected");
            MemorySegment buffer = arena.allocate(64);
            other.run(() -> adopter.recv(id, 1, socket, buffer, 0, 6, MsgFlags.WAITALL));
            Recorder.Completion read = r.next();
            assertEquals(6, read.result(), "recv on the adopting loop: " + read);
            assertEquals(other.thread().thread(), read.thread(), "completed on the adopting loop's thread");
            assertEquals("before", buffer.getString(0, StandardCharsets.US_ASCII).substring(0, 6));

            peer.getOutputStream().write("in".getBytes(StandardCharsets.US_ASCII));
            other.run(() -> adopter.recv(id, 2, socket, buffer, 0, 2, MsgFlags.WAITALL));
            assertEquals(2, r.next().result(), "a receive after the move");
            MemorySegment reply = arena.allocate(5);
            reply.setString(0, "back", StandardCharsets.US_ASCII); // four letters and the NUL
            other.run(() -> adopter.send(id, 3, socket, reply, 0, 4, MsgFlags.NONE));
            assertEquals(4, r.next().result(), "send on the adopting loop");
            assertEquals("back", new String(Peers.readExactly(peer, 4), StandardCharsets.US_ASCII));
        }
    }

    @Test
    void detachIsRefusedWhileAReceiveIsInFlightAndTheSocketStaysUsable() throws Exception {
        int[] pair = h.connectedPair();
        Recorder r = new Recorder();
        int id = h.register(r);
        MemorySegment buffer = arena.allocate(16);
        h.run(() -> loop.recv(id, 1, pair[1], buffer, 0, 1, MsgFlags.NONE));
        Throwable refused = h.thrownOnLoop(() -> loop.detach(pair[1], id));
        assertInstanceOf(IllegalStateException.class, refused, "detach with a recv in flight");
        assertTrue(refused.getMessage().contains("in flight"), refused.getMessage());

        MemorySegment one = arena.allocate(1);
        one.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte) 7);
        int sender = h.register(new Recorder());
        h.run(() -> loop.send(sender, 2, pair[0], one, 0, 1, MsgFlags.NONE));
        assertEquals(1, r.next().result(), "the receive still completes on the loop that kept the socket");
        assertEquals(7, buffer.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void aListeningSocketCannotBeDetachedAndASocketIsAdoptedOnce() throws Exception {
        int id = h.register(new Recorder());
        int listener = h.call(() -> h.track(loop.listen(Peers.loopback(0), 4)));
        assertInstanceOf(IOException.class, h.thrownOnLoop(() -> loop.detach(listener, id)), "a listener");
        assertInstanceOf(IOException.class, h.thrownOnLoop(() -> loop.detach(9_999, id)), "a handle never opened");

        Socket[] client = new Socket[1];
        int[] accepted = acceptFrom(client);
        try (Socket peer = client[0]) {
            DetachedSocket moved = h.call(() -> loop.detach(accepted[0], accepted[1]));
            int socket = other.call(() -> other.track(other.loop().adopt(moved)));
            assertInstanceOf(IllegalStateException.class, other.thrownOnLoop(() -> other.loop().adopt(moved)),
                    "a second adopt");
            assertInstanceOf(IllegalArgumentException.class, other.thrownOnLoop(() -> other.loop().adopt(null)));
            moved.close(); // adopted: closing the handle leaves the socket alone
            assertNotEquals(null, other.call(() -> other.loop().remoteAddress(socket)), "still open on its loop");
            peer.setSoTimeout(200);
            assertThrowsTimeout(peer);
        }
    }

    @Test
    void closingTheAdoptingLoopClosesTheAdoptedSocket() throws Exception {
        Socket[] client = new Socket[1];
        int[] accepted = acceptFrom(client);
        try (Socket peer = client[0]) {
            DetachedSocket moved = h.call(() -> loop.detach(accepted[0], accepted[1]));
            other.run(() -> other.loop().adopt(moved)); // not tracked: the loop's close is what must close it
            other.close();
            peer.setSoTimeout(Peers.IO_TIMEOUT_MILLIS);
            Peers.assertEof(peer);
        }
    }

    @Test
    void aDetachedSocketNobodyAdoptsIsClosedByItsClose() throws Exception {
        Socket[] client = new Socket[1];
        int[] accepted = acceptFrom(client);
        try (Socket peer = client[0]) {
            DetachedSocket moved = h.call(() -> loop.detach(accepted[0], accepted[1]));
            moved.close();
            moved.close();
            peer.setSoTimeout(Peers.IO_TIMEOUT_MILLIS);
            Peers.assertEof(peer);
            assertInstanceOf(IllegalStateException.class, other.thrownOnLoop(() -> other.loop().adopt(moved)),
                    "a closed one cannot be adopted");
        }
    }

    /** The peer hears nothing: the socket is open and silent. */
    private static void assertThrowsTimeout(Socket peer) throws IOException {
        try {
            int b = peer.getInputStream().read();
            throw new AssertionError("expected silence, read " + b);
        } catch (java.net.SocketTimeoutException expected) {
            // open, nothing sent
        }
    }
}
