package io.zcnet.jmh.rx;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;
import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;

/**
 * One queue pair between two contexts of this process (two loop threads, as two processes would have),
 * driven inline: both ends post and poll from their own loop thread through
 * {@link QueuePair#onCompletions}, so no application thread competes with the loops. The client streams
 * SENDs of {@code size} bytes into receives the server keeps posted (messages; by key, or as inline data
 * copied when posted, {@link WorkRequest#inline}), or RDMA WRITEs of
 * {@code size} bytes into the server's region (bulk), {@code window} in flight; every
 * {@code signalEvery}-th work request is signaled and its completion stands for the ones before it.
 *
 * <p>Nothing allocates per message on either side: the work request and completion holders are reused.
 */
final class QueuePairLink implements AutoCloseable {
    enum Kind { SEND, INLINE_SEND, WRITE }

    private final Kind kind;
    private final int size;
    private final int window;
    private final int signalEvery;
    private final DeliveryCount delivered;
    private final QueuePairEnds ends;
    private final QueuePair server;
    private final QueuePair client;
    private final MemoryRegion serverRegion;
    private final MemoryRegion clientRegion;
    private final WorkRequest request = new WorkRequest();
    private final WorkCompletion clientCompletion = new WorkCompletion();
    private final WorkCompletion serverCompletion = new WorkCompletion();
    private long posted;
    private long completed;

    QueuePairLink(EventLoopConfig.Choice engine, Kind kind, int size, int window, int signalEvery, int subflows,
            boolean icrc, int segmentSize, DeliveryCount delivered) throws IOException, InterruptedException {
        if (size < 0 || window < 4 || Integer.bitCount(window) != 1) {
            throw new IllegalArgumentException("size " + size + " must be >= 0 and window " + window
                    + " a power of two >= 4");
        }
        if (signalEvery < 1 || signalEvery > window || window % signalEvery != 0) {
            throw new IllegalArgumentException("signal every " + signalEvery + " must divide the window " + window);
        }
        this.kind = kind;
        this.size = size;
        this.window = window;
        this.signalEvery = signalEvery;
        this.delivered = delivered;
        QpConfig config = QpConfig.defaults().withIcrc(icrc).withSegmentSize(segmentSize).withMessageWindow(Math.max(64, window))
                .withQueueDepths(window * 2, window * 2).withSubflows(subflows)
                .withMaxInlineData(kind == Kind.INLINE_SEND ? size : 0);
        ends = new QueuePairEnds(engine, config);
        server = ends.server;
        client = ends.client;
        boolean sends = kind != Kind.WRITE;
        long slots = sends ? window : 1;
        serverRegion = ends.serverRegion(slots * size);
        clientRegion = ends.clientRegion(size);
        clientRegion.segment().fill((byte) 0x5A);
        if (sends) {
            server.onCompletions(this::serverTurn);
            for (int i = 0; i < window; i++) {
                server.postReceive(i, serverRegion.localKey(), (long) i * size, size);
            }
        }
        client.onCompletions(this::clientTurn);
        for (int i = 0; i < window; i++) {
            post();
        }
    }

    private void post() {
        boolean signaled = ++posted % signalEvery == 0;
        if (kind == Kind.SEND) {
            request.send(posted, clientRegion.localKey(), 0, size);
        } else if (kind == Kind.INLINE_SEND) {
            request.send(posted).inline(clientRegion.segment(), 0, size);
        } else {
            request.write(posted, clientRegion.localKey(), 0, size, serverRegion.remoteKey(), 0);
        }
        if (!client.postSend(signaled ? request : request.unsignaled())) {
            posted--;
            ends.fail("send queue full with " + (posted - completed) + " outstanding");
        }
    }

    /** Client loop: each signaled completion retires the work requests up to it and posts as many again. */
    private void clientTurn() {
        while (client.poll(clientCompletion)) {
            if (ends.failed("client", clientCompletion)) {
                return;
            }
            long upTo = clientCompletion.workRequestId();
            long done = upTo - completed;
            completed = upTo;
            if (kind == Kind.WRITE) {
                for (long i = 0; i < done; i++) {
                    delivered.add(size);
                }
            }
            for (long i = 0; i < done; i++) {
                post();
            }
        }
    }

    /** Server loop: every received message is counted and its receive posted again. */
    private void serverTurn() {
        while (server.poll(serverCompletion)) {
            if (ends.failed("server", serverCompletion)) {
                return;
            }
            delivered.add(serverCompletion.byteCount());
            long slot = serverCompletion.workRequestId();
            server.postReceive(slot, serverRegion.localKey(), slot * size, size);
        }
    }

    /** Fails unless both ends are still healthy. */
    void check() {
        ends.check();
    }

    /**
     * Both ends' statistics. The server's frames are all ACKNOWLEDGEs (it sends no work requests), so they
     * show how often the receiving end acknowledges.
     */
    String describe() {
        return "client " + client.statistics() + " server " + server.statistics();
    }

    @Override
    public void close() {
        ends.close();
    }
}
