package io.zcnet.ring.nio;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.EngineFeatures;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopCounters;
import io.zcnet.ring.Op;
import io.zcnet.ring.UserData;

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
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
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
 *     {@code BUFFER | bid << 16 | MORE}, plus {@link CqeFlags#SOCK_NONEMPTY} when the next read of the same
 *     round found more data; at most 32 buffers per socket per round ({@code MULTISHOT_MAX_RETRY});
 *     EOF is result 0 without MORE and without a buffer; an empty ring is {@code -ENOBUFS} without MORE
 *     with the data left in the socket.</li>
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
 * {@code SHUT_RD}); a socket whose connect failed is closed by the JDK, so later operations on it
 * complete {@code -EBADF} (Linux lets the socket be connected again).
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
    /** {@code io_uring/net.c}: how many times a multishot receive loops before yielding to others. */
    private static final int MULTISHOT_MAX_RETRY = 32;
    /** Accepts per listener per readiness event, so one busy listener cannot starve other sockets. */
    private static final int MAX_ACCEPTS_PER_ROUND = 64;
    /** Rounds of cancel-and-dispatch {@link #close()} gives handlers that prepare new work meanwhile. */
    private static final int CLOSE_ROUNDS = 16;
    /** Cap on a timeout's duration (~146 years) so that {@code nanoTime() + nanos} cannot wrap. */
    private static final long MAX_TIMEOUT_NANOS = Long.MAX_VALUE >>> 1;
    /** A read or write would block: the operation stays queued. Never a valid result. */
    private static final int BLOCKED = Integer.MIN_VALUE;
    private static final int VIEW_CACHE_ENTRIES = 64;
    private static final VarHandle WAKEUP_PENDING;

    static {
        try {
            WAKEUP_PENDING = MethodHandles.lookup().findVarHandle(NioEventLoop.class, "wakeupPending", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final LoopCounters counters = new LoopCounters();
    private final EngineFeatures features;
    private final Selector selector;
    private final Consumer<SelectionKey> collectReady = this::collectReady;
    private final TimerHeap timers;
    private final ViewCache views = new ViewCache(VIEW_CACHE_ENTRIES);
    /** Buffer groups by id: control path only. */
    private final Map<Integer, NioBufferRing> rings = new HashMap<>();

    private NioOp[] ops;
    private int opCount;
    private int[] freeOps;
    private int freeOpCount;
    /** Operations recorded or started and not finally completed. */
    private int live;
    private NioOp recordedHead;
    private NioOp recordedTail;

    private NioSocket[] sockets = new NioSocket[64];
    private int socketCount;
    private int[] freeSockets = new int[64];
    private int freeSocketCount;

    private SelectionKey[] readyKeys = new SelectionKey[64];
    private int[] readyOps = new int[64];
    private int readyCount;

    /** The completion queue: posted in order, dispatched in order at the end of each poll. */
    private long[] cqUserData;
    private int[] cqResult;
    private int[] cqFlags;
    private int cqCount;
    private int cqDispatched;

    private MemoryRegion[] fixedBuffers;
    /** 1 while a wake-up is on its way to the selector: later {@link #wakeup()} calls may skip theirs. */
    private volatile int wakeupPending;
    private volatile boolean closed;
    private boolean closing;

    private NioEventLoop(EventLoopConfig config, Selector selector) {
        super(config);
        this.selector = selector;
        this.ops = new NioOp[config.sqEntries()];
        this.freeOps = new int[config.sqEntries()];
        this.timers = new TimerHeap(config.sqEntries());
        this.cqUserData = new long[config.cqEntries()];
        this.cqResult = new int[config.cqEntries()];
        this.cqFlags = new int[config.cqEntries()];
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
        if (config == null) {
            throw new IllegalArgumentException("config is null");
        }
        return new NioEventLoop(config, Selector.open());
    }

    @Override
    public EngineKind engine() {
        return EngineKind.NIO;
    }

    @Override
    public EngineFeatures features() {
        return features;
    }

    @Override
    public LoopCounters counters() {
        return counters;
    }

    // ---------------------------------------------------------------- control path

    /** Opens a listening socket with {@code SO_REUSEADDR}; a backlog of 0 lets the JDK choose. */
    @Override
    public int listen(InetSocketAddress address, int backlog) throws IOException {
        checkUsable();
        requireAddress(address, "address");
        if (backlog < 0) {
            throw new IllegalArgumentException("backlog must be >= 0, got " + backlog);
        }
        ServerSocketChannel channel = ServerSocketChannel.open(family(address));
        try {
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.bind(address, backlog);
            return addSocket(channel, channel, null);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public int socket(InetSocketAddress address) throws IOException {
        checkUsable();
        requireAddress(address, "address");
        SocketChannel channel = SocketChannel.open(family(address));
        try {
            return addSocket(channel, null, channel);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
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
        if (sendBytes < 0 || receiveBytes < 0) {
            throw new IllegalArgumentException("buffer sizes must be >= 0 (0 = unchanged), got send " + sendBytes
                    + ", receive " + receiveBytes);
        }
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

    /**
     * Numbers the regions 0..n-1 (sets each {@link MemoryRegion#fixedBufferIndex(int)}) and does nothing
     * else: NIO has no fixed buffers. As {@code IORING_REGISTER_BUFFERS}, one registration per loop.
     *
     * @throws IOException if regions were registered already ({@code EBUSY})
     */
    @Override
    public void registerFixedBuffers(MemoryRegion... regions) throws IOException {
        checkUsable();
        if (regions == null || regions.length == 0) {
            throw new IllegalArgumentException("no regions given");
        }
        for (int i = 0; i < regions.length; i++) {
            if (regions[i] == null) {
                throw new IllegalArgumentException("region " + i + " is null");
            }
            if (!regions[i].isValid()) {
                throw new IllegalArgumentException("region " + i + " is deregistered");
            }
        }
        if (fixedBuffers != null) {
            throw new IOException("fixed buffers are already registered on this loop (EBUSY)");
        }
        fixedBuffers = regions.clone();
        for (int i = 0; i < fixedBuffers.length; i++) {
            fixedBuffers[i].fixedBufferIndex(i);
        }
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
        NioBufferRing ring = NioBufferRing.create(this, groupId, pool, count, bufferSize);
        rings.put(groupId, ring);
        return ring;
    }

    void forgetRing(NioBufferRing ring) {
        rings.remove(ring.groupId(), ring);
    }

    // ---------------------------------------------------------------- preparing operations

    @Override
    public long nop(int handler, int tag) {
        return record(Op.NOP, handler, tag).userData;
    }

    @Override
    public long accept(int handler, int tag, int listenSocket, boolean multishot) {
        requireHandle(listenSocket);
        NioOp op = record(Op.ACCEPT, handler, tag);
        op.socket = listenSocket;
        op.multishot = multishot;
        return op.userData;
    }

    @Override
    public long connect(int handler, int tag, int socket, InetSocketAddress remote) {
        requireHandle(socket);
        requireAddress(remote, "remote");
        NioOp op = record(Op.CONNECT, handler, tag);
        op.socket = socket;
        op.remote = remote;
        return op.userData;
    }

    @Override
    public long send(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            boolean waitAll) {
        requireHandle(socket);
        requireRange(buffer, offset, length);
        NioOp op = record(Op.SEND, handler, tag);
        prepareTransfer(op, socket, buffer, offset, length, waitAll);
        return op.userData;
    }

    /** A plain send (NIO always copies), followed by a NOTIF completion reporting {@link CqeFlags#ZC_COPIED}. */
    @Override
    public long sendZeroCopy(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            int fixedBufferIndex) {
        requireHandle(socket);
        requireRange(buffer, offset, length);
        requireFixedBuffer(fixedBufferIndex, buffer, offset, length);
        NioOp op = record(Op.SEND_ZC, handler, tag);
        prepareTransfer(op, socket, buffer, offset, length, false);
        return op.userData;
    }

    @Override
    public long recv(int handler, int tag, int socket, MemorySegment buffer, long offset, int length,
            boolean waitAll) {
        requireHandle(socket);
        requireRange(buffer, offset, length);
        if (buffer.isReadOnly()) {
            throw new IllegalArgumentException("cannot receive into a read-only segment");
        }
        NioOp op = record(Op.RECV, handler, tag);
        prepareTransfer(op, socket, buffer, offset, length, waitAll);
        return op.userData;
    }

    @Override
    public long recvMultishot(int handler, int tag, int socket, BufferRing ring) {
        requireHandle(socket);
        if (!(ring instanceof NioBufferRing nioRing) || !nioRing.belongsTo(this)) {
            throw new IllegalArgumentException("ring " + ring + " was not created by this loop");
        }
        if (nioRing.isClosed()) {
            throw new IllegalArgumentException("buffer group " + nioRing.groupId() + " is closed");
        }
        NioOp op = record(Op.RECV_MULTISHOT, handler, tag);
        op.socket = socket;
        op.ring = nioRing;
        op.multishot = true;
        return op.userData;
    }

    @Override
    public long shutdown(int handler, int tag, int socket, int how) {
        requireHandle(socket);
        if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR) {
            throw new IllegalArgumentException("how must be SHUT_RD (0), SHUT_WR (1) or SHUT_RDWR (2), got " + how);
        }
        NioOp op = record(Op.SHUTDOWN, handler, tag);
        op.socket = socket;
        op.argument = how;
        return op.userData;
    }

    @Override
    public long close(int handler, int tag, int socket) {
        requireHandle(socket);
        NioOp op = record(Op.CLOSE, handler, tag);
        op.socket = socket;
        return op.userData;
    }

    @Override
    public long timeout(int handler, int tag, long nanos) {
        requireNanos(nanos);
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
        requireNanos(nanos);
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
        if (handler < 0 || handler >= UserData.MAX_HANDLERS) {
            throw new IllegalArgumentException("handler id must be in [0, " + UserData.MAX_HANDLERS + "), got "
                    + handler);
        }
        NioOp op = allocateOp();
        op.kind = kind;
        op.userData = UserData.pack(handler, kind, tag);
        op.state = NioOp.RECORDED;
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
        freeOp(op);
    }

    // ---------------------------------------------------------------- driving the loop

    @Override
    public int poll(long timeoutNanos) {
        checkUsable();
        int handled = runTasks();
        if (closed) {
            return handled;
        }
        startRecorded();
        select(handled > 0 ? 0 : timeoutNanos);
        progressReady();
        fireTimers();
        return handled + dispatchCompletions();
    }

    /** Queues {@code task} and wakes the loop. */
    @Override
    public void execute(Runnable task) {
        if (closed) {
            throw new RejectedExecutionException("event loop is closed");
        }
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
        return live;
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
            for (int round = 0; round < CLOSE_ROUNDS && live > 0; round++) {
                cancelEverything();
                dispatchCompletions();
            }
            if (live > 0) {
                LOG.log(System.Logger.Level.WARNING, "zcnet: NIO loop closed with " + live
                        + " operations that handlers kept preparing during close; dropped");
                dropEverything();
            }
        } finally {
            closed = true;
            releaseResources();
        }
    }

    private void releaseResources() {
        for (int handle = 0; handle < socketCount; handle++) {
            NioSocket s = sockets[handle];
            if (s != null && s.isOpen()) {
                closeChannel(s);
                s.reset();
            }
        }
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
            op.state = NioOp.STARTED;
            started++;
            start(op);
        }
        if (started > 0) {
            counters.submitted(started);
        }
    }

    private void start(NioOp op) {
        switch (op.kind) {
            case Op.NOP -> finish(op, 0);
            case Op.ACCEPT -> startAccept(op);
            case Op.CONNECT -> startConnect(op);
            case Op.SEND, Op.SEND_ZC -> startSend(op);
            case Op.RECV -> startRecv(op);
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
        NioSocket s = lookup(op.socket);
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

    private void startSend(NioOp op) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        if (s.listener != null || !(s.connecting || s.stream.isConnected())) {
            finish(op, -Errno.EPIPE); // tcp_sendmsg: sk_stream_wait_connect gives EPIPE when not connecting
            return;
        }
        if (!s.connecting && s.head(NioSocket.SENDS) == null) {
            int result = write(s, op);
            if (result != BLOCKED) {
                finish(op, result);
                return;
            }
        }
        s.append(NioSocket.SENDS, op);
        updateInterest(s);
    }

    private void startRecv(NioOp op) {
        NioSocket s = socketOf(op);
        if (s == null) {
            return;
        }
        if (s.listener != null || !(s.connecting || s.stream.isConnected())) {
            finish(op, -Errno.ENOTCONN);
            return;
        }
        if (!s.connecting && s.head(NioSocket.RECVS) == null) {
            int result = read(s, op);
            if (result != BLOCKED) {
                finish(op, result);
                return;
            }
        }
        s.append(NioSocket.RECVS, op);
        updateInterest(s);
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
        if (op.ring.isClosed()) {
            counters.noBuffers();
            finish(op, -Errno.ENOBUFS); // the group is gone: buffer selection finds nothing
            return;
        }
        op.ring.armed();
        op.armed = true;
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
            if (how != SHUT_WR) {
                s.stream.shutdownInput();
            }
            if (how != SHUT_RD) {
                s.stream.shutdownOutput();
            }
        } catch (IOException e) {
            finish(op, -ErrnoMapper.errno(e));
            return;
        }
        finish(op, 0);
        if (how != SHUT_WR) {
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
        int result = closeChannel(s);
        s.reset();
        freeSocket(s.handle);
        finish(op, result);
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
        for (int id = 0; id < opCount; id++) {
            NioOp candidate = ops[id];
            if (candidate.state == NioOp.STARTED && candidate != op && candidate.userData == target
                    && candidate.kind != Op.LINK_TIMEOUT) {
                cancelOp(candidate);
                finish(op, 0);
                return;
            }
        }
        finish(op, -Errno.ENOENT);
    }

    // ---------------------------------------------------------------- select and progress

    private void select(long timeoutNanos) {
        readyCount = 0;
        try {
            if (cqCount > cqDispatched || hasTasks() || timeoutNanos == 0) {
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
                    // Rounded up: waking before the deadline would only spin once more.
                    selector.select(collectReady, (wait + 999_999) / 1_000_000);
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
            int ready = readyOps[i];
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
        readyCount = 0;
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
                post(op.userData, handle, CqeFlags.MORE);
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
        return addSocket(accepted, null, accepted);
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
            finish(op, result);
        }
        if (s.multishot != null) {
            serveMultishot(s);
        }
    }

    /**
     * Fills ring buffers while data is there, up to {@link #MULTISHOT_MAX_RETRY} of them. A buffer is taken
     * from the ring only when a read put data in it.
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
                finish(op, -ErrnoMapper.errno(e));
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
                cqFlags[previous] |= CqeFlags.SOCK_NONEMPTY;
            }
            ring.commit();
            previous = post(op.userData, n, CqeFlags.BUFFER | bid << CqeFlags.BUFFER_SHIFT | CqeFlags.MORE);
            if (n < ring.bufferSize()) {
                return;
            }
        }
    }

    /** One send step: the final result, or {@link #BLOCKED} when the socket's buffer is full. */
    private int write(NioSocket s, NioOp op) {
        if (op.length == 0) {
            return 0;
        }
        ByteBuffer view = op.view;
        try {
            while (true) {
                view.limit(op.viewBase + op.length).position(op.viewBase + op.done);
                counters.syscall();
                int n = s.stream.write(view);
                if (n == 0) {
                    return BLOCKED;
                }
                op.done += n;
                if (!op.waitAll || op.done == op.length) {
                    return op.done;
                }
            }
        } catch (ClosedChannelException e) {
            // Still open means SHUT_WR: the kernel's answer to a send after shutdown is EPIPE.
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
            return partialOr(op, ErrnoMapper.errno(e));
        } catch (IllegalStateException e) {
            return partialOr(op, Errno.EFAULT); // the segment's arena was closed under the operation
        }
    }

    /** As the kernel's {@code io_send}/{@code io_recv}: bytes already moved win over a later error. */
    private static int partialOr(NioOp op, int errno) {
        return op.done > 0 ? op.done : -errno;
    }

    private void fireTimers() {
        if (timers.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        while (!timers.isEmpty() && timers.peekDeadline() - now <= 0) {
            NioOp op = ops[timers.poll()];
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

    // ---------------------------------------------------------------- completions

    /** Appends one completion to the CQ and returns its index. */
    private int post(long userData, int result, int flags) {
        if (cqCount == cqUserData.length) {
            int capacity = cqCount * 2;
            cqUserData = Arrays.copyOf(cqUserData, capacity);
            cqResult = Arrays.copyOf(cqResult, capacity);
            cqFlags = Arrays.copyOf(cqFlags, capacity);
        }
        int index = cqCount++;
        cqUserData[index] = userData;
        cqResult[index] = result;
        cqFlags[index] = flags;
        return index;
    }

    /** Posts an operation's final completion(s), resolves its link timeout and returns it to the pool. */
    private void finish(NioOp op, int result) {
        if (op.kind == Op.SEND_ZC) {
            // io_sendrecv_fail and io_send_zc set MORE whenever a notifier exists, errors included.
            post(op.userData, result, CqeFlags.MORE);
            post(op.userData, CqeFlags.ZC_COPIED, CqeFlags.NOTIF);
            counters.zeroCopyCopied();
        } else {
            post(op.userData, result, 0);
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
        freeOp(op);
    }

    /** Takes a started operation off whatever it waits on and completes it as cancelled. */
    private void cancelOp(NioOp op) {
        if (op.kind == Op.TIMEOUT || op.kind == Op.LINK_TIMEOUT) {
            timers.remove(op.id);
            finish(op, -Errno.ECANCELED);
            return;
        }
        NioSocket s = lookup(op.socket);
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

    private void cancelEverything() {
        NioOp op;
        while ((op = recordedHead) != null) {
            recordedHead = op.next;
            if (recordedHead == null) {
                recordedTail = null;
            }
            op.next = null;
            op.state = NioOp.STARTED;
            finish(op, -Errno.ECANCELED);
        }
        for (int id = 0; id < opCount; id++) {
            if (ops[id].state == NioOp.STARTED) {
                cancelOp(ops[id]);
            }
        }
    }

    /** Frees every operation without a completion: only for handlers that never stop re-arming in close(). */
    private void dropEverything() {
        recordedHead = null;
        recordedTail = null;
        for (int id = 0; id < opCount; id++) {
            NioOp op = ops[id];
            if (op.state != NioOp.FREE) {
                if (op.armed) {
                    op.ring.disarmed();
                }
                freeOp(op);
            }
        }
    }

    private int dispatchCompletions() {
        int dispatched = 0;
        try {
            // Reads cqCount each time: close() from a handler appends and dispatches through here too.
            while (cqDispatched < cqCount) {
                int i = cqDispatched++;
                dispatched++;
                dispatch(cqUserData[i], cqResult[i], cqFlags[i]);
            }
            cqCount = 0;
            cqDispatched = 0;
        } finally {
            if (dispatched > 0) {
                counters.completed(dispatched);
            }
        }
        return dispatched;
    }

    // ---------------------------------------------------------------- pools and tables

    private NioOp allocateOp() {
        NioOp op;
        if (freeOpCount > 0) {
            op = ops[freeOps[--freeOpCount]];
        } else {
            if (opCount == ops.length) {
                ops = Arrays.copyOf(ops, opCount * 2);
                freeOps = Arrays.copyOf(freeOps, opCount * 2);
            }
            op = new NioOp(opCount);
            ops[opCount++] = op;
        }
        live++;
        return op;
    }

    private void freeOp(NioOp op) {
        op.clear();
        freeOps[freeOpCount++] = op.id;
        live--;
    }

    private int addSocket(SelectableChannel channel, ServerSocketChannel listener, SocketChannel stream)
            throws IOException {
        channel.configureBlocking(false);
        int handle;
        if (freeSocketCount > 0) {
            handle = freeSockets[--freeSocketCount];
        } else {
            if (socketCount == sockets.length) {
                sockets = Arrays.copyOf(sockets, socketCount * 2);
            }
            handle = socketCount++;
        }
        NioSocket s = sockets[handle];
        if (s == null) {
            s = new NioSocket(handle);
            sockets[handle] = s;
        }
        try {
            s.key = channel.register(selector, 0, s);
        } catch (IOException | RuntimeException e) {
            freeSocket(handle);
            throw e;
        }
        s.open(listener, stream);
        return handle;
    }

    private void freeSocket(int handle) {
        if (freeSocketCount == freeSockets.length) {
            freeSockets = Arrays.copyOf(freeSockets, freeSocketCount * 2);
        }
        freeSockets[freeSocketCount++] = handle;
    }

    private NioSocket lookup(int handle) {
        if (handle < 0 || handle >= socketCount) {
            return null;
        }
        NioSocket s = sockets[handle];
        return s != null && s.isOpen() ? s : null;
    }

    private NioSocket openSocket(int handle) throws IOException {
        requireHandle(handle);
        NioSocket s = lookup(handle);
        if (s == null) {
            throw new IOException("socket " + handle + " is not open on this loop (EBADF)");
        }
        return s;
    }

    /** Closes the channel behind {@code s}: 0, or {@code -errno} if the close itself failed. */
    private static int closeChannel(NioSocket s) {
        if (s.key != null) {
            s.key.cancel();
        }
        try {
            s.channel.close();
            return 0;
        } catch (IOException e) {
            return -ErrnoMapper.errno(e);
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "zcnet: closing a refused accepted channel failed", e);
        }
    }

    // ---------------------------------------------------------------- argument checks

    private void checkUsable() {
        claimOwner();
        if (closed) {
            throw new IllegalStateException("event loop is closed");
        }
    }

    private static void requireHandle(int socket) {
        if (socket < 0) {
            throw new IllegalArgumentException("socket handle must be >= 0, got " + socket);
        }
    }

    private static void requireNanos(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("nanos must be >= 0, got " + nanos);
        }
    }

    private static void requireAddress(InetSocketAddress address, String name) {
        if (address == null) {
            throw new IllegalArgumentException(name + " is null");
        }
        if (address.isUnresolved()) {
            throw new IllegalArgumentException(name + " " + address + " is unresolved");
        }
    }

    private static void requireRange(MemorySegment buffer, long offset, int length) {
        if (buffer == null) {
            throw new IllegalArgumentException("buffer is null");
        }
        if (offset < 0 || length < 0 || offset > buffer.byteSize() - length) {
            throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length
                    + ") is outside the segment of " + buffer.byteSize() + " bytes");
        }
    }

    private void requireFixedBuffer(int index, MemorySegment buffer, long offset, int length) {
        if (index == MemoryRegion.NO_FIXED_BUFFER) {
            return;
        }
        int registered = fixedBuffers == null ? 0 : fixedBuffers.length;
        if (index < 0 || index >= registered) {
            throw new IllegalArgumentException("fixed buffer index " + index + " is not registered (" + registered
                    + " fixed buffers)");
        }
        MemorySegment region = fixedBuffers[index].segment();
        long start = buffer.address() + offset;
        if (!buffer.isNative() || start < region.address()
                || start + length > region.address() + region.byteSize()) {
            throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length
                    + ") of the segment is outside fixed buffer " + index);
        }
    }

    private static ProtocolFamily family(InetSocketAddress address) {
        return address.getAddress() instanceof Inet6Address ? StandardProtocolFamily.INET6
                : StandardProtocolFamily.INET;
    }

    /** Lists what is pending, for debugging. */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("NioEventLoop[pending=").append(live)
                .append(", timers=").append(timers.size())
                .append(", undispatched=").append(cqCount - cqDispatched);
        for (int handle = 0; handle < socketCount; handle++) {
            NioSocket s = sockets[handle];
            if (s != null && s.isOpen()) {
                text.append(", ").append(s);
            }
        }
        return text.append(closed ? ", closed]" : "]").toString();
    }
}
