package io.zcnet.ring.nio;

import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.Op;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Loop close releases the sockets the user left open, as on io_uring. Every wait is bounded. */
class NioLoopCleanupTest {
    private static final long WAIT_MS = 5_000;

    @Test
    void closingTheLoopClosesSocketsTheUserLeftOpen() throws IOException {
        NioEventLoop loop = NioEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.NIO));
        int[] accepted = {-1};
        int handler = loop.registerHandler((op, tag, result, flags) -> {
            if (op == Op.ACCEPT) {
                accepted[0] = result;
            }
        });
        int listener = loop.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
        try (Socket peer = new Socket()) {
            peer.connect(loop.localAddress(listener), (int) WAIT_MS);
            loop.accept(handler, 0, listener, false);
            long deadline = System.nanoTime() + WAIT_MS * 1_000_000;
            while (accepted[0] < 0) {
                if (System.nanoTime() > deadline) {
                    fail("no accept within " + WAIT_MS + " ms: " + loop);
                }
                loop.poll(10_000_000);
            }
            assertTrue(loop.toString().contains("socket " + accepted[0]), loop.toString());
            peer.setSoTimeout((int) WAIT_MS);
            loop.close();
            assertEquals(-1, peer.getInputStream().read(), "the peer sees EOF once the loop closed the accepted socket");
            assertTrue(loop.toString().endsWith("closed]") && !loop.toString().contains("socket "), loop.toString());
        }
    }
}
