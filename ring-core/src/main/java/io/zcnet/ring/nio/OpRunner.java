package io.zcnet.ring.nio;

import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.Op;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.net.StandardSocketOptions;

/**
 * Runs the NIO engine's operations: starts each one when the loop submits it, moves the operations
 * queued on a socket forward when the selector reports it ready, fires timers, and posts completions
 * to the {@link CompletionQueue} with the results and flags the kernel would give (see
 * {@link NioEventLoop} for the semantics it mirrors, from {@code io_uring/net.c}, {@code timeout.c} and
 * {@code cancel.c}). Every socket error becomes a {@code -errno} result; nothing here throws to the
 * caller of {@code poll}. Owner-thread only: one per loop.
 */
final class OpRunner {
    private static final System.Logger LOG = System.getLogger("io.zcnet.ring");
    /** {@code io_uring/net.c}: how many times a multishot receive loops before yielding to others. */
    private static final int MULTISHOT_MAX_RETRY = 32;
    /** Accepts per listener per readiness event, so one busy listener cannot starve other sockets. */
    private static final int MAX_ACCEPTS_PER_ROUND = 64;
    /** A read or write would block: the operation stays queued. Never a valid result. */
    private static final int BLOCKED = Integer.MIN_VALUE;

    private final Counters counters;
    private final OpPool pool;
    private final SocketTable sockets;
    private final TimerHeap timers;
    private final CompletionQueue cq;
    private final StagedWriter staged = new StagedWriter();

    OpRunner(Counters counters, OpPool pool, SocketTable sockets, TimerHeap timers, CompletionQueue cq) {
        this.counters = counters;
        this.pool = pool;
        this.sockets = sockets;
        this.timers = timers;
        this.cq = cq;
    }

    void start(NioOp op) {
        switch (op.kind) {
            case Op.NOP -> finish(op, 0);
            case Op.ACCEPT -> startAccept(op);
            case Op.CONNECT -> startConnect(op);
            case Op.SEND, Op.SEND_ZC, Op.SENDMSG, Op.SENDMSG_ZC -> startTransfer(op, NioSocket.SENDS);
            case Op.RECV -> startTransfer(op, NioSocket.RECVS);
            case Op.RECV_SELECT -> startSelect(op);
            case Op.RECV_MULTISHOT -> startMultishot(op);
            case Op.SHUTDOWN -> startShutdown(op);
            case Op.CLOSE -> startClose(op);
            case Op.TIMEOUT -> timers.add(op.id, System.nanoTime() + op.nanos);
            case Op.LINK_TIMEOUT -> startLinkTimeout(op);
            case Op.CANCEL -> startCancel(op);
            default -> throw new IllegalStateException("unknown operation kind " + op.kind);
        }
    }

    /** The open socket an operation names, or null after completing the operation with -EBADF. */
    private NioSocket socketOf(NioOp op) {
        NioSocket s = sockets.lookup(op.socket);
        if (s == null) {
            finish(op, -Errno.EBADF);
        }
        return s;
    }

    private void startAccept(NioOp op) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        if (s.listener == null) {
            finish(op, -Errno.EINVAL);
            return;
        }
        s.append(NioSocket.ACCEPTS, op);
        if (s.head(NioSocket.ACCEPTS) == op) {
            serveAccept(s);
        }
        updateInterest(s);
    }

    private void startConnect(NioOp op) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        if (s.listener != null) {
            finish(op, -Errno.EISCONN);
            return;
        }
        if (s.connecting) {
            finish(op, -Errno.EALREADY);
            return;
        }
        boolean connected;
        try {
            counters.syscall();
            connected = s.stream.connect(op.remote);
        } catch (IOException | IllegalStateException | IllegalArgumentException e) {
            // AlreadyConnected, ConnectionPending, UnresolvedAddress, UnsupportedAddressType
            finish(op, -ErrnoMapper.errno(e));
            return;
        }
        if (connected) {
            finish(op, 0);
            return;
        }
        s.connecting = true;
        s.connect = op;
        updateInterest(s);
    }

    /** A send or receive: tried at once when nothing is queued before it, else queued on its socket. */
    private void startTransfer(NioOp op, int queue) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        boolean send = queue == NioSocket.SENDS;
        if (s.listener != null || !(s.connecting || s.stream.isConnected())) {
            // tcp_sendmsg: sk_stream_wait_connect gives EPIPE when not connecting; tcp_recvmsg ENOTCONN.
            finish(op, send ? -Errno.EPIPE : -Errno.ENOTCONN);
            return;
        }
        if (!s.connecting && s.head(queue) == null) {
            int result = send ? write(s, op) : read(s, op);
            if (result != BLOCKED) {
                finish(op, result, send ? 0 : receiveFlags(s, op, result));
                return;
            }
        }
        s.append(queue, op);
        updateInterest(s);
    }

    /** As io_uring picks the buffer when it issues the request: an empty ring fails at once. */
    private void startSelect(NioOp op) {
        if (op.ring.peek() < 0) {
            counters.noBuffers();
            finish(op, -Errno.ENOBUFS);
            return;
        }
        startTransfer(op, NioSocket.RECVS);
    }

    private void startMultishot(NioOp op) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        if (s.listener != null || !(s.connecting || s.stream.isConnected())) {
            finish(op, -Errno.ENOTCONN);
            return;
        }
        if (s.multishot != null) {
            finish(op, -Errno.EBUSY);
            return;
        }
        s.multishot = op;
        if (!s.connecting && s.head(NioSocket.RECVS) == null) {
            serveMultishot(s);
        }
        updateInterest(s);
    }

    private void startShutdown(NioOp op) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        if (s.listener != null || !s.stream.isConnected()) {
            finish(op, -Errno.ENOTCONN);
            return;
        }
        int how = (int) op.argument;
        try {
            if (how != EventLoop.SHUT_WR) {
                s.stream.shutdownInput();
            }
            if (how != EventLoop.SHUT_RD) {
                s.stream.shutdownOutput();
            }
        } catch (IOException e) {
            finish(op, -ErrnoMapper.errno(e));
            return;
        }
        finish(op, 0);
        if (how != EventLoop.SHUT_WR) {
            // Waiting receives see EOF now, as the kernel wakes them on RCV_SHUTDOWN.
            serveRecv(s);
            updateInterest(s);
        }
    }

    private void startClose(NioOp op) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        cancelSocketOps(s, -Errno.ECANCELED);
        finish(op, sockets.close(s));
    }

    private void startLinkTimeout(NioOp op) {
        if (op.linked == null) {
            finish(op, -Errno.ECANCELED); // its operation completed when it started
        } else {
            timers.add(op.id, System.nanoTime() + op.nanos);
        }
    }

    /** A scan of the operation pool, O(operations ever pooled): cancellation is rare, lookups need no index. */
    private void startCancel(NioOp op) {
        long target = op.argument;
        for (int id = 0; id < pool.size(); id++) {
            NioOp candidate = pool.get(id);
            if (candidate.state == NioOp.STARTED && candidate != op && candidate.userData == target
                    && candidate.kind != Op.LINK_TIMEOUT) {
                cancelOp(candidate);
                finish(op, 0);
                return;
            }
        }
        finish(op, -Errno.ENOENT);
    }

    /** Moves {@code s}'s operations forward after the selector reported {@code ready} ops for it. */
    void serveReady(NioSocket s, int ready) {
        SelectionKey key = s.key;
        if (s.listener != null) {
            serveAccept(s);
        } else if (s.connecting) {
            if ((ready & SelectionKey.OP_CONNECT) != 0) {
                serveConnect(s);
            }
        } else {
            if ((ready & SelectionKey.OP_READ) != 0) {
                serveRecv(s);
            }
            if ((ready & SelectionKey.OP_WRITE) != 0) {
                serveSend(s);
            }
        }
        if (s.key == key) {
            updateInterest(s);
        }
    }

    private void serveAccept(NioSocket s) {
        for (int i = 0; i < MAX_ACCEPTS_PER_ROUND; i++) {
            NioOp op = s.head(NioSocket.ACCEPTS);
            if (op == null) {
                return;
            }
            SocketChannel accepted;
            try {
                counters.syscall();
                accepted = s.listener.accept();
            } catch (IOException e) {
                s.removeHead(NioSocket.ACCEPTS);
                finish(op, -ErrnoMapper.errno(e));
                continue;
            }
            if (accepted == null) {
                return;
            }
            int handle;
            try {
                handle = adopt(s, accepted);
            } catch (IOException e) {
                closeQuietly(accepted);
                s.removeHead(NioSocket.ACCEPTS);
                finish(op, -ErrnoMapper.errno(e));
                continue;
            }
            if (op.multishot) {
                cq.post(op.userData, handle, CqeFlags.MORE);
            } else {
                s.removeHead(NioSocket.ACCEPTS);
                finish(op, handle);
            }
        }
    }

    private int adopt(NioSocket listener, SocketChannel accepted) throws IOException {
        if (listener.noDelay) {
            accepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
        if (listener.sendBufferSize > 0) {
            accepted.setOption(StandardSocketOptions.SO_SNDBUF, listener.sendBufferSize);
        }
        if (listener.receiveBufferSize > 0) {
            accepted.setOption(StandardSocketOptions.SO_RCVBUF, listener.receiveBufferSize);
        }
        return sockets.add(accepted, null, accepted);
    }

    private void serveConnect(NioSocket s) {
        NioOp op = s.connect;
        try {
            counters.syscall();
            if (!s.stream.finishConnect()) {
                return;
            }
        } catch (IOException e) {
            // The JDK has closed the channel; everything waiting for the connection fails as in the kernel,
            // with the socket's error.
            int errno = ErrnoMapper.errno(e);
            s.connecting = false;
            s.connect = null;
            if (op != null) {
                finish(op, -errno);
            }
            cancelSocketOps(s, -errno);
            return;
        }
        s.connecting = false;
        if (op != null) {
            s.connect = null;
            finish(op, 0);
        }
        serveSend(s);
        serveRecv(s);
    }

    private void serveSend(NioSocket s) {
        NioOp op;
        while ((op = s.head(NioSocket.SENDS)) != null) {
            int result = write(s, op);
            if (result == BLOCKED) {
                return;
            }
            s.removeHead(NioSocket.SENDS);
            finish(op, result);
        }
    }

    private void serveRecv(NioSocket s) {
        NioOp op;
        while ((op = s.head(NioSocket.RECVS)) != null) {
            int result = read(s, op);
            if (result == BLOCKED) {
                return;
            }
            s.removeHead(NioSocket.RECVS);
            finish(op, result, receiveFlags(s, op, result));
        }
        if (s.multishot != null) {
            serveMultishot(s);
        }
    }

    /**
     * Fills ring buffers while data is there, up to {@link #MULTISHOT_MAX_RETRY} of them. A buffer is taken
     * from the ring only when a read put data in it. As {@code io_recv_finish} does, it reads again only
     * while the socket is known to hold more ({@link CqeFlags#SOCK_NONEMPTY}): a full buffer that emptied
     * the socket leaves the receive armed, even when it was the ring's last buffer (no {@code -ENOBUFS}
     * until data comes with the ring still empty).
     */
    private void serveMultishot(NioSocket s) {
        NioOp op = s.multishot;
        NioBufferRing ring = op.ring;
        int previous = -1;
        for (int round = 0; round < MULTISHOT_MAX_RETRY; round++) {
            int bid = ring.peek();
            if (bid < 0) {
                counters.noBuffers();
                s.multishot = null;
                finish(op, -Errno.ENOBUFS);
                return;
            }
            int n;
            try {
                counters.syscall();
                n = s.stream.read(ring.view(bid));
            } catch (IOException | NotYetConnectedException e) {
                s.multishot = null;
                finish(op, -readErrno(s, e));
                return;
            }
            if (n == 0) {
                return;
            }
            if (n < 0) {
                s.multishot = null;
                finish(op, 0);
                return;
            }
            if (previous >= 0) {
                cq.addFlags(previous, CqeFlags.SOCK_NONEMPTY);
            }
            ring.commit();
            previous = cq.post(op.userData, n, CqeFlags.BUFFER | bid << CqeFlags.BUFFER_SHIFT | CqeFlags.MORE);
            if (n < ring.bufferSize()) {
                return;
            }
            // A full buffer: the next read tells whether more was queued, unless there is no next read.
            if (ring.peek() < 0 || round == MULTISHOT_MAX_RETRY - 1) {
                if (!dataQueued(s)) {
                    return;
                }
                cq.addFlags(previous, CqeFlags.SOCK_NONEMPTY);
                previous = -1;
            }
        }
    }

    /**
     * {@link CqeFlags#SOCK_NONEMPTY} when a receive that filled its whole range left data in the socket,
     * as the kernel reports {@code msg_inq}; costs one {@code FIONREAD} per receive that filled its buffer.
     */
    private int receiveFlags(NioSocket s, NioOp op, int result) {
        return op.selectedFlags
                | (result > 0 && op.done == op.length && dataQueued(s) ? CqeFlags.SOCK_NONEMPTY : 0);
    }

    /** Whether bytes wait in the socket's receive queue ({@code FIONREAD}); false when it cannot tell. */
    private boolean dataQueued(NioSocket s) {
        try {
            InputStream in = s.queued;
            if (in == null) {
                in = s.stream.socket().getInputStream();
                s.queued = in;
            }
            counters.syscall();
            return in.available() > 0;
        } catch (IOException e) {
            return false; // closed or shut down for input: nothing more will be read
        }
    }

    /** One send step: the final result, or {@link #BLOCKED} when the socket's buffer is full. */
    private int write(NioSocket s, NioOp op) {
        if (op.length == 0) {
            return 0;
        }
        boolean gathered = op.kind == Op.SENDMSG || op.kind == Op.SENDMSG_ZC;
        ByteBuffer view = op.view;
        try {
            while (true) {
                int n;
                int offered;
                counters.syscall();
                if (gathered) {
                    n = staged.write(s.stream, op.pieces, op.done);
                    offered = staged.attempted();
                } else {
                    view.limit(op.viewBase + op.length).position(op.viewBase + op.done);
                    n = s.stream.write(view);
                    offered = op.length - op.done;
                }
                if (n == 0) {
                    // A sendmsg without WAITALL that moved bytes ends short, as the kernel's does.
                    return op.done > 0 && !op.waitAll ? op.done : BLOCKED;
                }
                op.done += n;
                if (op.done == op.length || (n < offered && !op.waitAll)) {
                    return op.done;
                }
            }
        } catch (ClosedChannelException e) {
            // Still open means EventLoop.SHUT_WR: the kernel's answer to a send after shutdown is EPIPE.
            return partialOr(op, s.stream.isOpen() ? Errno.EPIPE : Errno.EBADF);
        } catch (IOException e) {
            return partialOr(op, ErrnoMapper.errno(e));
        } catch (NotYetConnectedException e) {
            return partialOr(op, Errno.EPIPE);
        } catch (IllegalStateException e) {
            return partialOr(op, Errno.EFAULT); // the segment's arena was closed under the operation
        }
    }

    /** One receive step: the final result (0 = EOF), or {@link #BLOCKED} when no data is there. */
    private int read(NioSocket s, NioOp op) {
        if (op.kind == Op.RECV_SELECT) {
            return readSelected(s, op);
        }
        if (op.length == 0) {
            return 0;
        }
        ByteBuffer view = op.view;
        try {
            while (true) {
                view.limit(op.viewBase + op.length).position(op.viewBase + op.done);
                counters.syscall();
                int n = s.stream.read(view);
                if (n < 0) {
                    return op.done;
                }
                if (n == 0) {
                    return BLOCKED;
                }
                op.done += n;
                if (!op.waitAll || op.done == op.length) {
                    return op.done;
                }
            }
        } catch (IOException | NotYetConnectedException e) {
            int errno = readErrno(s, e);
            return errno == 0 ? op.done : partialOr(op, errno);
        } catch (IllegalStateException e) {
            return partialOr(op, Errno.EFAULT); // the segment's arena was closed under the operation
        }
    }

    /**
     * The errno of a failed read, or 0 for EOF. The kernel reports a reset once (it clears
     * {@code sk_err}) and EOF afterwards, while the JDK keeps throwing "Connection reset": remember it.
     */
    private static int readErrno(NioSocket s, Exception e) {
        int errno = ErrnoMapper.errno(e);
        if (errno == Errno.ECONNRESET) {
            if (s.resetReported) {
                return 0;
            }
            s.resetReported = true;
        }
        return errno;
    }

    /** A buffer-select receive step: into the ring's next buffer, taken only when data came. */
    private int readSelected(NioSocket s, NioOp op) {
        NioBufferRing ring = op.ring;
        int bid = ring.peek();
        if (bid < 0) {
            counters.noBuffers();
            return -Errno.ENOBUFS;
        }
        try {
            counters.syscall();
            int n = s.stream.read(ring.view(bid));
            if (n == 0) {
                return BLOCKED;
            }
            if (n < 0) {
                return 0;
            }
            ring.commit();
            op.done = n;
            op.selectedFlags = CqeFlags.BUFFER | bid << CqeFlags.BUFFER_SHIFT;
            return n;
        } catch (IOException | NotYetConnectedException e) {
            return -readErrno(s, e);
        }
    }

    /** As the kernel's {@code io_send}/{@code io_recv}: bytes already moved win over a later error. */
    private static int partialOr(NioOp op, int errno) {
        return op.done > 0 ? op.done : -errno;
    }

    void fireTimers() {
        if (timers.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        while (!timers.isEmpty() && timers.peekDeadline() - now <= 0) {
            NioOp op = pool.get(timers.poll());
            NioOp target = op.linked;
            if (target != null) {
                op.linked = null;
                target.linkTimeout = null;
                cancelOp(target);
            }
            finish(op, -Errno.ETIME);
        }
    }

    private void updateInterest(NioSocket s) {
        if (s.key == null || !s.key.isValid()) {
            return;
        }
        int want;
        if (s.listener != null) {
            want = s.head(NioSocket.ACCEPTS) != null ? SelectionKey.OP_ACCEPT : 0;
        } else if (s.connecting) {
            want = SelectionKey.OP_CONNECT;
        } else {
            want = 0;
            if (s.head(NioSocket.RECVS) != null || s.multishot != null) {
                want |= SelectionKey.OP_READ;
            }
            if (s.head(NioSocket.SENDS) != null) {
                want |= SelectionKey.OP_WRITE;
            }
        }
        if (want != s.interest) {
            s.key.interestOps(want);
            s.interest = want;
        }
    }

    /** Posts an operation's final completion(s), resolves its link timeout and returns it to the pool. */
    void finish(NioOp op, int result) {
        finish(op, result, 0);
    }

    private void finish(NioOp op, int result, int flags) {
        NioOp chain = op.chainNext;
        boolean chainBroken = chain != null && breaksChain(op, result);
        if (op.kind == Op.SEND_ZC || op.kind == Op.SENDMSG_ZC) {
            // io_sendrecv_fail and io_send_zc set MORE whenever a notifier exists, errors included.
            cq.post(op.userData, result, CqeFlags.MORE);
            cq.post(op.userData, CqeFlags.ZC_COPIED, CqeFlags.NOTIF);
            counters.zeroCopyCopied();
        } else {
            cq.post(op.userData, result, flags);
        }
        if (op.armed) {
            op.ring.disarmed();
        }
        if (op.linked != null) {
            op.linked.linkTimeout = null;
        }
        NioOp timeout = op.linkTimeout;
        if (timeout != null) {
            timeout.linked = null;
            if (timeout.state == NioOp.STARTED) {
                timers.remove(timeout.id);
                finish(timeout, -Errno.ECANCELED);
            }
        }
        pool.give(op);
        if (chain != null) {
            if (chainBroken) {
                cancelChain(chain);
            } else {
                startChain(chain);
            }
        }
    }

    /**
     * Whether a result fails its chain, as io_uring's {@code req_set_fail}: an error, or for a send or
     * receive with {@code MSG_WAITALL} fewer bytes than asked ({@code min_ret} in net.c); a short
     * transfer without it does not.
     */
    private static boolean breaksChain(NioOp op, int result) {
        return result < 0 || (op.waitAll && result < op.length);
    }

    /**
     * Takes the chain behind {@code head} (its link timeout excepted, which starts right after it) out of
     * the recorded list {@code rest}: every operation up to the first that does not link on, each with
     * its own link timeout. They wait, {@link NioOp#HELD}, until {@code head} completes.
     *
     * @return what remains of the recorded list
     */
    NioOp holdChain(NioOp head, NioOp rest) {
        NioOp ownTimeout = null;
        if (rest != null && rest.kind == Op.LINK_TIMEOUT && rest.linked == head) {
            ownTimeout = rest;
            rest = rest.next;
        }
        NioOp first = rest;
        NioOp last = null;
        NioOp at = rest;
        while (at != null) {
            last = at;
            boolean linksOn = at.linkToNext;
            at = at.next;
            if (at != null && at.kind == Op.LINK_TIMEOUT && at.linked == last) {
                last = at;
                at = at.next;
            }
            if (!linksOn) {
                break;
            }
        }
        if (last != null) {
            last.next = null;
        }
        for (NioOp held = first; held != null; held = held.next) {
            held.state = NioOp.HELD;
        }
        head.chainNext = first;
        if (ownTimeout != null) {
            ownTimeout.next = at;
            return ownTimeout;
        }
        return at;
    }

    /** The chain's predecessor succeeded: its next operation (and that one's link timeout) starts now. */
    private void startChain(NioOp first) {
        NioOp rest = first.next;
        first.next = null;
        NioOp timeout = null;
        if (rest != null && rest.kind == Op.LINK_TIMEOUT && rest.linked == first) {
            timeout = rest;
            rest = rest.next;
            timeout.next = null;
        }
        first.chainNext = rest;
        first.state = NioOp.STARTED;
        counters.submitted(timeout == null ? 1 : 2);
        start(first);
        if (timeout != null) {
            timeout.state = NioOp.STARTED;
            start(timeout);
        }
    }

    /** The chain's predecessor failed: everything held behind it completes {@code -ECANCELED} unrun. */
    private void cancelChain(NioOp first) {
        NioOp op = first;
        while (op != null) {
            NioOp next = op.next;
            op.next = null;
            op.state = NioOp.STARTED;
            if (op.linked != null) { // a held link timeout whose operation is cancelled with it
                op.linked.linkTimeout = null;
                op.linked = null;
            }
            finish(op, -Errno.ECANCELED);
            op = next;
        }
    }

    /** Takes a started operation off whatever it waits on and completes it as cancelled. */
    private void cancelOp(NioOp op) {
        if (op.kind == Op.TIMEOUT || op.kind == Op.LINK_TIMEOUT) {
            timers.remove(op.id);
            finish(op, -Errno.ECANCELED);
            return;
        }
        NioSocket s = sockets.lookup(op.socket);
        if (s != null) {
            if (op.queue >= 0) {
                s.remove(op);
            } else if (s.connect == op) {
                s.connect = null;
            } else if (s.multishot == op) {
                s.multishot = null;
            }
            updateInterest(s);
        }
        finish(op, partialOr(op, Errno.ECANCELED));
    }

    /** Completes every operation waiting on {@code s} with {@code result} (or its partial byte count). */
    private void cancelSocketOps(NioSocket s, int result) {
        for (int queue = NioSocket.ACCEPTS; queue <= NioSocket.RECVS; queue++) {
            NioOp op;
            while ((op = s.head(queue)) != null) {
                s.removeHead(queue);
                finish(op, op.done > 0 ? op.done : result);
            }
        }
        if (s.connect != null) {
            NioOp op = s.connect;
            s.connect = null;
            finish(op, result);
        }
        if (s.multishot != null) {
            NioOp op = s.multishot;
            s.multishot = null;
            finish(op, result);
        }
        updateInterest(s);
    }

    /** Cancels every started operation (close of the loop). */
    void cancelStarted() {
        for (int id = 0; id < pool.size(); id++) {
            NioOp op = pool.get(id);
            if (op.state == NioOp.STARTED) {
                cancelOp(op);
            }
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "zcnet: closing a refused accepted channel failed", e);
        }
    }
}
