package io.zcnet.examples;

import io.zcnet.ring.MsgFlags;
import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EngineFeatures;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoopThread;
import io.zcnet.ring.LoopCounters;
import io.zcnet.ring.Op;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * A TCP echo server on one event loop: multishot accept, multishot receive into a provided buffer ring,
 * and each received buffer sent back as it is (no copy in user space) before it is recycled.
 *
 * <p>Sends on one connection go out one at a time in arrival order (a send that goes async in the
 * kernel must not be overtaken by the next one), queued through a per-connection linked list threaded
 * through the buffer ids, so the data path allocates nothing.
 *
 * <p>{@link Protocol#SOCKPERF} answers like sockperf's own server instead, so sockperf's client can
 * measure it: each received buffer goes through the connection's {@link SockperfParser}, which flips
 * the flag byte of every message to answer and names the ranges of the buffer to send back in place;
 * messages not to be answered are consumed, and a bad length closes that connection. Replies keep the
 * request order, one send in flight per connection, as in raw mode.
 *
 * <p>Thread-safety: {@link #start}, {@link #address()}, the counters and {@link #close()} may be called
 * from any thread; everything else runs on the server's loop thread.
 */
public final class EchoServer implements AutoCloseable {
    // 64 KiB: a bulk stream is echoed in a quarter of the sends (and enters) 16 KiB buffers need;
    // small messages use a buffer only while their echo is in flight.
    private static final int BUFFER_SIZE = 64 * 1024;
    private static final int RING_BUFFERS = 256;
    private static final int GROUP_ID = 1;
    private static final int NONE = -1;

    private final EventLoopThread thread;
    private final Service service;
    private final InetSocketAddress address;

    /** What the server sends back. */
    public enum Protocol {
        /** Every byte, as received. */
        RAW,
        /** sockperf's TCP framing: only messages that request a reply, as sockperf's server does. */
        SOCKPERF
    }

    private EchoServer(EventLoopThread thread, Service service, InetSocketAddress address) {
        this.thread = thread;
        this.service = service;
        this.address = address;
    }

    /** {@link #start(EventLoopConfig, InetSocketAddress, Protocol)} with {@link Protocol#RAW}. */
    public static EchoServer start(EventLoopConfig config, InetSocketAddress bind) throws IOException {
        return start(config, bind, Protocol.RAW);
    }

    /** Starts a loop thread, listens on {@code bind} (port 0 picks one) and serves until closed. */
    public static EchoServer start(EventLoopConfig config, InetSocketAddress bind, Protocol protocol)
            throws IOException {
        if (config == null || bind == null || protocol == null) {
            throw new IllegalArgumentException("config, bind and protocol are required, got " + config + ", "
                    + bind + ", " + protocol);
        }
        EventLoopThread thread = EventLoopThread.start("zcnet-echo-server", config);
        try {
            Service service = thread.call(() -> new Service(thread.loop(), protocol));
            InetSocketAddress bound = thread.call(() -> service.listen(bind));
            return new EchoServer(thread, service, bound);
        } catch (Exception e) {
            thread.close();
            throw e instanceof IOException io ? io : new IOException("echo server failed to start: " + e, e);
        }
    }

    public InetSocketAddress address() {
        return address;
    }

    /** The server loop's counters (syscalls, completions, buffer shortages); readable from any thread. */
    public LoopCounters counters() {
        return thread.loop().counters();
    }

    public EngineFeatures features() {
        return thread.loop().features();
    }

    /** Connections accepted so far (read on the loop thread, so it may wait behind a busy loop). */
    public long connectionsAccepted() throws Exception {
        return thread.call(() -> service.accepted);
    }

    /** Bytes sent back so far. */
    public long bytesEchoed() throws Exception {
        return thread.call(() -> service.bytesEchoed);
    }

    /** Connections closed because they broke the protocol (sockperf mode: a bad message length). */
    public long protocolErrors() throws Exception {
        return thread.call(() -> service.protocolErrors);
    }

    /** Cancels what is in flight, releases the buffers, and stops the loop thread (bounded). */
    @Override
    public void close() {
        try {
            thread.call(() -> {
                service.shutdown();
                return null;
            });
        } catch (Exception e) {
            // The loop is going away regardless; closing it below cancels whatever is left.
        } finally {
            thread.close();
        }
    }

    /** The loop-side state: touched only on the loop thread. */
    private static final class Service implements CompletionHandler {
        private static final System.Logger LOG = System.getLogger("io.zcnet.examples");

        private final EventLoop loop;
        private final BufferPool pool;
        private final BufferRing ring;
        private final int handler;
        private int listenSocket = NONE;
        private long accepted;
        private long bytesEchoed;
        private long protocolErrors;
        // Sockperf mode only (null in raw mode): one parser per slot, carry segments from the arena.
        private final Arena arena;
        private SockperfParser[] parsers;

        // Per connection, indexed by slot (the recv tag); sockets map to slots.
        private int[] socketOf = new int[64];
        private boolean[] recvArmed = new boolean[64];
        private boolean[] closing = new boolean[64];
        private int[] queueHead = new int[64];
        private int[] queueTail = new int[64];
        private boolean[] sending = new boolean[64];
        private final int[] nextInQueue = new int[RING_BUFFERS];
        private final int[] lengthOf = new int[RING_BUFFERS];
        private final int[] freeSlots = new int[64 * 1024];
        private int freeCount;
        private int slotsUsed;
        // Connections whose receive ended with ENOBUFS, re-armed when buffers come back.
        private final int[] starved = new int[64 * 1024];
        private int starvedCount;

        Service(EventLoop loop, Protocol protocol) throws IOException {
            this.loop = loop;
            this.pool = BufferPool.create(PoolConfig.of(new SizeClass(BUFFER_SIZE, RING_BUFFERS)));
            this.ring = loop.createBufferRing(GROUP_ID, pool, RING_BUFFERS, BUFFER_SIZE);
            this.handler = loop.registerHandler(this);
            this.arena = protocol == Protocol.SOCKPERF ? Arena.ofConfined() : null;
            this.parsers = protocol == Protocol.SOCKPERF ? new SockperfParser[socketOf.length] : null;
        }

        InetSocketAddress listen(InetSocketAddress bind) throws IOException {
            listenSocket = loop.listen(bind, 4096);
            loop.accept(handler, 0, listenSocket, true);
            return loop.localAddress(listenSocket);
        }

        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            switch (op) {
                case Op.ACCEPT -> onAccept(result, flags);
                case Op.RECV_MULTISHOT -> onReceive(tag, result, flags);
                case Op.SEND -> {
                    if (parsers == null) {
                        onSent(tag >>> 16, tag & 0xFFFF, result);
                    } else {
                        onReplySent(tag >>> 16, result);
                    }
                }
                case Op.CLOSE -> {
                    if (tag >= 0) {
                        freeSlot(tag);
                    }
                }
                default -> { }
            }
        }

        private void onAccept(int result, int flags) {
            if (result >= 0) {
                int slot = allocateSlot(result);
                try {
                    loop.setTcpNoDelay(result, true);
                } catch (IOException e) {
                    // Latency only; the connection works without it.
                }
                accepted++;
                armReceive(slot);
            }
            if (!CqeFlags.hasMore(flags) && listenSocket != NONE) {
                loop.accept(handler, 0, listenSocket, true);
            }
        }

        private void onReceive(int slot, int result, int flags) {
            if (result > 0) {
                int bid = CqeFlags.bufferId(flags);
                if (closing[slot]) { // already queued before a send failed: nobody will send it
                    ring.recycle(bid);
                    return;
                }
                lengthOf[bid] = result;
                enqueueSend(slot, bid);
                if (!CqeFlags.hasMore(flags)) {
                    recvArmed[slot] = false;
                    armReceive(slot);
                }
                return;
            }
            recvArmed[slot] = false;
            if (result == -Errno.ENOBUFS) {
                starved[starvedCount++] = slot;
            } else if (result != -Errno.ECANCELED || closing[slot]) {
                closeConnection(slot); // EOF, reset or any other error ends the connection
            }
        }

        private void enqueueSend(int slot, int bid) {
            nextInQueue[bid] = NONE;
            if (queueHead[slot] == NONE) {
                queueHead[slot] = bid;
            } else {
                nextInQueue[queueTail[slot]] = bid;
            }
            queueTail[slot] = bid;
            if (!sending[slot]) {
                if (parsers == null) {
                    sendHead(slot);
                } else {
                    sendNextReply(slot);
                }
            }
        }

        private void sendHead(int slot) {
            int bid = queueHead[slot];
            sending[slot] = true;
            loop.send(handler, (slot << 16) | bid, socketOf[slot], ring.buffer(bid), 0, lengthOf[bid], MsgFlags.WAITALL);
        }

        private void onSent(int slot, int bid, int result) {
            sending[slot] = false;
            queueHead[slot] = nextInQueue[bid];
            ring.recycle(bid);
            if (result > 0) {
                bytesEchoed += result;
            }
            if (result < 0) {
                closeConnection(slot);
            } else if (queueHead[slot] != NONE) {
                sendHead(slot);
            } else if (closing[slot]) {
                closeConnection(slot);
            }
            rearmStarved();
        }

        /**
         * Sockperf mode: parses the queued buffers on, in order, until a reply range is found (sent, one
         * in flight) or the queue is empty; consumed buffers go back to the ring.
         */
        private void sendNextReply(int slot) {
            SockperfParser parser = parsers[slot];
            while (queueHead[slot] != NONE) {
                int bid = queueHead[slot];
                int status = parser.advance(ring.buffer(bid), lengthOf[bid]);
                if (status == SockperfParser.REPLY) {
                    sending[slot] = true;
                    loop.send(handler, (slot << 16) | bid, socketOf[slot], parser.replySegment(),
                            parser.replyOffset(), parser.replyLength(), MsgFlags.WAITALL);
                    return;
                }
                queueHead[slot] = nextInQueue[bid];
                ring.recycle(bid);
                if (status == SockperfParser.BAD_LENGTH) {
                    protocolErrorSlowPath(slot, parser);
                    return;
                }
            }
            if (closing[slot]) {
                closeConnection(slot);
            }
            rearmStarved(); // buffers may have come back without a send completing
        }

        private void protocolErrorSlowPath(int slot, SockperfParser parser) {
            protocolErrors++;
            LOG.log(System.Logger.Level.WARNING, "zcnet echo-server: closing socket " + socketOf[slot]
                    + ": sockperf message " + (parser.messages() + 1) + " has length " + parser.badLength()
                    + ", outside [" + SockperfHeader.SIZE + ", " + SockperfParser.MAX_LENGTH + "]");
            closeConnection(slot);
        }

        private void onReplySent(int slot, int result) {
            sending[slot] = false;
            if (result < 0) {
                closeConnection(slot);
                rearmStarved();
            } else {
                bytesEchoed += result;
                sendNextReply(slot); // re-arms starved receives itself
            }
        }

        private void rearmStarved() {
            while (starvedCount > 0 && ring.available() > 0) {
                armReceive(starved[--starvedCount]);
            }
        }

        private void armReceive(int slot) {
            if (!recvArmed[slot] && !closing[slot]) {
                recvArmed[slot] = true;
                loop.recvMultishot(handler, slot, socketOf[slot], ring);
            }
        }

        private void closeConnection(int slot) {
            closing[slot] = true;
            if (sending[slot] || socketOf[slot] == NONE) {
                return; // finishes when the send in flight completes
            }
            while (queueHead[slot] != NONE) { // an error left queued echoes behind: give their buffers back
                int bid = queueHead[slot];
                queueHead[slot] = nextInQueue[bid];
                ring.recycle(bid);
            }
            int socket = socketOf[slot];
            socketOf[slot] = NONE;
            loop.close(handler, slot, socket);
        }

        private int allocateSlot(int socket) {
            int slot;
            if (freeCount > 0) {
                slot = freeSlots[--freeCount];
            } else {
                slot = slotsUsed++;
                if (slot == socketOf.length) {
                    int n = slot * 2;
                    socketOf = Arrays.copyOf(socketOf, n);
                    recvArmed = Arrays.copyOf(recvArmed, n);
                    closing = Arrays.copyOf(closing, n);
                    queueHead = Arrays.copyOf(queueHead, n);
                    queueTail = Arrays.copyOf(queueTail, n);
                    sending = Arrays.copyOf(sending, n);
                    if (parsers != null) {
                        parsers = Arrays.copyOf(parsers, n);
                    }
                }
            }
            if (parsers != null) {
                if (parsers[slot] == null) {
                    parsers[slot] = new SockperfParser(arena);
                }
                parsers[slot].reset();
            }
            socketOf[slot] = socket;
            recvArmed[slot] = false;
            closing[slot] = false;
            sending[slot] = false;
            queueHead[slot] = NONE;
            return slot;
        }

        private void freeSlot(int slot) {
            freeSlots[freeCount++] = slot;
        }

        void shutdown() {
            if (listenSocket != NONE) {
                int socket = listenSocket;
                listenSocket = NONE;
                loop.close(handler, -1, socket);
            }
            for (int slot = 0; slot < slotsUsed; slot++) {
                if (socketOf[slot] != NONE) {
                    int socket = socketOf[slot];
                    socketOf[slot] = NONE;
                    closing[slot] = true;
                    loop.close(handler, -1, socket);
                }
            }
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (loop.pending() > 0 && System.nanoTime() < deadline) {
                loop.poll(10_000_000L);
            }
            ring.close();
            pool.close();
            if (arena != null) {
                arena.close(); // after the loop drained: no send still reads a carry segment
            }
        }
    }
}
