package io.zcnet.qp;

import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EventLoop;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Accepts queue pairs, and extra subflows of queue pairs already accepted, on one address, and keeps serving
 * them whatever strangers send ({@link ListenerConfig}). Each accepted connection runs its handshake on the loop,
 * each bounded by the handshake timeout. At most {@link ListenerConfig#maxHandshakes} are in progress at once and
 * {@link ListenerConfig#maxHandshakesPerSource} from one address: past the first bound the cheapest to lose is
 * dropped (one whose peer has not sent its first message yet, which a real client sends at once), past the second
 * the new connection is closed unread, so a flood of silent or half-open connections costs a bounded number of
 * sockets and never blocks a client that does its part. An OPEN is checked against the admission policy and
 * against {@link ListenerConfig#maxWaiting} before anything is allocated for it. A queue pair that failed while it
 * waited to be accepted (its peer hung up) is closed and never handed out.
 *
 * <p>Without a pre-shared key anyone who can reach the port can open a queue pair, as with any TCP server: the
 * bounds and the admission policy are what keep that cheap. With one, a stranger cannot get past the PROOF, and
 * costs the listener no more than a handshake record.
 *
 * <p>{@link #accept} and the counters may be called from any thread.
 */
public final class QpListener implements AutoCloseable {
    private static final int TAG_ACCEPT = 1;
    private static final int TAG_CLOSED = 2;

    private final QpContext context;
    private final EventLoop loop;
    private final ListenerConfig settings;
    private final QpConfig config;
    private final int socket;
    private final int handlerId;
    private final InetSocketAddress address;
    /** What the listener's handshakes call back into; a separate object so none of it is public API. */
    private final Acceptor acceptor = new Acceptor();
    private final ArrayDeque<AcceptorHandshake> pending = new ArrayDeque<>();
    /** Handshakes in progress by source address. Loop thread. */
    private final Map<InetAddress, Integer> bySource = new HashMap<>();
    private final LinkedBlockingQueue<QueuePair> ready = new LinkedBlockingQueue<>();
    private long accepted;
    private final AtomicLongArray refusals = new AtomicLongArray(Refusal.values().length);
    private volatile String lastRefusal;
    private volatile boolean closed;

    /** Loop thread. */
    QpListener(QpContext context, EventLoop loop, InetSocketAddress address, ListenerConfig settings) throws IOException {
        this.context = context;
        this.loop = loop;
        this.settings = settings;
        this.config = settings.queuePairs();
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
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            QueuePair qp = loop.inLoop() ? ready.poll() : ready.poll(Math.max(0, deadline - System.nanoTime()),
                    TimeUnit.NANOSECONDS);
            if (qp != null) {
                if (qp.takeFromListener(this)) {
                    return qp;
                }
                continue; // it failed while it waited, and was closed: never handed out
            }
            if (!loop.inLoop()) {
                return null;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while accepting on " + address);
            }
            if (!context.turn(deadline)) {
                return null;
            }
        }
    }

    /** {@return how many connections were refused or dropped during their handshake so far} */
    public long refused() {
        long n = 0;
        for (int i = 0; i < refusals.length(); i++) {
            n += refusals.get(i);
        }
        return n;
    }

    /**
     * {@return how many connections were refused or dropped for {@code cause} so far}
     *
     * @param cause why
     */
    public long refused(Refusal cause) {
        return refusals.get(cause.ordinal());
    }

    /** {@return the queue pairs established and waiting to be taken by {@link #accept}} */
    public int waiting() {
        return ready.size();
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
        InetSocketAddress peer = peerAddressOf(accepted);
        String path = (peer == null ? "connection " + this.accepted : peer.getAddress().getHostAddress() + ":"
                + peer.getPort()) + "->" + address;
        InetAddress source = peer == null ? null : peer.getAddress();
        if (source != null && bySource.getOrDefault(source, 0) >= settings.maxHandshakesPerSource()
                && !dropCheapest(source, Refusal.SOURCE_LIMIT)) {
            refuseUnread(accepted, Refusal.SOURCE_LIMIT, "closed " + path + " unread: "
                    + settings.maxHandshakesPerSource() + " handshakes from " + source.getHostAddress()
                    + " in progress, each past its first message");
            return;
        }
        if (pending.size() >= settings.maxHandshakes() && !dropCheapest(null, Refusal.HANDSHAKE_LIMIT)) {
            refuseUnread(accepted, Refusal.HANDSHAKE_LIMIT, "closed " + path + " unread: " + settings.maxHandshakes()
                    + " handshakes in progress, each past its first message");
            return;
        }
        try {
            // Acknowledgements and small frames must not wait for Nagle behind the peer's delayed ACK.
            loop.setTcpNoDelay(accepted, true);
        } catch (IOException e) {
            refuseUnread(accepted, Refusal.DISCONNECTED, "cannot set TCP_NODELAY on " + path + ": " + e.getMessage());
            return;
        }
        if (source != null) {
            bySource.merge(source, 1, Integer::sum);
        }
        pending.addLast(new AcceptorHandshake(loop, context.icrc(), accepted, peer, path, acceptor));
    }

    /**
     * Drops the handshake that is cheapest to lose, from {@code source} (any when null): the oldest whose peer has
     * sent nothing yet. A client sends its first message at once, so what goes is a silent or half-open connection,
     * never one doing its part; when every one is past its first message, false: the newcomer is turned away.
     */
    private boolean dropCheapest(InetAddress source, Refusal cause) {
        for (AcceptorHandshake h : pending) {
            InetSocketAddress peer = h.peerAddress();
            if (!h.heardHello() && (source == null || peer != null && source.equals(peer.getAddress()))) {
                h.drop(cause, "dropped " + h.peer() + " to make room (" + cause + "): it had sent nothing yet");
                return true; // its failure took it out of pending
            }
        }
        return false;
    }

    private void refuseUnread(int accepted, Refusal cause, String reason) {
        count(cause, reason, null);
        loop.close(handlerId, TAG_CLOSED, accepted);
    }

    private void count(Refusal cause, String reason, InetSocketAddress peer) {
        refusals.incrementAndGet(cause.ordinal());
        lastRefusal = reason;
        HandshakeRefusedEvent.emit(address, peer, cause, reason);
    }

    /** The peer of an accepted connection, or null if the socket could not say (it may be gone already). */
    private InetSocketAddress peerAddressOf(int accepted) {
        try {
            return loop.remoteAddress(accepted);
        } catch (IOException e) {
            return null;
        }
    }

    /** A queue pair waiting to be accepted failed (its peer hung up): it is closed and never handed out. Loop thread. */
    void reap(QueuePair qp) {
        if (ready.remove(qp)) {
            qp.close();
        }
    }

    /** The listener's side of its handshakes. Loop thread. */
    private final class Acceptor implements AcceptorHandshake.Host {
        @Override
        public QpConfig config() {
            return config;
        }

        @Override
        public String admit(QpProposal proposal) {
            return settings.admission().refusal(proposal);
        }

        @Override
        public boolean isFull() {
            return ready.size() >= settings.maxWaiting();
        }

        @Override
        public QpEngine findByToken(long token) {
            return context.findByToken(token);
        }

        @Override
        public QueuePair create(Agreement agreement, long token, byte[] secret) {
            return context.createAccepted(agreement, config, settings.sharedQueues(), token, secret);
        }

        @Override
        public void established(AcceptorHandshake h, QueuePair created) {
            ended(h);
            h.joined.attach(h.subflowIndex, h.socket, h.peer(), h.peerAckMsn, h.peerCredit);
            if (created != null && created.state() == QpState.RTS) {
                created.waitIn(QpListener.this);
                ready.add(created);
            }
        }

        @Override
        public void failed(AcceptorHandshake h, Refusal cause, String reason) {
            ended(h);
            count(cause, reason, h.peerAddress());
        }

        private void ended(AcceptorHandshake h) {
            pending.remove(h);
            InetSocketAddress peer = h.peerAddress();
            if (peer != null) {
                bySource.computeIfPresent(peer.getAddress(), (source, n) -> n > 1 ? n - 1 : null);
            }
        }
    }

    /**
     * Stops accepting: handshakes in progress are dropped, and queue pairs established but not yet taken by
     * {@link #accept} are closed (their peers see them end), since nobody could take them any more; queue pairs
     * already taken carry on. Any thread; the work is done on the loop, and an {@code accept} racing with it either
     * takes a queue pair first or gets none.
     */
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
        for (AcceptorHandshake h : new ArrayDeque<>(pending)) {
            h.drop(Refusal.CLOSED, "listener closed");
        }
        pending.clear();
        for (QueuePair untaken = ready.poll(); untaken != null; untaken = ready.poll()) {
            if (untaken.takeFromListener(this)) { // owned as accept would own it, so a reap never closes it twice
                untaken.close();
            }
        }
        loop.close(handlerId, TAG_CLOSED, socket);
    }

    /** {@return the handshakes in progress} Loop thread. */
    int handshakes() {
        return pending.size();
    }

    @Override
    public String toString() {
        return "QpListener[" + address + " pending=" + pending.size() + " waiting=" + ready.size() + " refused="
                + refused() + "]";
    }
}
