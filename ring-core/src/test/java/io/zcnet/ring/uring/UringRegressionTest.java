package io.zcnet.ring.uring;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.Op;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * io_uring-only regressions found by review: a multishot receive whose last completion carries data
 * (the kernel ends a multishot that way when the CQ fills), and the loop's internal handler id. The loop
 * is driven inline on the test thread; every wait is bounded.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class UringRegressionTest {
    private static final long WAIT_MS = 5_000;
    private static final InetSocketAddress ANY_LOOPBACK = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private UringEventLoop loop;

    @BeforeEach
    void open() throws IOException {
        assumeTrue(Uring.availability().usable(), Uring.availability().reason());
        // 8 CQEs: a multishot receive over lots of queued data fills the CQ and is ended by the kernel.
        loop = UringEventLoop.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.Choice.URING)
                .withEntries(8, 8));
    }

    @AfterEach
    void close() {
        if (loop != null) {
            loop.close();
        }
    }

    /** Copies each buffer's data, recycles it, and re-arms whenever a completion lacks MORE before EOF. */
    private static final class Streamer implements CompletionHandler {
        final ByteArrayOutputStream data = new ByteArrayOutputStream();
        UringEventLoop loop;
        BufferRing ring;
        int handler;
        int socket;
        int rearms;
        int finalsWithData;
        boolean eof;

        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            if (op != Op.RECV_MULTISHOT) {
                return;
            }
            if (CqeFlags.hasBuffer(flags)) {
                int bid = CqeFlags.bufferId(flags);
                data.writeBytes(ring.buffer(bid).asSlice(0, result).toArray(ValueLayout.JAVA_BYTE));
                ring.recycle(bid);
            } else if (result < 0) {
                assertEquals(-Errno.ENOBUFS, result, "only a dry ring may end the stream early");
            }
            if (!CqeFlags.hasMore(flags)) {
                if (result == 0) {
                    eof = true;
                } else {
                    if (result > 0) {
                        finalsWithData++;
                    }
                    rearms++;
                    loop.recvMultishot(handler, tag, socket, ring);
                }
            }
        }
    }

    @Test
    void multishotEndedByAFullCqWithDataLosesNothing() throws Exception {
        byte[] payload = new byte[256 * 1024];
        new SplittableRandom(7).nextBytes(payload);
        int listener = loop.listen(ANY_LOOPBACK, 4);
        try (BufferPool pool = BufferPool.create(PoolConfig.of(new SizeClass(64, 256)));
                Socket peer = new Socket()) {
            Completions accepts = new Completions();
            int acceptHandler = loop.registerHandler(accepts);
            peer.connect(loop.localAddress(listener), (int) WAIT_MS);
            loop.accept(acceptHandler, 0, listener, false);
            Completions.pollUntil(loop, () -> accepts.last(Op.ACCEPT) != null, WAIT_MS);
            int socket = accepts.last(Op.ACCEPT).result();
            assertTrue(socket >= 0, accepts.all.toString());

            Streamer streamer = new Streamer();
            streamer.loop = loop;
            streamer.ring = loop.createBufferRing(1, pool, 128, 64);
            streamer.handler = loop.registerHandler(streamer);
            streamer.socket = socket;
            // Queued in the socket before the receive is armed: one burst of far more CQEs than the CQ holds.
            Thread writer = Thread.ofPlatform().daemon(true).name("peer-writer").start(() -> {
                try {
                    peer.getOutputStream().write(payload);
                    peer.shutdownOutput();
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            Thread.sleep(50);
            loop.recvMultishot(streamer.handler, 3, socket, streamer.ring);
            Completions.pollUntil(loop, () -> streamer.eof, 20_000);
            writer.join(WAIT_MS);

            byte[] received = streamer.data.toByteArray();
            assertEquals(payload.length, received.length, "bytes received (" + streamer.rearms + " re-arms)");
            assertEquals(-1, Arrays.mismatch(payload, received), "first difference");
            assertTrue(loop.counters().cqOverflowEvents() > 0 || streamer.finalsWithData > 0,
                    "the CQ never filled, so this test did not exercise a data-carrying final completion: "
                            + loop.counters());
            assertEquals(0, loop.pending(), loop.toString());
            assertEquals(128, streamer.ring.available(), "every buffer is back with the kernel");
            streamer.ring.close();
        }
    }

    @Test
    void theLoopsOwnHandlerIdCannotBeUnregistered() {
        int user = loop.registerHandler((op, tag, result, flags) -> { });
        // The internal handler is registered first, in the constructor: id 0.
        assertNotEquals(0, user, "user handlers get other ids");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> loop.unregisterHandler(0));
        assertTrue(e.getMessage().contains("0"), e.getMessage());
        loop.unregisterHandler(user);
        // The wake-up machinery still works: its completions are not dropped as an unknown handler's.
        Completions done = new Completions();
        int id = loop.registerHandler(done);
        loop.nop(id, 1);
        Completions.pollUntil(loop, () -> done.last(Op.NOP) != null, WAIT_MS);
        assertEquals(0, loop.counters().droppedCompletions(), loop.counters().toString());
        assertEquals(0, done.last(Op.NOP).result(), done.all.toString());
    }
}
