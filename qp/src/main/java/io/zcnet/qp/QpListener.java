package io.zcnet.qp;

import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.DetachedSocket;
import io.zcnet.ring.EventLoop;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

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
 * <p>It accepts on the context's first loop. The first message of each connection decides where the rest of its
 * handshake runs: an OPEN on the loop with the fewest queue pairs (or its shared queues' loop), a JOIN on the loop of
 * the queue pair it names; a handshake bound elsewhere moves its socket there ({@link io.zcnet.ring.EventLoop#detach})
 * with the message it read. The bounds are the listener's, whichever loops its handshakes run on: a handshake counts
 * from its accept until it ends, on any loop; those not past their first message, the ones dropped to make room, are
 * all on the accepting loop.
 *
 * <p>{@link #accept} and the counters may be called from any thread.
 */
public final class QpListener implements AutoCloseable {
    private static final int TAG_ACCEPT = 1;
    private static final int TAG_CLOSED = 2;

    private final QpContext context;
    /** The loop it accepts on. */
    private final QpLoop accepting;
    private final EventLoop loop;
    private final ListenerConfig settings;
    private final QpConfig config;
    private final int socket;
    private final int handlerId;
    private final InetSocketAddress address;
    /** What the listener's handshakes call back into; a separate object so none of it is public API. */
    private final Acceptor acceptor = new Acceptor();
    /** Handshakes in progress on the accepting loop, every one not past its first message among them. Its thread. */
    private final ArrayDeque<AcceptorHandshake> pending = new ArrayDeque<>();
    /** Handshakes that moved to another loop, to drop when the listener closes. Any thread. */
    private final Set<AcceptorHandshake> moved = ConcurrentHashMap.newKeySet();
    /** Handshakes in progress on every loop. Any thread. */
    private final AtomicInteger inProgress = new AtomicInteger();
    /** Handshakes in progress by source address, on every loop. Any thread (each update atomic). */
    private final Map<InetAddress, Integer> bySource = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<QueuePair> ready = new LinkedBlockingQueue<>();
    private long accepted;
    private final AtomicLongArray refusals = new AtomicLongArray(Refusal.values().length);
    private volatile String lastRefusal;
    private volatile boolean closed;

    /** The accepting loop's thread. */
    QpListener(QpContext context, QpLoop accepting, InetSocketAddress address, ListenerConfig settings) throws IOException {
        this.context = context;
        this.accepting = accepting;
        this.loop = accepting.loop();
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
            if (!accepting.turn(deadline)) {
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
        if (inProgress.get() >= settings.maxHandshakes() && !dropCheapest(null, Refusal.HANDSHAKE_LIMIT)) {
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
        inProgress.incrementAndGet();
        AcceptorHandshake h = new AcceptorHandshake(accepting, accepted, peer, path, acceptor,
                config.handshakeTimeout().toNanos());
        pending.addLast(h);
        h.start();
    }

    /**
     * On {@code target}'s thread: goes on with a handshake whose first message was read on the accepting loop, with
     * what is left of its timeout, unless the listener closed meanwhile.
     */
    private void resume(QpLoop target, DetachedSocket socket, byte[] first, AcceptorHandshake from) {
        if (closed) {
            socket.close();
            abandon(from, target, Refusal.CLOSED, "listener closed");
            return;
        }
        int adopted;
        try {
            adopted = target.loop().adopt(socket);
        } catch (IOException | RuntimeException e) {
            socket.close();
            abandon(from, target, Refusal.DISCONNECTED, "loop " + target.index() + " cannot take " + from.peer() + ": "
                    + e.getMessage());
            return;
        }
        long left = from.startedNanos + config.handshakeTimeout().toNanos() - System.nanoTime();
        AcceptorHandshake h = new AcceptorHandshake(target, adopted, from.peerAddress(), from.peer(), acceptor,
                Math.max(1, left));
        moved.add(h);
        h.resume(first, from.claimed());
        if (closed) { // closed after the look above: the close may have walked the set before the add
            target.execute(() -> h.drop(Refusal.CLOSED, "listener closed"));
        }
    }

    /** A handshake that moved never got going on {@code target}: its place there and its count are given back. */
    private void abandon(AcceptorHandshake h, QpLoop target, Refusal cause, String reason) {
        if (h.claimed()) {
            target.unclaim();
        }
        released(h.peerAddress());
        count(cause, reason, h.peerAddress());
    }

    /** A handshake ended, on any loop: it no longer counts against the bounds. */
    private void released(InetSocketAddress peer) {
        inProgress.decrementAndGet();
        if (peer != null) {
            bySource.computeIfPresent(peer.getAddress(), (source, n) -> n > 1 ? n - 1 : null);
        }
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

    /** A queue pair waiting to be accepted failed (its peer hung up): it is closed and never handed out. Its loop thread. */
    void reap(QueuePair qp) {
        if (ready.remove(qp)) {
            qp.close();
        }
    }

    /** The listener's side of its handshakes. The thread of each handshake's loop. */
    private final class Acceptor implements AcceptorHandshake.Host {
        @Override
        public QpConfig config() {
            return config;
        }

        @Override
        public QpLoop route(int type, long token) {
            if (type == HandshakeMessage.OPEN) {
                QpLoop home = settings.sharedQueues().home();
                QpLoop target = home != null ? home : context.leastLoaded();
                target.claim();
                return target;
            }
            QpEngine joined = type == HandshakeMessage.JOIN ? context.findByToken(token) : null;
            return joined != null ? joined.qp.home() : accepting; // refused where it is, if at all
        }

        @Override
        public void handedOff(AcceptorHandshake h, QpLoop target, DetachedSocket socket, byte[] first) {
            pending.remove(h); // it leaves this loop; it counts against the bounds until it ends there
            try {
                target.execute(() -> resume(target, socket, first, h));
            } catch (RejectedExecutionException loopGone) {
                socket.close();
                abandon(h, target, Refusal.DISCONNECTED, "loop " + target.index() + " is closed: dropped " + h.peer());
            }
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
        public QueuePair create(QpLoop home, Agreement agreement, long token, byte[] secret) {
            return context.createAccepted(home, agreement, config, settings.sharedQueues(), token, secret);
        }

        @Override
        public void established(AcceptorHandshake h, QueuePair created) {
            ended(h);
            h.joined.attach(h.subflowIndex, h.socket, h.peer(), h.peerAckMsn, h.peerCredit);
            if (created != null && created.state() == QpState.RTS) {
                created.waitIn(QpListener.this);
                ready.add(created);
                // Closed from another thread meanwhile: its close may have drained the queue before this add.
                if (closed && ready.remove(created) && created.takeFromListener(QpListener.this)) {
                    created.close();
                }
            }
        }

        @Override
        public void failed(AcceptorHandshake h, Refusal cause, String reason) {
            ended(h);
            count(cause, reason, h.peerAddress());
        }

        private void ended(AcceptorHandshake h) {
            if (h.home == accepting) {
                pending.remove(h);
            } else {
                moved.remove(h);
            }
            released(h.peerAddress());
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
        for (AcceptorHandshake h : moved) {
            try {
                h.home.execute(() -> h.drop(Refusal.CLOSED, "listener closed"));
            } catch (RejectedExecutionException loopGone) {
                // That loop closed, and its sockets with it.
            }
        }
        for (QueuePair untaken = ready.poll(); untaken != null; untaken = ready.poll()) {
            if (untaken.takeFromListener(this)) { // owned as accept would own it, so a reap never closes it twice
                closeOnItsLoop(untaken);
            }
        }
        loop.close(handlerId, TAG_CLOSED, socket);
    }

    /**
     * Closes a queue pair from the accepting loop's thread without waiting for another loop: one loop thread never
     * blocks on another's answer.
     */
    private void closeOnItsLoop(QueuePair qp) {
        QpLoop home = qp.home();
        if (home == accepting) {
            qp.close();
            return;
        }
        try {
            home.execute(qp::close);
        } catch (RejectedExecutionException loopGone) {
            // That loop closed, and its queue pairs with it.
        }
    }

    /** {@return the handshakes in progress, on every loop} Any thread. */
    int handshakes() {
        return inProgress.get();
    }

    @Override
    public String toString() {
        return "QpListener[" + address + " pending=" + inProgress.get() + " waiting=" + ready.size() + " refused="
                + refused() + "]";
    }
}
