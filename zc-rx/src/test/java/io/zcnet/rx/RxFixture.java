package io.zcnet.rx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.framing.Completion;
import io.zcnet.framing.CompletionQueue;
import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.ReadRequest;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoopThread;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One event loop with a provided buffer ring, and connections whose receive side is a {@link FrameReceiver}
 * feeding its own assembler; the peer of each is a blocking {@code java.net} socket the test writes a
 * framed stream to. Every wait is bounded.
 */
final class RxFixture implements AutoCloseable {
    static final long WAIT_SECONDS = 20;

    final EventLoopThread thread;
    final EventLoop loop;
    final BufferPool pool;
    final BufferRing ring;
    final MemoryRegistry registry = new MemoryRegistry();
    /** The loop's carry buffers, drains and deferred stores, shared by every connection as a server's are. */
    final ReceiveBuffers buffers = new ReceiveBuffers(4);
    final Arena arena = Arena.ofShared();
    private final List<Conn> connections = new ArrayList<>();

    RxFixture(EventLoopConfig.Choice engine, int ringBuffers, int bufferSize) throws Exception {
        thread = EventLoopThread.start("zc-rx-" + engine.name().toLowerCase(), EventLoopConfig.defaults().withEngine(engine));
        loop = thread.loop();
        pool = BufferPool.create(PoolConfig.of(new SizeClass(bufferSize, ringBuffers)));
        ring = thread.call(() -> loop.createBufferRing(7, pool, ringBuffers, bufferSize));
    }

    /** What one connection's receive side reported, handed to the test thread. */
    static final class Conn {
        final FramingConfig framing;
        final MessageAssembler assembler;
        final CompletionQueue completionQueue;
        /** The opposite direction's flow control, which ACKNOWLEDGE frames update. */
        final FlowControl sendFlow;
        final DeferredFrames deferred;
        final LinkedBlockingQueue<long[]> completions;
        final LinkedBlockingQueue<ReadRequest> readRequests;
        final CompletableFuture<String> ended = new CompletableFuture<>();
        volatile int frameError;
        FrameReceiver receiver;
        Socket peer;
        int socket;
        /** For {@link #openLoopPair}: the loop's own socket at the other end. */
        int senderSocket = -1;

        Conn(FramingConfig framing, MemoryRegistry registry, ReceiveBuffers buffers, int receives) {
            this.framing = framing;
            this.completionQueue = new CompletionQueue(receives * 2);
            this.sendFlow = new FlowControl(framing);
            this.assembler = new MessageAssembler(framing, registry, receives, 2, completionQueue, sendFlow);
            this.deferred = new DeferredFrames(assembler, 16, framing.segmentSize(), buffers);
            this.completions = new LinkedBlockingQueue<>();
            this.readRequests = new LinkedBlockingQueue<>();
        }

        /** Another connection of {@code first}'s queue pair direction (a subflow): its assembler, store and queues. */
        Conn(Conn first) {
            this.framing = first.framing;
            this.completionQueue = first.completionQueue;
            this.sendFlow = first.sendFlow;
            this.assembler = first.assembler;
            this.deferred = first.deferred;
            this.completions = first.completions;
            this.readRequests = first.readRequests;
        }

        /** Waits for {@code count} completions: each {wrId, status, opcode, byteCount, immediate}. */
        List<long[]> await(int count) throws InterruptedException {
            List<long[]> out = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
            while (out.size() < count) {
                long[] c = completions.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (c == null) {
                    fail("only " + out.size() + " of " + count + " completions arrived; ended: "
                            + ended.getNow("not yet") + "; " + receiver);
                }
                out.add(c);
            }
            return out;
        }

        /** Waits for the receiver to end and returns its reason ("closed" for a clean end). */
        String awaitEnd() throws Exception {
            return ended.get(WAIT_SECONDS, TimeUnit.SECONDS);
        }
    }

    /** Connects a loop socket to a fresh {@code java.net} peer and starts a receiver on it. */
    Conn open(FramingConfig framing, ReceiverConfig config, int receives) throws Exception {
        return open(new Conn(framing, registry, buffers, receives), config);
    }

    /** Connects one more loop socket that feeds {@code first}'s assembler, as a queue pair's next subflow does. */
    Conn openSharing(Conn first, ReceiverConfig config) throws Exception {
        return open(new Conn(first), config);
    }

    private Conn open(Conn c, ReceiverConfig config) throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 4, InetAddress.getLoopbackAddress())) {
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
            CompletableFuture<Integer> connected = new CompletableFuture<>();
            c.socket = thread.call(() -> {
                int s = loop.socket(address);
                loop.connect(oneShot(connected), 0, s, address);
                return s;
            });
            c.peer = listener.accept();
            assertEquals(0, (int) connected.get(WAIT_SECONDS, TimeUnit.SECONDS), "connect");
        }
        c.receiver = thread.call(() -> new FrameReceiver(loop, c.socket, ring, c.assembler, c.deferred, c.framing, config,
                listener(c), buffers));
        connections.add(c);
        return c;
    }

    /**
     * Connects two sockets of the loop itself (the sender's end with tiny socket buffers, so sends come back
     * short) and starts a receiver on the accepting one.
     */
    Conn openLoopPair(FramingConfig framing, ReceiverConfig config, int receives) throws Exception {
        Conn c = new Conn(framing, registry, buffers, receives);
        CompletableFuture<Integer> accepted = new CompletableFuture<>();
        CompletableFuture<Integer> connected = new CompletableFuture<>();
        c.senderSocket = thread.call(() -> {
            int listen = loop.listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4);
            loop.accept(oneShot(accepted), 0, listen, false);
            InetSocketAddress address = loop.localAddress(listen);
            int s = loop.socket(address);
            loop.setBufferSizes(s, 4096, 4096);
            loop.connect(oneShot(connected), 0, s, address);
            return s;
        });
        c.socket = accepted.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertEquals(0, (int) connected.get(WAIT_SECONDS, TimeUnit.SECONDS), "connect");
        c.receiver = thread.call(() -> new FrameReceiver(loop, c.socket, ring, c.assembler, c.deferred, framing, config,
                listener(c), buffers));
        connections.add(c);
        return c;
    }

    private int oneShot(CompletableFuture<Integer> result) {
        int[] id = new int[1];
        CompletionHandler once = (op, tag, value, flags) -> {
            loop.unregisterHandler(id[0]);
            result.complete(value);
        };
        id[0] = loop.registerHandler(once);
        return id[0];
    }

    private static ReceiveListener listener(Conn c) {
        Completion completion = new Completion();
        ReadRequest[] request = {new ReadRequest()};
        return new ReceiveListener() {
            @Override
            public void onReceived() {
                while (c.completionQueue.poll(completion)) {
                    c.completions.add(new long[] {completion.workRequestId(), completion.status(), completion.opcode(),
                        completion.byteCount(), completion.immediate()});
                }
                while (c.assembler.pollReadRequest(request[0])) {
                    c.readRequests.add(request[0]);
                    request[0] = new ReadRequest();
                }
                c.assembler.resumeCompletions();
            }

            @Override
            public void onClosed() {
                c.ended.complete("closed");
            }

            @Override
            public void onFailed(int frameError, int errno, String reason) {
                c.frameError = frameError;
                c.ended.complete(reason);
            }
        };
    }

    /** Native memory registered with every right, for receives and WRITE targets. */
    MemoryRegion region(long bytes) {
        MemorySegment memory = arena.allocate(bytes, 64);
        return registry.register(memory, Access.ALL);
    }

    /** {@code length} random bytes (at least one) in memory that lives as long as the fixture. */
    MemorySegment randomBytes(long length, SplittableRandom random) {
        MemorySegment s = arena.allocate(Math.max(1, length), 64);
        for (long i = 0; i + 8 <= length; i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
        for (long i = length & ~7L; i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
        return s;
    }

    static void assertSameBytes(MemorySegment expected, long expectedOffset, MemorySegment actual, long actualOffset,
            long length, String what) {
        long mismatch = MemorySegment.mismatch(expected, expectedOffset, expectedOffset + length, actual, actualOffset,
                actualOffset + length);
        assertEquals(-1, mismatch, what + ": first differing byte at " + mismatch + " of " + length);
    }

    /** Waits until {@code condition}, evaluated on the loop thread, holds; bounded by {@link #WAIT_SECONDS}. */
    void waitFor(BooleanSupplier condition, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!onLoop(condition::getAsBoolean)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(5);
        }
    }

    /** Runs {@code action} on the loop thread and waits for it. */
    <T> T onLoop(java.util.concurrent.Callable<T> action) throws Exception {
        return thread.call(action);
    }

    @Override
    public void close() throws Exception {
        try {
            for (Conn c : connections) {
                if (c.peer != null) {
                    c.peer.close();
                }
                thread.call(() -> {
                    c.receiver.close();
                    return null;
                });
            }
            // The pool's buffers are the loop thread's (confined arenas): closed there, and each one still lent (a
            // receive the closes cancelled) freed there when it comes back, as the loop closes.
            thread.call(() -> {
                connections.stream().map(c -> c.deferred).distinct().forEach(DeferredFrames::close);
                buffers.close();
                return null;
            });
            thread.close();
            assertEquals(0, buffers.lent(), "every receive buffer back once its connections closed: " + buffers);
        } finally {
            pool.close();
            arena.close();
        }
    }
}
