package io.zcnet.ring.nio;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.DetachedSocket;
import io.zcnet.ring.EngineFeatures;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.GatherList;
import io.zcnet.ring.LoopCounters;
import io.zcnet.ring.MsgFlags;
import io.zcnet.ring.Op;
import io.zcnet.ring.internal.Counters;
import io.zcnet.ring.internal.UserData;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The {@code java.nio} engine: the operations of {@link EventLoop} on one {@link Selector}, with the
 * completions io_uring would post (same results, same {@link CqeFlags}), for machines where io_uring
 * cannot run.
 *
 * <h2>How a poll runs</h2>
 * Preparing an operation only records it. {@link #poll(long)} then, in this order: runs queued tasks;
 * starts every recorded operation in preparation order (tries it at once, non-blocking; if it would
 * block, queues it on its socket and sets the socket's interest ops); selects (without blocking when
 * completions or tasks wait, otherwise up to the timeout or the nearest timer); progresses the sockets
 * the selector reported; fires due timers; and finally dispatches the completions collected in a
 * preallocated array (userData, result, flags: a CQ) in the order they were posted.
 *
 * <h2>Semantics it mirrors</h2>
 * Following {@code io_uring/net.c}, {@code io_uring/timeout.c}, {@code io_uring/cancel.c}:
 * <ul>
 * <li>accept: result is the new socket handle; multishot completions carry {@link CqeFlags#MORE} while
 *     armed; accepted sockets inherit TCP_NODELAY and buffer sizes set on the listener.</li>
 * <li>send/recv: short results unless {@code waitAll}; receive result 0 is EOF; an error after partial
 *     progress reports the bytes moved (the kernel's {@code done_io}), as does a cancelled partial
 *     operation. Send on a socket that is not connected is {@code -EPIPE}, receive {@code -ENOTCONN};
 *     operations prepared while a connect is in progress wait for it.</li>
 * <li>multishot recv: buffers come from the {@link NioBufferRing} in FIFO order; each completion has
 *     {@code BUFFER | bid << 16 | MORE}, plus {@link CqeFlags#SOCK_NONEMPTY} when data was left in the
 *     socket; it reads on only while data is left ({@code io_recv_finish}), at most 32 buffers per socket
 *     per round ({@code MULTISHOT_MAX_RETRY}); EOF is result 0 without MORE and without a buffer; an empty
 *     ring met by data is {@code -ENOBUFS} without MORE with the data left in the socket. A single recv
 *     that filled its range has {@link CqeFlags#SOCK_NONEMPTY} when data was left, too (one
 *     {@code FIONREAD} for it).</li>
 * <li>sendZeroCopy: a plain send (NIO cannot send pages) whose completion always has MORE, followed at
 *     once by a {@link CqeFlags#NOTIF} completion whose result is {@link CqeFlags#ZC_COPIED}, counted in
 *     {@link LoopCounters#zeroCopySendsCopied()}.</li>
 * <li>timeout: {@code -ETIME}, or {@code -ECANCELED} when cancelled. linkTimeout binds to the operation
 *     prepared just before it; if its timer fires first that operation is cancelled and the timeout
 *     completes {@code -ETIME}, otherwise the timeout completes {@code -ECANCELED} right after it.</li>
 * <li>cancel: the target completes {@code -ECANCELED} (or its partial byte count), the cancel 0; no
 *     started target is {@code -ENOENT}. As in the kernel, link timeouts are not found by cancel.</li>
 * <li>close(socket): the socket's pending operations complete {@code -ECANCELED}, the channel is
 *     closed, then the close completes 0 and the handle may be reused.</li>
 * <li>A negative socket handle is an {@link IllegalArgumentException} when preparing; a handle that
 *     is not open completes with {@code -EBADF}, like an unknown file descriptor.</li>
 * <li>Socket errors are never thrown from {@link #poll}: {@link ErrnoMapper} turns them into
 *     {@code -errno} results; memory that is no longer alive completes {@code -EFAULT}.</li>
 * </ul>
 * Divergences: {@code shutdown} of a listening socket is {@code -ENOTCONN} (Linux accepts
 * {@code SHUT_RD}); a socket whose connect failed cannot be connected again (the JDK closes it;
 * Linux allows a second connect), while sends and receives on it give {@code -EPIPE} and
 * {@code -ENOTCONN} as on Linux; {@code shutdown(SHUT_RD)} drops data already queued (the JDK's
 * {@code shutdownInput}), where Linux still delivers it; a second multishot receive on one socket
 * completes {@code -EBUSY}, where the kernel accepts it.
 *
 * <h2>Memory</h2>
 * Sends and receives move bytes through {@link ByteBuffer} views of the caller's segments. A view is
 * cached per segment object (and per {@link NioBufferRing} buffer, created once), so steady traffic on
 * reused segments allocates nothing; a segment seen for the first time, or one larger than 2 GiB
 * (viewed per operation), costs one small view object. Operation objects are pooled.
 *
 * <h2>Threading</h2>
 * Confined to its owner thread like every {@link EventLoop}; {@link #execute}, {@link #wakeup},
 * {@link #engine}, {@link #features} and {@link #counters} are for any thread. A task queued by
 * {@link #execute} happens-before its run on the owner thread (JCTools MPSC queue). Counters: one
 * "syscall" per select, read, write, accept and connect call, approximate; wake-ups that arrive while
 * one is already pending are coalesced and counted once.
 */
public final class NioEventLoop extends EventLoop {
    private static final System.Logger LOG = System.getLogger("io.zcnet.ring");
    /** Rounds of cancel-and-dispatch {@link #close()} gives handlers that prepare new work meanwhile. */
    private static final int CLOSE_ROUNDS = 16;
    /** Cap on a timeout's duration (~146 years) so that {@code nanoTime() + nanos} cannot wrap. */
    private static final long MAX_TIMEOUT_NANOS = Long.MAX_VALUE >>> 1;
    private static final int VIEW_CACHE_ENTRIES = 64;
    private static final VarHandle WAKEUP_PENDING;

    static {
        try {
            WAKEUP_PENDING = MethodHandles.lookup().findVarHandle(NioEventLoop.class, "wakeupPending", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Counters counters = counterSet();
    private final EngineFeatures features;
    private final Selector selector;
    private final Consumer<SelectionKey> collectReady = this::collectReady;
    private final TimerHeap timers;
    private final ViewCache views = new ViewCache(VIEW_CACHE_ENTRIES);
    /** Buffer groups by id: control path only. */
    private final Map<Integer, NioBufferRing> rings = new HashMap<>();

    /** Operations recorded or started and not finally completed: {@link OpPool#live()}. */
    private final OpPool pool;
    private final SocketTable sockets;
    private final CompletionQueue cq;
    private final OpRunner runner;
    /** Operations prepared since the last poll, in order: a singly linked list through {@link NioOp#next}. */
    private NioOp recordedHead;
    private NioOp recordedTail;

    private SelectionKey[] readyKeys = new SelectionKey[64];
    private int[] readyOps = new int[64];
    private int readyCount;

    /** 1 while a wake-up is on its way to the selector: later {@link #wakeup()} calls may skip theirs. */
    private volatile int wakeupPending;
    private volatile boolean closed;
    private boolean closing;

    private NioEventLoop(EventLoopConfig config, Selector selector) {
        super(config, EngineKind.NIO);
        this.selector = selector;
        this.pool = new OpPool(config.sqEntries());
        this.timers = new TimerHeap(config.sqEntries());
        this.sockets = new SocketTable(selector);
        this.cq = new CompletionQueue(config.cqEntries());
        this.runner = new OpRunner(counters, pool, sockets, timers, cq);
        this.features = new EngineFeatures(EngineKind.NIO, List.of(), 0, List.of(), List.of(), 0, 0, false,
                List.of("java.nio selector engine: one select per poll, one read/write system call per operation"
                                + " step, nothing batched across sockets",
                        "no zero-copy send: sendZeroCopy copies, every NOTIF completion reports ZC_COPIED",
                        "fixed buffers are only numbered (no pinning, no registration with the kernel)",
                        "provided buffer rings are kept in user space (FIFO of buffer ids)",
                        "no zero-copy receive (zcrx)",
                        "counters are approximate: one syscall per select, read, write, accept, connect"));
    }

    /**
     * Opens a loop with its own {@link Selector}. {@code sqEntries} sizes the operation pool and the timer
     * heap, {@code cqEntries} the completion array; all grow if a burst needs more.
     *
     * @throws IOException if no selector can be opened
     */
    public static NioEventLoop open(EventLoopConfig config) throws IOException {
        checkConfig(config);
        return new NioEventLoop(config, Selector.open());
    }

    /** NIO runs every kind of operation (zero-copy ones by copying). */
    @Override
    public boolean supports(int op) {
        return op > 0 && op < Op.COUNT && op != UserData.WAKEUP_OP;
    }

    @Override
    public EngineKind engine() {
        return EngineKind.NIO;
    }

    @Override
    public EngineFeatures features() {
        return features;
    }

    // ---------------------------------------------------------------- control path

    /** Opens a listening socket with {@code SO_REUSEADDR}; a backlog of 0 lets the JDK choose. */
    @Override
    public int listen(InetSocketAddress address, int backlog) throws IOException {
        checkUsable();
        checkAddress(address, "address");
        if (backlog < 0) {
            throw new IllegalArgumentException("backlog must be >= 0, got " + backlog);
        }
        ServerSocketChannel channel = ServerSocketChannel.open(family(address));
        try {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.bind(address, backlog);
            return sockets.add(channel, channel, null);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public int socket(InetSocketAddress address) throws IOException {
        checkUsable();
        checkAddress(address, "address");
        SocketChannel channel = SocketChannel.open(family(address));
        int handle;
        try {
            handle = sockets.add(channel, null, channel);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        sockets.lookup(handle).inet6 = address.getAddress() instanceof Inet6Address;
        return handle;
    }

    /**
     * Refuses, as the kernel would, a socket with a local address, and one of the other family (the JDK
     * would bind an IPv6 channel to an IPv4-mapped address, which io_uring's sockets do not do).
     */
    @Override
    public void bind(int socket, InetSocketAddress local) throws IOException {
        checkUsable();
        checkAddress(local, "local");
        NioSocket s = openSocket(socket);
        if (s.stream != null && !s.stream.isOpen()) {
            throw new IOException("socket " + socket + " was closed by its failed connect: open a new one with"
                    + " socket() and bind that");
        }
        InetSocketAddress peer = s.stream != null ? (InetSocketAddress) s.stream.getRemoteAddress() : null;
        checkBind(socket, s.inet6, localAddress(socket), peer, local); // a listener has its port: refused
        s.stream.bind(local);
    }

    /** The bound address; an unbound socket reports the wildcard address and port 0, as getsockname does. */
    @Override
    public InetSocketAddress localAddress(int socket) throws IOException {
        checkUsable();
        NioSocket s = openSocket(socket);
        InetSocketAddress address = (InetSocketAddress) (s.listener != null ? s.listener.getLocalAddress()
                : s.stream.getLocalAddress());
        return address != null ? address : new InetSocketAddress(0);
    }

    @Override
    public InetSocketAddress remoteAddress(int socket) throws IOException {
        checkUsable();
        NioSocket s = openSocket(socket);
        return s.listener != null ? null : (InetSocketAddress) s.stream.getRemoteAddress();
    }

    /** On a listening socket the setting is kept and applied to every socket it accepts. */
    @Override
    public void setTcpNoDelay(int socket, boolean on) throws IOException {
        checkUsable();
        NioSocket s = openSocket(socket);
        if (s.listener != null) {
            s.noDelay = on;
        } else {
            s.stream.setOption(StandardSocketOptions.TCP_NODELAY, on);
        }
    }

    /** On a listening socket both sizes are kept and applied to every socket it accepts. */
    @Override
    public void setBufferSizes(int socket, int sendBytes, int receiveBytes) throws IOException {
        checkUsable();
        checkBufferSizes(sendBytes, receiveBytes);
        NioSocket s = openSocket(socket);
        if (s.listener != null) {
            s.sendBufferSize = sendBytes > 0 ? sendBytes : s.sendBufferSize;
            s.receiveBufferSize = receiveBytes > 0 ? receiveBytes : s.receiveBufferSize;
            if (receiveBytes > 0) {
                s.listener.setOption(StandardSocketOptions.SO_RCVBUF, receiveBytes);
            }
            return;
        }
        if (sendBytes > 0) {
            s.stream.setOption(StandardSocketOptions.SO_SNDBUF, sendBytes);
        }
        if (receiveBytes > 0) {
            s.stream.setOption(StandardSocketOptions.SO_RCVBUF, receiveBytes);
        }
    }

    /** A no-op that returns false: see {@link EventLoop#setUserTimeout}. */
    @Override
    public boolean setUserTimeout(int socket, int millis) throws IOException {
        checkUsable();
        checkUserTimeout(millis);
        openSocket(socket);
        return false;
    }

    @Override
    public void setResetOnClose(int socket) throws IOException {
        checkUsable();
        NioSocket s = openSocket(socket);
        if (s.stream != null) {
            s.stream.setOption(StandardSocketOptions.SO_LINGER, 0);
        }
    }

    @Override
    public DetachedSocket detach(int socket, int handler) throws IOException {
        checkUsable();
        NioSocket s = openSocket(socket);
        checkQuiet(socket, handler);
        if (s.stream == null || !s.stream.isConnected()) {
            throw new IOException("socket " + socket + " is not connected (listening, or not yet connected): only a"
                    + " connected socket may move to another loop");
        }
        if (s.isBusy()) {
            throw new IllegalStateException("cannot detach socket " + socket + ": operations wait on it (" + s + ")");
        }
        return new DetachedChannel(sockets.detach(s));
    }

    @Override
    public int adopt(DetachedSocket socket) throws IOException {
        checkUsable();
        checkDetached(socket, EngineKind.NIO);
        DetachedChannel detached = (DetachedChannel) socket;
        if (!detached.adopt()) {
            throw new IllegalStateException(socket + " was adopted or closed already");
        }
        try {
            return sockets.add(detached.channel, null, detached.channel);
        } catch (IOException | RuntimeException e) {
            detached.closeUnadopted(); // taken, so nobody else will close it
            throw e;
        }
    }

    /** NIO has no fixed buffers: the table is only the numbering {@link EventLoop} keeps. */
    @Override
    protected void installFixedBuffers(List<MemoryRegion> all, int kept) {
        checkUsable();
    }

    /**
     * Creates a {@link NioBufferRing}: {@code count} buffers leased from {@code pool} (which must be owned
     * by this loop's thread, or not owned yet).
     *
     * @throws IOException if the pool cannot lend that many buffers, or {@code groupId} is taken ({@code EEXIST})
     */
    @Override
    public BufferRing createBufferRing(int groupId, BufferPool pool, int count, int bufferSize) throws IOException {
        checkUsable();
        NioBufferRing existing = rings.get(groupId);
        if (existing != null) {
            throw new IOException("buffer group " + groupId + " already exists on this loop (EEXIST)");
        }
        NioBufferRing ring = new NioBufferRing(this, groupId, pool, count, bufferSize);
        rings.put(groupId, ring);
        return ring;
    }

    void forgetRing(NioBufferRing ring) {
        rings.remove(ring.groupId(), ring);
        for (int bid = 0; bid < ring.bufferCount(); bid++) {
            views.unpin(ring.buffer(bid));
        }
    }

    /** A ring's buffers are sent from as often as they are received into: their views are made once. */
    void pinView(MemorySegment segment, ByteBuffer view) {
        views.pin(segment, view);
    }

    // ---------------------------------------------------------------- preparing operations

    @Override
    public long nop(int handler, int tag) {
        return record(Op.NOP, handler, tag).userData;
    }

    @Override
    public long accept(int handler, int tag, int listenSocket, boolean multishot) {
        checkSocket(listenSocket);
        NioOp op = record(Op.ACCEPT, handler, tag);
        op.socket = listenSocket;
        op.multishot = multishot;
        return op.userData;
    }

    @Override
    public long connect(int handler, int tag, int socket, InetSocketAddress remote) {
        checkSocket(socket);
        checkAddress(remote, "remote");
        NioOp op = record(Op.CONNECT, handler, tag);
        op.socket = socket;
        op.remote = remote;
        return op.userData;
    }

    @Override
    public long send(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int msgFlags) {
        checkSocket(socket);
        checkBuffer(buffer, offset, length);
        checkSendFlags(msgFlags);
        NioOp op = record(Op.SEND, handler, tag);
        prepareTransfer(op, socket, buffer, offset, length, (msgFlags & MsgFlags.WAITALL) != 0);
        return op.userData;
    }

    /** A plain send (NIO always copies), followed by a NOTIF completion reporting {@link CqeFlags#ZC_COPIED}. */
    @Override
    public long sendZeroCopy(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int fixedBufferIndex, int msgFlags) {
        checkSocket(socket);
        checkBuffer(buffer, offset, length);
        checkFixedBuffer(fixedBufferIndex, buffer, offset, length);
        checkSendFlags(msgFlags);
        NioOp op = record(Op.SEND_ZC, handler, tag);
        prepareTransfer(op, socket, buffer, offset, length, false);
        return op.userData;
    }

    @Override
    public long recv(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int msgFlags) {
        checkSocket(socket);
        checkReceiveBuffer(buffer, offset, length);
        checkReceiveFlags(msgFlags);
        NioOp op = record(Op.RECV, handler, tag);
        prepareTransfer(op, socket, buffer, offset, length, (msgFlags & MsgFlags.WAITALL) != 0);
        return op.userData;
    }

    /** A gathered write: {@link StagedWriter} moves the pieces without a gathering {@code SocketChannel.write}. */
    @Override
    public long sendMessage(int handler, int tag, int socket, GatherList message, int msgFlags) {
        return recordSendMessage(Op.SENDMSG, handler, tag, socket, message, msgFlags);
    }

    /** {@link #sendMessage}, then a NOTIF completion reporting {@link CqeFlags#ZC_COPIED}, as sendZeroCopy. */
    @Override
    public long sendMessageZeroCopy(int handler, int tag, int socket, GatherList message, int msgFlags) {
        return recordSendMessage(Op.SENDMSG_ZC, handler, tag, socket, message, msgFlags);
    }

    private long recordSendMessage(int kind, int handler, int tag, int socket, GatherList message, int msgFlags) {
        checkSocket(socket);
        checkMessage(message);
        checkSendFlags(msgFlags);
        NioOp op = record(kind, handler, tag);
        int count = message.count();
        if (op.pieces == null) {
            op.pieces = new GatherPieces();
        }
        op.pieces.reset(count);
        for (int i = 0; i < count; i++) {
            op.pieces.add(message.buffer(i), message.offset(i), (int) message.length(i));
        }
        op.socket = socket;
        op.length = (int) message.byteSize();
        op.waitAll = (msgFlags & MsgFlags.WAITALL) != 0;
        return op.userData;
    }

    /**
     * {@inheritDoc}
     *
     * <p>As the kernel picks a provided buffer when it issues the receive: an empty ring then completes
     * {@code -ENOBUFS} at once; otherwise the buffer is taken when data is read.
     */
    @Override
    public long recvSelect(int handler, int tag, int socket, BufferRing ring) {
        NioOp op = recordRingReceive(Op.RECV_SELECT, handler, tag, socket, ring);
        op.length = op.ring.bufferSize();
        return op.userData;
    }

    /**
     * A receive into buffers of {@code ring}, armed from now to its final completion as on io_uring: the
     * ring refuses to close meanwhile.
     */
    private NioOp recordRingReceive(int kind, int handler, int tag, int socket, BufferRing ring) {
        checkSocket(socket);
        NioBufferRing nioRing = (NioBufferRing) checkRing(ring);
        NioOp op = record(kind, handler, tag);
        op.socket = socket;
        op.ring = nioRing;
        nioRing.armed();
        op.armed = true;
        return op;
    }

    @Override
    public void linkNext() {
        checkUsable();
        NioOp last = recordedTail;
        if (last == null) {
            throw new IllegalStateException("linkNext must directly follow the operation it chains, before the next poll()");
        }
        if (last.kind == Op.LINK_TIMEOUT) {
            throw new IllegalStateException("linkNext cannot follow a linkTimeout (it ends its chain)");
        }
        last.linkToNext = true;
    }

    @Override
    public long recvMultishot(int handler, int tag, int socket, BufferRing ring) {
        NioOp op = recordRingReceive(Op.RECV_MULTISHOT, handler, tag, socket, ring);
        op.multishot = true;
        return op.userData;
    }

    @Override
    public long shutdown(int handler, int tag, int socket, int how) {
        checkSocket(socket);
        checkShutdownHow(how);
        NioOp op = record(Op.SHUTDOWN, handler, tag);
        op.socket = socket;
        op.argument = how;
        return op.userData;
    }

    @Override
    public long close(int handler, int tag, int socket) {
        checkSocket(socket);
        NioOp op = record(Op.CLOSE, handler, tag);
        op.socket = socket;
        return op.userData;
    }

    @Override
    public long timeout(int handler, int tag, long nanos) {
        checkNanos(nanos);
        NioOp op = record(Op.TIMEOUT, handler, tag);
        op.nanos = Math.min(nanos, MAX_TIMEOUT_NANOS);
        return op.userData;
    }

    /**
     * @throws IllegalStateException if no operation was prepared since the last poll, or the one before
     *                               is a link timeout or bounded already
     */
    @Override
    public long linkTimeout(int handler, int tag, long nanos) {
        checkNanos(nanos);
        checkUsable();
        NioOp target = recordedTail;
        if (target == null) {
            throw new IllegalStateException("linkTimeout must directly follow the operation it bounds, prepared"
                    + " since the last poll");
        }
        if (target.kind == Op.LINK_TIMEOUT || target.linkTimeout != null) {
            throw new IllegalStateException("the previous operation is a link timeout or already has one");
        }
        NioOp op = record(Op.LINK_TIMEOUT, handler, tag);
        op.nanos = Math.min(nanos, MAX_TIMEOUT_NANOS);
        op.linked = target;
        target.linkTimeout = op;
        return op.userData;
    }

    @Override
    public long cancel(int handler, int tag, long target) {
        NioOp op = record(Op.CANCEL, handler, tag);
        op.argument = target;
        return op.userData;
    }

    private NioOp record(int kind, int handler, int tag) {
        checkUsable();
        checkHandler(handler);
        NioOp op = pool.take();
        op.kind = kind;
        op.userData = UserData.pack(handler, kind, tag);
        op.state = NioOp.RECORDED;
        operationStarted(op.userData);
        if (recordedTail == null) {
            recordedHead = op;
        } else {
            recordedTail.next = op;
        }
        recordedTail = op;
        return op;
    }

    private void prepareTransfer(NioOp op, int socket, MemorySegment buffer, long offset, int length,
            boolean waitAll) {
        op.socket = socket;
        op.length = length;
        op.waitAll = waitAll;
        ByteBuffer whole;
        try {
            whole = views.view(buffer);
            if (whole != null) {
                op.view = whole;
                op.viewBase = (int) offset;
            } else {
                op.view = buffer.asSlice(offset, length).asByteBuffer();
                op.viewBase = 0;
            }
        } catch (UnsupportedOperationException e) {
            // Recorded already: give the slot back before reporting the caller's mistake.
            unrecordTail(op);
            throw new IllegalArgumentException("segment cannot be viewed as a ByteBuffer: " + buffer, e);
        }
    }

    private void unrecordTail(NioOp op) {
        NioOp previous = null;
        for (NioOp at = recordedHead; at != op; at = at.next) {
            previous = at;
        }
        recordedTail = previous;
        if (previous == null) {
            recordedHead = null;
        } else {
            previous.next = null;
        }
        operationDropped(op.userData);
        pool.give(op);
    }

    // ---------------------------------------------------------------- driving the loop

    @Override
    public int poll(long timeoutNanos) {
        checkUsable();
        beginPoll();
        try {
            int handled = runTasks();
            if (closed) {
                return handled;
            }
            startRecorded();
            select(handled > 0 ? 0 : timeoutNanos);
            progressReady();
            runner.fireTimers();
            return handled + dispatchCompletions();
        } finally {
            endPoll();
        }
    }

    /** Queues {@code task} and wakes the loop. */
    @Override
    public void execute(Runnable task) {
        offerTask(task);
        if (!inLoop()) {
            wakeup();
        }
    }

    /** Wakes a blocking select; a wake-up already on its way makes this call free (no system call). */
    @Override
    public void wakeup() {
        if ((int) WAKEUP_PENDING.compareAndExchange(this, 0, 1) == 0) { // volatile CAS: one waker pays the syscall
            selector.wakeup();
        }
    }

    @Override
    public int pending() {
        return pool.live();
    }

    /**
     * Completes every pending operation with {@code -ECANCELED} (a zero-copy send also gets its NOTIF) and
     * dispatches those completions; then closes every channel still open in the socket table (the
     * sockets are the user's, but nothing may leak once the loop that drives them is gone), every buffer
     * ring still open (returning its buffers), and the selector. Takes no longer than the handlers do:
     * NIO has nothing in flight in a kernel to wait for. Calling it again does nothing.
     */
    @Override
    public void close() {
        claimOwner();
        if (closed || closing) {
            return;
        }
        closing = true;
        try {
            closeTasks();
            // Completions left undispatched by a handler that threw out of poll() go first, in order.
            for (int round = 0; round < CLOSE_ROUNDS && (pool.live() > 0 || cq.undispatched() > 0); round++) {
                cancelEverything();
                dispatchCompletions();
            }
        } finally {
            // Also when a handler threw: nothing may stay armed on a buffer ring that is closed below.
            if (pool.live() > 0) {
                LOG.log(System.Logger.Level.WARNING, "zcnet: NIO loop closed with " + pool.live()
                        + " operations that handlers kept preparing during close; dropped");
                recordedHead = null;
                recordedTail = null;
                pool.dropAll();
            }
            closed = true;
            retireCounters();
            closeBookkeeping(true);
            releaseResources();
        }
    }

    private void releaseResources() {
        sockets.closeAll();
        for (NioBufferRing ring : rings.values().toArray(new NioBufferRing[0])) {
            ring.close();
        }
        views.clear();
        try {
            selector.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "zcnet: closing the NIO selector failed", e);
        }
    }

    // ---------------------------------------------------------------- starting recorded operations

    private void startRecorded() {
        int started = 0;
        NioOp op;
        while ((op = recordedHead) != null) {
            recordedHead = op.next;
            if (recordedHead == null) {
                recordedTail = null;
            }
            op.next = null;
            started++;
            if (op.linkToNext) {
                recordedHead = runner.holdChain(op, recordedHead);
                if (recordedHead == null) {
                    recordedTail = null;
                }
            }
            op.state = NioOp.STARTED;
            runner.start(op);
        }
        if (started > 0) {
            counters.submitted(started);
        }
    }

    // ---------------------------------------------------------------- select and progress

    private void select(long timeoutNanos) {
        readyCount = 0;
        try {
            if (cq.undispatched() > 0 || hasTasks() || timeoutNanos == 0) {
                selector.selectNow(collectReady);
            } else {
                long wait = timeoutNanos < 0 ? Long.MAX_VALUE : timeoutNanos;
                if (!timers.isEmpty()) {
                    wait = Math.min(wait, Math.max(0, timers.peekDeadline() - System.nanoTime()));
                }
                if (wait == 0) {
                    selector.selectNow(collectReady);
                } else if (wait == Long.MAX_VALUE) {
                    selector.select(collectReady);
                } else {
                    // Rounded up (waking before the deadline would only spin once more), without the
                    // overflow of (wait + 999_999) for timeouts near Long.MAX_VALUE.
                    selector.select(collectReady, Math.ceilDiv(wait, 1_000_000L));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("NIO selector failed", e);
        }
        counters.syscall();
        if ((int) WAKEUP_PENDING.getAndSet(this, 0) != 0) { // volatile: later wakeup() calls must signal again
            counters.wakeup();
        }
    }

    /** Selector callback: only notes the key, so no channel is registered or closed inside select. */
    private void collectReady(SelectionKey key) {
        if (readyCount == readyKeys.length) {
            readyKeys = Arrays.copyOf(readyKeys, readyCount * 2);
            readyOps = Arrays.copyOf(readyOps, readyCount * 2);
        }
        readyKeys[readyCount] = key;
        readyOps[readyCount++] = key.readyOps();
    }

    private void progressReady() {
        for (int i = 0; i < readyCount; i++) {
            SelectionKey key = readyKeys[i];
            readyKeys[i] = null;
            NioSocket s = (NioSocket) key.attachment();
            if (s.key != key || !key.isValid()) {
                continue;
            }
            runner.serveReady(s, readyOps[i]);
        }
        readyCount = 0;
    }

    // ---------------------------------------------------------------- completions

    private int dispatchCompletions() {
        int dispatched = 0;
        try {
            // Reads the count each time: close() from a handler appends and dispatches through here too.
            while (cq.undispatched() > 0) {
                int i = cq.next();
                dispatched++;
                dispatch(cq.userData(i), cq.result(i), cq.flags(i));
            }
            cq.clear();
        } finally {
            if (dispatched > 0) {
                counters.completed(dispatched);
            }
        }
        return dispatched;
    }

    private void cancelEverything() {
        NioOp op;
        while ((op = recordedHead) != null) {
            recordedHead = op.next;
            if (recordedHead == null) {
                recordedTail = null;
            }
            op.next = null;
            op.state = NioOp.STARTED;
            runner.finish(op, -Errno.ECANCELED);
        }
        runner.cancelStarted();
    }

    // ---------------------------------------------------------------- pools and tables

    private NioSocket openSocket(int handle) throws IOException {
        checkSocket(handle);
        NioSocket s = sockets.lookup(handle);
        if (s == null) {
            throw notOpen(handle);
        }
        return s;
    }

    // ---------------------------------------------------------------- argument checks

    @Override
    protected void checkOpenOwner() {
        checkUsable();
    }

    private void checkUsable() {
        claimOwner();
        if (closed) {
            throw new IllegalStateException("event loop is closed");
        }
    }

    private static ProtocolFamily family(InetSocketAddress address) {
        return address.getAddress() instanceof Inet6Address ? StandardProtocolFamily.INET6
                : StandardProtocolFamily.INET;
    }

    /** Lists what is pending, for debugging. */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("NioEventLoop[pending=").append(pool.live())
                .append(", timers=").append(timers.size())
                .append(", undispatched=").append(cq.undispatched());
        sockets.describe(text);
        return text.append(closed ? ", closed]" : "]").toString();
    }
}
