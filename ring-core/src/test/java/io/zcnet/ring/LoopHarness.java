package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One event loop running on its own {@link EventLoopThread}, plus the buffer pool its rings lease from,
 * for one test.
 *
 * <p>The test thread reaches the loop only through {@link #call} and {@link #run}, which run on the loop
 * thread and wait (bounded) for the result, so every operation is submitted by the owner as the
 * contract requires. {@link #close} closes what the test opened on the loop (tracked sockets, echo
 * servers, buffer rings), stops the thread and frees the pool.
 */
final class LoopHarness {
    /** Size classes: tiny buffers for exhaustion tests, 2 KiB for many connections, 64 KiB for bulk. */
    static final int TINY = 256;
    static final int SMALL = 2048;
    static final int LARGE = 64 * 1024;

    @FunctionalInterface
    interface LoopAction {
        void run() throws Exception;
    }

    private final EventLoopThread thread;
    private final EventLoop loop;
    private final BufferPool pool;
    // The three lists below are touched on the loop thread only.
    private final List<Integer> sockets = new ArrayList<>();
    private final List<BufferRing> rings = new ArrayList<>();
    private final List<EchoServer> servers = new ArrayList<>();
    private boolean closed;

    private LoopHarness(EventLoopThread thread, BufferPool pool) {
        this.thread = thread;
        this.loop = thread.loop();
        this.pool = pool;
    }

    static LoopHarness start(EventLoopConfig.Choice engine) throws Exception {
        BufferPool pool = BufferPool.create(PoolConfig.of(
                new SizeClass(TINY, 64), new SizeClass(SMALL, 1024), new SizeClass(LARGE, 128)));
        EventLoopThread thread;
        try {
            thread = EventLoopThread.start("zcnet-loop-" + engine.name().toLowerCase(),
                    EventLoopConfig.defaults().withEngine(engine));
        } catch (Exception | Error e) {
            pool.close();
            throw e;
        }
        LoopHarness h = new LoopHarness(thread, pool);
        // The loop thread claims ownership in its first poll; a round trip guarantees that happened
        // before the test thread touches the loop (else the test thread could become its owner).
        assertTrue(h.call(h.loop::inLoop), "task did not run on the loop's owner thread");
        assertEquals(engine.name(), h.loop.engine().name(), "engine of the opened loop");
        return h;
    }

    EventLoop loop() {
        return loop;
    }

    EventLoopThread thread() {
        return thread;
    }

    BufferPool pool() {
        return pool;
    }

    /** Runs {@code task} on the loop thread and returns its result. */
    <T> T call(Callable<T> task) throws Exception {
        return thread.call(task);
    }

    void run(LoopAction action) throws Exception {
        thread.call(() -> {
            action.run();
            return null;
        });
    }

    /** What {@code action} threw on the loop thread, or null if it returned normally. */
    Throwable thrownOnLoop(LoopAction action) throws Exception {
        return thread.call(() -> {
            try {
                action.run();
                return null;
            } catch (Throwable t) {
                return t;
            }
        });
    }

    /** {@link #call} for conditions polled by {@link #await}: a failure reads as -1. */
    int callQuietly(Callable<Integer> task) {
        try {
            return call(task);
        } catch (Exception e) {
            return -1;
        }
    }

    /**
     * Two loop sockets connected to each other over loopback ({@code [connected, accepted]}), both closed
     * by {@link #close}.
     */
    int[] connectedPair() throws Exception {
        Recorder r = new Recorder();
        int id = register(r);
        int listener = call(() -> track(loop.listen(Peers.loopback(0), 4)));
        int port = call(() -> loop.localAddress(listener).getPort());
        int client = call(() -> track(loop.socket(Peers.loopback(port))));
        run(() -> {
            loop.accept(id, 1, listener, false);
            loop.connect(id, 2, client, Peers.loopback(port));
        });
        int accepted = -1;
        for (Recorder.Completion c : r.next(2)) {
            assertTrue(c.result() >= 0, "pair set-up: " + c);
            if (c.op() == Op.ACCEPT) {
                accepted = c.result();
            }
        }
        int server = accepted;
        run(() -> {
            track(server);
            loop.unregisterHandler(id);
        });
        return new int[] {client, server};
    }

    /** Registers a handler on the loop thread. */
    int register(CompletionHandler handler) throws Exception {
        return call(() -> loop.registerHandler(handler));
    }

    /** Marks a socket opened by the test on the loop, so {@link #close} closes it. Loop thread. */
    int track(int socket) {
        sockets.add(socket);
        return socket;
    }

    /** Forgets a socket the test closes itself. Loop thread. */
    void untrack(int socket) {
        sockets.remove(Integer.valueOf(socket));
    }

    /** A buffer ring created on the loop, closed by {@link #close} after the sockets that used it. */
    BufferRing bufferRing(int groupId, int count, int bufferSize) throws Exception {
        return call(() -> {
            BufferRing ring = loop.createBufferRing(groupId, pool, count, bufferSize);
            rings.add(ring);
            return ring;
        });
    }

    /** An echo server on the loop over a ring of its own. */
    EchoServer echoServer(int groupId, int count, int bufferSize) throws Exception {
        BufferRing ring = bufferRing(groupId, count, bufferSize);
        return call(() -> {
            EchoServer server = EchoServer.start(loop, ring);
            servers.add(server);
            return server;
        });
    }

    /** Waits (bounded) until {@code condition} holds; any thread-safe condition. */
    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Recorder.WAIT_MILLIS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for " + what);
            }
            Thread.sleep(2);
        }
    }

    /**
     * Closes the test's sockets and servers on the loop and waits for their completions, then the rings
     * (no receive uses them any more), then the loop thread, then the pool. A loop already stopped by
     * the test only has its pool freed.
     */
    void close() throws Exception {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (thread.isAlive()) {
                closeOnLoop();
                thread.close();
            }
        } finally {
            pool.close();
        }
    }

    private void closeOnLoop() throws Exception {
        Recorder closes = new Recorder();
        List<CompletableFuture<Void>> serversClosed = call(() -> {
            int id = loop.registerHandler(closes);
            for (int socket : sockets) {
                loop.close(id, socket, socket);
            }
            List<CompletableFuture<Void>> futures = new ArrayList<>();
            for (EchoServer server : servers) {
                futures.add(server.closeAll());
            }
            return futures;
        });
        for (int i = 0; i < sockets.size(); i++) {
            closes.next();
        }
        for (CompletableFuture<Void> f : serversClosed) {
            f.get(Recorder.WAIT_MILLIS, TimeUnit.MILLISECONDS);
        }
        run(() -> {
            for (BufferRing ring : rings) {
                ring.close();
            }
        });
    }

    /** Stops the loop thread now (for tests of shutdown itself); {@link #close} then only frees the pool. */
    void stopLoop() {
        thread.close();
    }
}
