package io.zcnet.examples;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.ListenerConfig;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QpState;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.SharedCompletionQueue;
import io.zcnet.qp.SharedQueues;
import io.zcnet.qp.SharedReceiveQueue;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A queue-pair server for any number of clients ({@code zcnet qp-server}): every SEND is answered with a SEND of
 * the same bytes, and every queue pair has a registered region a client may WRITE and READ. Each accepted queue
 * pair is served on the context's loop thread from its completion listener, with no thread of its own.
 *
 * <h2>What a client sees</h2>
 * After the handshake the server SENDs one {@link #HELLO_BYTES}-byte hello (little-endian): the magic
 * {@link #MAGIC}, the region's remote key, its length, and the pattern seed its bytes were filled with
 * ({@link MessagePattern} of message {@code seed}), so a READ can be checked. Then it keeps
 * {@link Options#receives} receives of {@link Options#maxMessage} bytes posted; each SEND that lands is sent back
 * from where it landed, and the receive is posted again once that echo completed.
 *
 * <h2>Shared queues</h2>
 * With {@link Options#sharedReceives} above 0 the server runs as a verbs server of many clients does: every queue
 * pair completes into one {@link SharedCompletionQueue}, served from its listener on the loop thread, and takes its
 * receives from one {@link SharedReceiveQueue} of that many buffers (lent {@link Options#receives} at a time to each
 * queue pair, its client's credits), so a queue pair costs its region and no receive buffers of its own.
 *
 * <p>Thread-safe: {@link #close} and the counters from any thread.
 */
final class QpServer implements AutoCloseable {
    /** "ZQS1". */
    static final int MAGIC = 0x5A515331;
    static final int HELLO_BYTES = 24;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    /** Work request ids: the slot in the low bits, what it was in the high ones. */
    private static final long ECHO = 1L << 32;
    private static final long HELLO = 2L << 32;

    /**
     * What each queue pair gets.
     *
     * @param maxMessage  the largest SEND a client may make
     * @param receives    receives kept posted per queue pair: the SENDs a client may have in flight
     * @param regionBytes the region a client may WRITE and READ
     * @param queuePairs  the queue pairs' configuration
     * @param sharedReceives receives of a shared receive queue for every queue pair, with one shared completion
     *                    queue; 0 for queues of each queue pair's own
     */
    record Options(int maxMessage, int receives, int regionBytes, QpConfig queuePairs, int sharedReceives) {
        /** Queues of each queue pair's own. */
        Options(int maxMessage, int receives, int regionBytes, QpConfig queuePairs) {
            this(maxMessage, receives, regionBytes, queuePairs, 0);
        }

        Options {
            if (sharedReceives < 0 || sharedReceives > 1 << 20 || sharedReceives > 0 && Integer.bitCount(sharedReceives) != 1
                    || sharedReceives > 0 && sharedReceives < receives) {
                throw new IllegalArgumentException("--shared-receives must be 0 or a power of two from --receives ("
                        + receives + ") to 2^20, got " + sharedReceives);
            }
            if (maxMessage < 1 || maxMessage > 1 << 20) {
                throw new IllegalArgumentException("--max-size must be 1..1048576 bytes, got " + maxMessage);
            }
            if (receives < 1 || receives > queuePairs.receiveQueueDepth() || receives > queuePairs.sendQueueDepth()) {
                throw new IllegalArgumentException("--receives must be 1.." + Math.min(queuePairs.receiveQueueDepth(),
                        queuePairs.sendQueueDepth()) + ", got " + receives);
            }
            if (regionBytes < 8 || regionBytes > 1 << 30 || regionBytes % 8 != 0) {
                throw new IllegalArgumentException("--region-bytes must be a multiple of 8 in 8..2^30, got " + regionBytes);
            }
        }
    }

    private final QpContext context;
    private final QpListener listener;
    private final Options options;
    /** The shared queues, or null for each queue pair's own. */
    private final SharedService shared;
    /** The queue pairs served, for the shared completion queue's listener to end one that failed. */
    private final ConcurrentHashMap<QueuePair, Served> served = new ConcurrentHashMap<>();
    private final Thread acceptor;
    private volatile boolean closed;
    final AtomicLong accepted = new AtomicLong();
    final AtomicLong ended = new AtomicLong();
    final AtomicLong echoed = new AtomicLong();
    final AtomicLong failed = new AtomicLong();

    private QpServer(QpContext context, QpListener listener, Options options, SharedService shared) {
        this.context = context;
        this.listener = listener;
        this.options = options;
        this.shared = shared;
        this.acceptor = Thread.ofPlatform().name("qp-server-accept").daemon(true).unstarted(this::acceptLoop);
    }

    /**
     * Listens on {@code address} and serves every queue pair that opens there, spread over {@code loops} loop threads,
     * until {@link #close}.
     */
    static QpServer start(EventLoopConfig loop, int loops, InetSocketAddress address, Options options) throws IOException {
        QpContext context = QpContext.open(loop, loops);
        try {
            ListenerConfig settings = ListenerConfig.of(options.queuePairs());
            SharedService shared = null;
            if (options.sharedReceives() > 0) {
                shared = new SharedService(context, options);
                settings = settings.withSharedQueues(shared.queues());
            }
            QpServer server = new QpServer(context, context.listen(address, settings), options, shared);
            if (shared != null) {
                shared.serve(server);
            }
            server.acceptor.start();
            return server;
        } catch (IOException | RuntimeException e) {
            context.close();
            throw e;
        }
    }

    InetSocketAddress address() {
        return listener.address();
    }

    QpContext context() {
        return context;
    }

    long refused() {
        return listener.refused();
    }

    /** {@return queue pairs accepted and not yet ended} */
    long live() {
        return accepted.get() - ended.get();
    }

    private void acceptLoop() {
        while (!closed) {
            QueuePair qp;
            try {
                qp = listener.accept(Duration.ofMillis(200));
            } catch (InterruptedException e) {
                return;
            } catch (IllegalStateException contextGone) {
                return;
            }
            retryLingering();
            if (qp == null) {
                continue;
            }
            accepted.incrementAndGet();
            try {
                new Served(qp).start();
            } catch (RuntimeException e) {
                failed.incrementAndGet();
                ended.incrementAndGet();
                qp.close();
            }
        }
    }

    /** One queue pair: its region, its receive slots, and the listener that echoes. Loop thread once started. */
    private final class Served {
        private final QueuePair qp;
        private final MemorySegment memory;
        private final MemoryRegion region;
        private final long slotsAt;
        private final WorkRequest wr = new WorkRequest();
        private final WorkCompletion wc = new WorkCompletion();
        private boolean over;

        Served(QueuePair qp) {
            this.qp = qp;
            long slotBytes = shared != null ? 0 : (long) options.maxMessage() * options.receives();
            // GC-freed: deregistered when the queue pair ends, so no kernel operation can still touch it by then.
            this.memory = Arena.ofAuto().allocate(options.regionBytes() + HELLO_BYTES + slotBytes, 64);
            this.slotsAt = options.regionBytes() + HELLO_BYTES;
            this.region = context.register(memory, Access.ALL);
        }

        void start() {
            long seed = accepted.get();
            MessagePattern.fill(memory, 0, options.regionBytes(), seed);
            long hello = options.regionBytes();
            memory.set(INT, hello, MAGIC);
            memory.set(INT, hello + 4, region.remoteKey());
            memory.set(LONG, hello + 8, options.regionBytes());
            memory.set(LONG, hello + 16, seed);
            if (shared == null) {
                for (int slot = 0; slot < options.receives(); slot++) {
                    qp.postReceive(slot, region.localKey(), slotAt(slot), options.maxMessage());
                }
            } else {
                served.put(qp, this);
            }
            if (!qp.postSend(wr.send(HELLO, region.localKey(), hello, HELLO_BYTES))) {
                throw new IllegalStateException("no room for the hello on a new queue pair");
            }
            if (shared == null) {
                // From here on only the loop thread posts: what completed before this is polled on the next turn.
                qp.onCompletions(this::onCompletions);
            }
        }

        private long slotAt(int slot) {
            return slotsAt + (long) slot * options.maxMessage();
        }

        private void onCompletions() {
            while (!over && qp.poll(wc)) {
                if (!wc.isSuccess()) {
                    end(wc.status() == WorkCompletion.FLUSH_ERROR && qp.errorStatus() == WorkCompletion.FLUSH_ERROR);
                    return;
                }
                long id = wc.workRequestId();
                int slot = (int) id;
                if (wc.opcode() == WorkCompletion.OP_RECV) {
                    wr.send(ECHO | slot, region.localKey(), slotAt(slot), wc.byteCount());
                    if (!qp.postSend(wr)) {
                        end(false); // more in flight than the receives it was given: not a client of this server
                        return;
                    }
                } else if ((id & ECHO) != 0) {
                    echoed.incrementAndGet();
                    qp.postReceive(slot, region.localKey(), slotAt(slot), options.maxMessage());
                }
            }
            if (!over && qp.state() == QpState.ERROR) {
                end(qp.errorStatus() == WorkCompletion.FLUSH_ERROR);
            }
        }

        /** The queue pair failed or its client left: free it here, on the loop thread, from its own listener. */
        private void end(boolean clientLeft) {
            if (over) {
                return;
            }
            over = true;
            served.remove(qp);
            ended.incrementAndGet();
            if (!clientLeft) {
                failed.incrementAndGet();
            }
            qp.close();
            deregisterOrLater(region);
        }
    }

    /**
     * The shared completion queue and shared receive queue of a server in shared mode, and the listener that serves
     * every queue pair from them on the loop thread: a SEND that lands in buffer {@code b} of the pool is echoed from
     * {@code b} by its queue pair, and {@code b} goes back to the shared receive queue once the echo completed (or
     * the queue pair failed, which flushes what it was lent).
     */
    private static final class SharedService {
        private final SharedCompletionQueue cq;
        private final SharedReceiveQueue srq;
        private final MemoryRegion pool;
        private final int size;
        private final WorkCompletion wc = new WorkCompletion();
        private final WorkRequest wr = new WorkRequest();
        private QpServer server;

        SharedService(QpContext context, Options options) {
            this.size = options.maxMessage();
            this.cq = context.createCompletionQueue(Math.min(1 << 20, 4 * options.sharedReceives()));
            this.srq = context.createSharedReceiveQueue(options.sharedReceives(), 1, options.receives());
            this.pool = context.register(Arena.ofAuto().allocate((long) size * options.sharedReceives(), 64), Access.ALL);
            for (int b = 0; b < options.sharedReceives(); b++) {
                repost(b);
            }
        }

        SharedQueues queues() {
            return new SharedQueues(cq, srq);
        }

        void serve(QpServer server) {
            this.server = server;
            cq.onCompletions(this::onCompletions);
        }

        private void repost(long b) {
            srq.postReceive(b, pool.localKey(), b * size, size);
        }

        private void onCompletions() {
            while (cq.poll(wc)) {
                QueuePair qp = wc.queuePair();
                long id = wc.workRequestId();
                boolean ownsBuffer = wc.opcode() == WorkCompletion.OP_RECV || (id & ECHO) != 0;
                int b = (int) id;
                if (!wc.isSuccess()) {
                    if (ownsBuffer) {
                        repost(b); // the buffer is the server's again: flushed, or its echo failed
                    }
                    Served s = server.served.get(qp);
                    if (s != null) {
                        s.end(wc.status() == WorkCompletion.FLUSH_ERROR && qp.errorStatus() == WorkCompletion.FLUSH_ERROR);
                    }
                } else if (wc.opcode() == WorkCompletion.OP_RECV) {
                    if (!qp.postSend(wr.send(ECHO | b, pool.localKey(), (long) b * size, wc.byteCount()))) {
                        repost(b);
                        Served s = server.served.get(qp);
                        if (s != null) {
                            s.end(false); // more in flight than its credits allow: not a client of this server
                        }
                    }
                } else if ((id & ECHO) != 0) {
                    server.echoed.incrementAndGet();
                    repost(b);
                }
            }
        }
    }

    /** Regions a closed queue pair's receive still held in the kernel: tried again by the accept loop. */
    private final ConcurrentLinkedQueue<MemoryRegion> lingering = new ConcurrentLinkedQueue<>();

    private void deregisterOrLater(MemoryRegion region) {
        try {
            context.deregister(region);
        } catch (IllegalStateException stillLent) {
            lingering.add(region); // pinned by a receive the close cancelled: free once it has ended
        }
    }

    private void retryLingering() {
        for (int n = lingering.size(); n > 0; n--) {
            MemoryRegion region = lingering.poll();
            if (region != null) {
                deregisterOrLater(region);
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        acceptor.interrupt();
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        context.close();
    }
}
