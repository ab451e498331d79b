package io.zcnet.qp;

import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EventLoop;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Accepts queue pairs, and extra subflows of queue pairs already accepted, on one address. Each accepted
 * connection runs its handshake on the loop; at most {@link #MAX_HANDSHAKES} may be in progress at once,
 * and past that the oldest is dropped, so a flood of connections that never finish their handshake costs
 * a bounded number of sockets and never blocks a peer that does. Every handshake is bounded by the
 * configuration's timeout.
 *
 * <p>{@link #accept} may be called from any thread.
 */
public final class QpListener implements AutoCloseable {
    /** Handshakes in progress at most. */
    public static final int MAX_HANDSHAKES = 512;
    private static final int TAG_ACCEPT = 1;
    private static final int TAG_CLOSED = 2;

    private final QpContext context;
    private final EventLoop loop;
    private final QpConfig config;
    private final int socket;
    private final int handlerId;
    private final InetSocketAddress address;
    /** What the listener's handshakes call back into; a separate object so none of it is public API. */
    private final Acceptor acceptor = new Acceptor();
    private final ArrayDeque<AcceptorHandshake> pending = new ArrayDeque<>();
    private final LinkedBlockingQueue<QueuePair> ready = new LinkedBlockingQueue<>();
    private long accepted;
    private volatile long refused;
    private volatile String lastRefusal;
    private volatile boolean closed;

    /** Loop thread. */
    QpListener(QpContext context, EventLoop loop, InetSocketAddress address, QpConfig config) throws IOException {
        this.context = context;
        this.loop = loop;
        this.config = config;
        this.socket = loop.listen(address, 1024);
        this.address = loop.localAddress(socket);
        this.handlerId = loop.registerHandler(this::onAccepted);
        loop.accept(handlerId, TAG_ACCEPT, socket, true);
    }

    /** {@return the address it listens on (with the port picked, if 0 was asked for)} */
    public InetSocketAddress address() {
        return address;
    }

    /**
     * {@return the next queue pair whose first subflow finished its handshake, in RTS, or null if none came within
     * {@code timeout}}
     * On the thread that drives the context's loop (a context {@linkplain QpContext#openOnCallingThread opened on
     * the calling thread}, or a {@link QpContext#runOnLoop} job) it turns the loop while it waits, which is what
     * runs the handshakes.
     *
     * @param timeout how long to wait
     * @throws InterruptedException if the calling thread is interrupted while waiting
     */
    public QueuePair accept(Duration timeout) throws InterruptedException {
        if (!loop.inLoop()) {
            return ready.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        QueuePair qp;
        while ((qp = ready.poll()) == null) {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while accepting on " + address);
            }
            if (!context.turn(deadline)) {
                return null;
            }
        }
        return qp;
    }

    /** {@return how many connections were refused or dropped during their handshake so far} */
    public long refused() {
        return refused;
    }

    /** {@return why the last connection was refused, or null} */
    public String lastRefusal() {
        return lastRefusal;
    }

    // ---------------------------------------------------------------- loop thread

    private void onAccepted(int op, int tag, int result, int flags) {
        if (tag != TAG_ACCEPT || closed) {
            if (tag == TAG_ACCEPT && result >= 0) {
                loop.close(handlerId, TAG_CLOSED, result);
            }
            return;
        }
        if (result >= 0) {
            accepted++;
            startHandshake(result);
        }
        if ((flags & CqeFlags.MORE) == 0 && !closed) {
            loop.accept(handlerId, TAG_ACCEPT, socket, true);
        }
    }

    private void startHandshake(int accepted) {
        try {
            // Acknowledgements and small frames must not wait for Nagle behind the peer's delayed ACK.
            loop.setTcpNoDelay(accepted, true);
        } catch (IOException e) {
            refused++;
            lastRefusal = "cannot set TCP_NODELAY on an accepted connection: " + e.getMessage();
            loop.close(handlerId, TAG_CLOSED, accepted);
            return;
        }
        if (pending.size() >= MAX_HANDSHAKES) {
            pending.pollFirst().abort("dropped: " + MAX_HANDSHAKES + " handshakes were in progress");
        }
        pending.addLast(new AcceptorHandshake(loop, accepted, peerOf(accepted), acceptor));
    }

    /** {@code PEER->LOCAL} of an accepted connection, for the subflow's path and the refusal reasons. */
    private String peerOf(int accepted) {
        try {
            InetSocketAddress peer = loop.remoteAddress(accepted);
            return (peer == null ? "?" : peer.getAddress().getHostAddress() + ":" + peer.getPort()) + "->" + address;
        } catch (IOException e) {
            return "connection " + this.accepted + " to " + address;
        }
    }

    /** The listener's side of its handshakes. Loop thread. */
    private final class Acceptor implements AcceptorHandshake.Host {
        @Override
        public QpConfig config() {
            return config;
        }

        @Override
        public QpEngine findByToken(long token) {
            return context.findByToken(token);
        }

        @Override
        public QueuePair create(Agreement agreement, long token, byte[] secret) {
            return context.createAccepted(agreement, config, token, secret);
        }

        @Override
        public void established(AcceptorHandshake h, QueuePair created) {
            pending.remove(h);
            h.joined.attach(h.subflowIndex, h.socket, h.peer(), h.peerAckMsn, h.peerCredit);
            if (created != null) {
                ready.add(created);
            }
        }

        @Override
        public void failed(AcceptorHandshake h, String reason) {
            pending.remove(h);
            refused++;
            lastRefusal = reason;
        }
    }

    /** Stops accepting; handshakes in progress are dropped, queue pairs already accepted carry on. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            if (loop.inLoop()) {
                closeOnLoop();
            } else {
                loop.execute(this::closeOnLoop);
            }
        } catch (java.util.concurrent.RejectedExecutionException loopGone) {
            // The loop closed first and took the socket with it.
        }
    }

    private void closeOnLoop() {
        while (!pending.isEmpty()) {
            pending.pollFirst().abort("listener closed");
        }
        loop.close(handlerId, TAG_CLOSED, socket);
    }

    @Override
    public String toString() {
        return "QpListener[" + address + " pending=" + pending.size() + " refused=" + refused + "]";
    }
}
