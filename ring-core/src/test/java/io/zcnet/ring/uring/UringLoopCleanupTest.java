package io.zcnet.ring.uring;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.Op;
import io.zcnet.ring.uring.Completions.Completion;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Loop close releases the sockets the user left open; buffer rings catch a double recycle. Bounded waits. */
class UringLoopCleanupTest {
    private static final long WAIT_MS = 5_000;
    private static final InetSocketAddress ANY_LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private UringEventLoop loop;
    private Completions done;
    private int handler;

    @BeforeEach
    void open() throws IOException {
        assumeTrue(Uring.availability().usable(), Uring.availability().reason());
        loop = UringEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING));
        done = new Completions();
        handler = loop.registerHandler(done);
    }

    @AfterEach
    void close() {
        if (loop != null) {
            loop.close();
        }
    }

    /** Listens on loopback, connects a blocking JDK socket and accepts it on the loop: the accepted fd. */
    private int acceptPeer(int listener, Socket peer) throws IOException {
        peer.connect(loop.localAddress(listener), (int) WAIT_MS);
        loop.accept(handler, 0, listener, false);
        Completions.pollUntil(loop, () -> done.last(Op.ACCEPT) != null, WAIT_MS);
        int fd = done.last(Op.ACCEPT).result();
        assertTrue(fd >= 0, "accepted: " + done.last(Op.ACCEPT));
        return fd;
    }

    @Test
    void closingTheLoopClosesSocketsTheUserLeftOpen() throws IOException {
        int listener = loop.listen(ANY_LOOPBACK, 4);
        loop.socket(ANY_LOOPBACK); // never connected, never closed: must not leak either
        try (Socket peer = new Socket()) {
            acceptPeer(listener, peer);
            assertTrue(loop.toString().contains("openSockets=3"), loop.toString());
            peer.setSoTimeout((int) WAIT_MS);
            loop.close();
            InputStream in = peer.getInputStream();
            assertEquals(-1, in.read(), "the peer sees EOF once the loop closed the accepted socket");
        }
        loop = null;
    }

    @Test
    void socketsClosedThroughTheLoopAreNotClosedAgain() throws IOException {
        int listener = loop.listen(ANY_LOOPBACK, 4);
        try (Socket peer = new Socket()) {
            int accepted = acceptPeer(listener, peer);
            loop.close(handler, 1, accepted);
            Completions.pollUntil(loop, () -> done.last(Op.CLOSE) != null, WAIT_MS);
            assertEquals(0, done.last(Op.CLOSE).result());
            assertTrue(loop.toString().contains("openSockets=1"), loop.toString());
        }
    }

    @Test
    void recyclingABufferTwiceIsRejectedAndAvailableNeedsNoKernelCall() throws IOException {
        int listener = loop.listen(ANY_LOOPBACK, 4);
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(1024, 4)));
                Socket peer = new Socket()) {
            int accepted = acceptPeer(listener, peer);
            BufferRing ring = loop.createBufferRing(5, pool, 2, 1024);
            assertEquals(2, ring.available());
            IllegalStateException early = assertThrows(IllegalStateException.class, () -> ring.recycle(0));
            assertTrue(early.getMessage().contains("recycled twice"), early.getMessage());
            loop.recvMultishot(handler, 9, accepted, ring);
            peer.getOutputStream().write(new byte[] {1, 2, 3});
            Completions.pollUntil(loop, () -> done.last(Op.RECV_MULTISHOT) != null, WAIT_MS);
            Completion received = done.last(Op.RECV_MULTISHOT);
            assertEquals(3, received.result(), received.toString());
            assertTrue(CqeFlags.hasBuffer(received.flags()));
            int bid = CqeFlags.bufferId(received.flags());
            assertEquals(1, ring.available(), "one buffer is with the application");
            ring.recycle(bid);
            assertEquals(2, ring.available());
            IllegalStateException twice = assertThrows(IllegalStateException.class, () -> ring.recycle(bid));
            assertTrue(twice.getMessage().contains("recycled twice"), twice.getMessage());
            assertEquals(2, ring.available(), "a rejected recycle changes nothing");
            IllegalArgumentException otherRing = assertThrows(IllegalArgumentException.class,
                    () -> loop.recvMultishot(handler, 9, accepted, loop.createBufferRing(6, pool, 2, 1024)));
            assertTrue(otherRing.getMessage().contains("group 5"), otherRing.getMessage());
            loop.close(handler, 1, accepted);
            Completions.pollUntil(loop, () -> loop.pending() == 0, WAIT_MS);
            loop.close(); // its rings give their buffers (and pins) back before the pool closes
        }
    }
}
