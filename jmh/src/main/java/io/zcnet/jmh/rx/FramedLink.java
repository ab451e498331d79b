package io.zcnet.jmh.rx;

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
import io.zcnet.framing.Msn;
import io.zcnet.framing.Segmenter;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoopThread;
import io.zcnet.rx.DeferredFrames;
import io.zcnet.rx.FrameReceiver;
import io.zcnet.rx.ReceiveListener;
import io.zcnet.rx.ReceiverConfig;
import io.zcnet.tx.FrameSender;
import io.zcnet.tx.SendListener;
import io.zcnet.tx.SenderConfig;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One framed connection across two event loops of this process, as two processes would have it: a
 * sender loop with zc-tx's {@link FrameSender} and a receiver loop with zc-rx's {@link FrameReceiver}
 * feeding a {@link MessageAssembler}. The sender streams one kind of message without pause: SENDs of
 * {@code size} bytes into receives the receiver keeps posted, or RDMA WRITEs of {@code size} bytes into a
 * registered region. A window bounds the messages in flight: the receiver counts completed messages and
 * wakes the sender every quarter window, the credit a queue pair's acknowledgements will carry.
 *
 * <p>Nothing on either side allocates per message: frames are written by the segmenter into the sender's
 * slots, receives are posted again from the completion handler, wake-ups reuse one task.
 */
final class FramedLink implements AutoCloseable {
    /** What the sender streams. */
    enum Kind { SEND, WRITE }

    private static final long WAIT_SECONDS = 10;

    private final Kind kind;
    private final int size;
    private final int window;
    private final FramingConfig framing;
    private final EventLoopThread senderThread;
    private final EventLoopThread receiverThread;
    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final BufferPool pool;

    /** Messages completed at the receiver; read by the sender loop as its credit. */
    private final DeliveryCount delivered;

    private Sender sender;
    private Receiver receiver;

    FramedLink(EventLoopConfig.Choice engine, Kind kind, int size, int window, boolean icrc, DeliveryCount delivered)
            throws Exception {
        if (size < 0 || size > FramingConfig.MAX_MESSAGE_SIZE || window < 4) {
            throw new IllegalArgumentException("size " + size + " or window " + window + " out of range");
        }
        this.kind = kind;
        this.delivered = delivered;
        this.size = size;
        this.window = window;
        int segment = 64 * 1024;
        this.framing = new FramingConfig(segment, icrc, Integer.highestOneBit(Math.max(4, window) * 2 - 1) * 2);
        EventLoopConfig config = EventLoopConfig.defaults().withEngine(engine);
        this.senderThread = EventLoopThread.start("zcnet-sender", config);
        this.receiverThread = EventLoopThread.start("zcnet-receiver", config);
        this.pool = BufferPool.create(PoolConfig.of(new SizeClass(16 * 1024, 64)));
        try {
            connect();
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    private void connect() throws Exception {
        EventLoop receiverLoop = receiverThread.loop();
        CompletableFuture<Integer> accepted = new CompletableFuture<>();
        InetSocketAddress address = receiverThread.call(() -> {
            int listen = receiverLoop.listen(new InetSocketAddress("127.0.0.1", 0), 4);
            receiverLoop.accept(oneShot(receiverLoop, accepted), 0, listen, false);
            return receiverLoop.localAddress(listen);
        });
        EventLoop senderLoop = senderThread.loop();
        CompletableFuture<Integer> connected = new CompletableFuture<>();
        int senderSocket = senderThread.call(() -> {
            int s = senderLoop.socket(address);
            senderLoop.setTcpNoDelay(s, true);
            senderLoop.connect(oneShot(senderLoop, connected), 0, s, address);
            return s;
        });
        int receiverSocket = accepted.get(WAIT_SECONDS, TimeUnit.SECONDS);
        int connectResult = connected.get(WAIT_SECONDS, TimeUnit.SECONDS);
        if (receiverSocket < 0 || connectResult != 0) {
            throw new IOException("loopback connection failed: accept " + receiverSocket + ", connect " + connectResult);
        }
        receiver = receiverThread.call(() -> new Receiver(receiverLoop, receiverSocket));
        sender = senderThread.call(() -> new Sender(senderLoop, senderSocket));
        senderThread.execute(sender::pump);
    }

    /** A handler id whose first completion completes {@code result} and unregisters it. */
    private static int oneShot(EventLoop loop, CompletableFuture<Integer> result) {
        int[] id = new int[1];
        CompletionHandler once = (op, tag, value, flags) -> {
            loop.unregisterHandler(id[0]);
            result.complete(value);
        };
        id[0] = loop.registerHandler(once);
        return id[0];
    }

    /** System calls both loops made so far. */
    long syscalls() {
        return senderThread.loop().counters().syscalls() + receiverThread.loop().counters().syscalls();
    }

    /** One line on what each side did: the strategies taken, the zero-copy decisions. */
    String describe() throws Exception {
        String rx = receiverThread.call(() -> receiver.receiver.counters().toString());
        String tx = senderThread.call(() -> sender.sender.counters().toString());
        return "receiver: " + rx + "; sender: " + tx;
    }

    /** The receiver's direct-placement share so far. */
    double directShare() throws Exception {
        return receiverThread.call(() -> receiver.receiver.counters().directShare());
    }

    /** Fails unless both sides are still healthy: a benchmark of a broken link measures nothing. */
    void check() {
        String failure = receiver == null ? "no receiver" : receiver.failure;
        if (failure == null && sender != null) {
            failure = sender.failure;
        }
        if (failure != null) {
            throw new IllegalStateException("link failed: " + failure);
        }
    }

    @Override
    public void close() throws Exception {
        // The receiver first: it wakes the sender, never the other way round.
        try {
            receiverThread.close();
        } finally {
            try {
                senderThread.close();
            } finally {
                pool.close();
                arena.close();
            }
        }
    }

    // ---------------------------------------------------------------- the two sides

    /** The sending side, on the sender loop. */
    private final class Sender implements SendListener {
        final FrameSender sender;
        final Segmenter segmenter = new Segmenter(framing);
        final MemorySegment payload = arena.allocate(Math.max(1, size), 4096);
        final int remoteKey;
        int msn;
        long sent;
        volatile String failure;

        Sender(EventLoop loop, int socket) {
            SenderConfig config = SenderConfig.defaults().withQueue(4096, 256L << 20);
            this.sender = new FrameSender(loop, socket, config, this);
            this.remoteKey = receiver.region.remoteKey();
            payload.fill((byte) 0x5A);
        }

        /** Sends while the window has room: the receiver's completions are the credit. */
        void pump() {
            while (failure == null && sent - delivered.messages() < window) {
                // Every message of a SEND run consumes a receive: message n (sent) takes receive n.
                Segmenter request = kind == Kind.SEND ? segmenter.beginSend(msn, (int) sent, payload, 0, size)
                        : segmenter.beginWrite(msn, payload, 0, size, remoteKey, 0);
                if (!offer(request)) {
                    break;
                }
                msn = Msn.add(msn, request.messageCount());
                sent++;
            }
            sender.flush();
        }

        /** Offers every frame of one message, or none (a message is never half queued). */
        private boolean offer(Segmenter request) {
            long frames = request.frameCount();
            if (sender.held() + frames > 4096) {
                return false;
            }
            for (long i = 0; i < frames; i++) {
                long token = sender.offerFrame(request, i);
                if (token < 0) {
                    throw new IllegalStateException("frame " + i + " of a message refused (" + token
                            + ") after room was checked: " + sender);
                }
            }
            return true;
        }

        @Override
        public void onSent(long token) {
            pump();
        }

        @Override
        public void onWritable() {
            pump();
        }

        @Override
        public void onFailed(int errno) {
            failure = "send failed, errno " + errno;
        }
    }

    /** The receiving side, on the receiver loop. */
    private final class Receiver implements ReceiveListener {
        final MessageAssembler assembler;
        final CompletionQueue completions;
        final Completion completion = new Completion();
        final DeferredFrames deferred;
        final FrameReceiver receiver;
        final BufferRing ring;
        final MemoryRegion region;
        final Runnable wakeSender = () -> sender.pump();
        int lastAcknowledged;
        long lastWake;
        volatile String failure;

        Receiver(EventLoop loop, int socket) throws IOException {
            int receives = Integer.highestOneBit(window * 2 - 1) * 2;
            this.completions = new CompletionQueue(receives * 2);
            this.assembler = new MessageAssembler(framing, registry, receives, completions, new FlowControl(framing));
            this.region = registry.register(arena.allocate(Math.max(1, kind == Kind.SEND ? (long) size * receives : size), 4096),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            if (kind == Kind.SEND) {
                for (int i = 0; i < receives; i++) {
                    assembler.postReceive(i, region.localKey(), (long) i * size, size);
                }
            }
            this.lastAcknowledged = assembler.acknowledgedMsn();
            this.deferred = new DeferredFrames(assembler, 8, framing.segmentSize());
            this.ring = loop.createBufferRing(1, pool, 64, 16 * 1024);
            this.receiver = new FrameReceiver(loop, socket, ring, assembler, deferred, framing, ReceiverConfig.defaults(), this);
        }

        @Override
        public void onReceived() {
            long done;
            if (kind == Kind.SEND) {
                done = 0;
                while (completions.poll(completion)) {
                    done++;
                    long slot = completion.workRequestId();
                    assembler.postReceive(slot, region.localKey(), slot * size, size);
                }
                assembler.resumeCompletions();
            } else {
                // WRITEs complete without a completion: the acknowledged MSN is what they moved.
                int acknowledged = assembler.acknowledgedMsn();
                done = Msn.distance(lastAcknowledged, acknowledged);
                lastAcknowledged = acknowledged;
            }
            if (done > 0) {
                long total = 0;
                for (long i = 0; i < done; i++) {
                    total = delivered.add(size);
                }
                if (total - lastWake >= window / 4) {
                    lastWake = total;
                    senderThread.execute(wakeSender);
                }
            }
        }

        @Override
        public void onClosed() {
            failure = "closed by the sender";
        }

        @Override
        public void onFailed(int frameError, int errno, String reason) {
            failure = reason;
        }
    }
}
