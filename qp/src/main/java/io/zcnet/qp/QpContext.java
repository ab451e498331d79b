package io.zcnet.qp;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.framing.Icrc;
import io.zcnet.ring.BackoffWait;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoopThread;
import io.zcnet.ring.LoopIdle;
import io.zcnet.ring.LoopJob;
import io.zcnet.rx.ReceiveBuffers;
import io.zcnet.tx.SenderSpaces;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * What queue pairs share, the {@code ibv_context} and protection domain of zcnet: one event loop on a
 * thread of its own (io_uring, or the NIO engine where io_uring cannot run), the memory registry that
 * hands out local and remote keys, and the pool behind the loop's provided buffer ring. Every queue pair
 * of a context runs on its loop; use several contexts to use several cores.
 *
 * <p>Thread-safe: any thread may register memory, listen, connect and close; of a context
 * {@linkplain #openOnCallingThread opened on the calling thread}, only that thread, which drives its loop.
 */
public final class QpContext implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.zcnet.qp");
    /** Provided-buffer ring of the loop: the receive buffers small frames land in. */
    private static final int RING_BUFFERS = 256;
    private static final int RING_BUFFER_SIZE = 16 * 1024;
    private static final int RING_GROUP = 1;
    /** Idle receive buffers of each size the context keeps for the next lease. */
    private static final int RECEIVE_BUFFERS_IDLE = 16;
    /** How long {@link #close()} lets ending subflows finish before it stops the loop. */
    private static final Duration ENDINGS_WAIT = Duration.ofSeconds(2);
    /** Parks of that wait off the loop: short first, as endings on a fast path finish within a round trip. */
    private static final long ENDINGS_FIRST_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    private static final long ENDINGS_LAST_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** Longest single poll of a wait on the loop's own thread, so its deadline is looked at. */
    private static final long DRIVE_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final EventLoopThread thread;
    private final EventLoop loop;
    /** How the loop's thread idles when it busy-polls; null when it sleeps in the kernel instead. */
    private final LoopIdle idle;
    private final MemoryRegistry registry = new MemoryRegistry(MemoryRegistry.MAX_CAPACITY);
    private final BufferPool pool;
    private final BufferRing bufferRing;
    /** Handler of closes whose completion nothing waits for (a socket that could not be set up). */
    private final int closer;
    /** The initiating side of handshakes: the first subflow of a queue pair, and the joins of more. */
    private final Connector connector;
    /** The one timer every queue pair of the context ticks on. Loop thread. */
    private final HeartbeatClock heartbeats;
    /** The working memory of the subflows' senders, lent while they have something to send. Loop thread. */
    private final SenderSpaces senderSpaces;
    /** The receivers' carry and drain buffers and the queue pairs' deferred stores, lent while in use. Loop thread. */
    private final ReceiveBuffers receiveBuffers;
    /** The ICRC calculator of every queue pair's framers here: one per thread is enough. Loop thread. */
    private final Icrc icrc = new Icrc();
    /** Queue pairs this context accepted, by token, for joins. Loop thread only. */
    private final Map<Long, QpEngine> byToken = new HashMap<>();
    /**
     * Every queue pair of this context not yet closed, accepted or connected, each once. Loop thread only. A list,
     * walked by index: {@link #flush} looks at every one after each operation of a busy-polling rank, and an
     * iterator there is garbage whenever the JIT does not remove it.
     */
    private final List<QpEngine> liveQueuePairs = new ArrayList<>();
    private final List<QpListener> listeners = new ArrayList<>();
    private volatile boolean closed;
    /** Subflows ending gracefully (last frame leaving, the peer's FIN awaited). Loop thread only. */
    private int lingering;

    private QpContext(EventLoopConfig loopConfig, boolean adopt) throws IOException {
        this.pool = BufferPool.create(PoolConfig.of(new SizeClass(RING_BUFFER_SIZE, RING_BUFFERS)));
        EventLoopThread t = null;
        try {
            t = adopt ? EventLoopThread.adopt(loopConfig)
                    : EventLoopThread.start("zcnet-qp", loopConfig, this::onLoopFailure);
            EventLoop l = t.loop();
            this.bufferRing = t.call(() -> l.createBufferRing(RING_GROUP, pool, RING_BUFFERS, RING_BUFFER_SIZE));
            this.closer = t.call(() -> l.registerHandler((op, tag, result, flags) -> { }));
            this.heartbeats = t.call(() -> new HeartbeatClock(l));
            this.senderSpaces = t.call(() -> new SenderSpaces(Subflow.SMALL_SENDER, Subflow.SENDER, SenderSpaces.DEFAULT_MAX_IDLE));
            this.receiveBuffers = t.call(() -> new ReceiveBuffers(RECEIVE_BUFFERS_IDLE));
        } catch (Exception e) {
            if (t != null) {
                t.close();
            }
            pool.close();
            throw e instanceof IOException io ? io : new IOException("cannot start the context's event loop: " + e, e);
        }
        this.thread = t;
        this.loop = t.loop();
        this.connector = new Connector(this, loop, closer);
        this.idle = loopConfig.idle();
        if (adopt) {
            loop.poll(0); // the opening thread owns the loop from here on: inLoop() holds for it alone
        }
    }

    /**
     * {@return a context on the best engine this machine has ({@code -Dzcnet.engine=nio|uring} overrides)}
     *
     * @throws IOException if no engine can start its event loop
     */
    public static QpContext open() throws IOException {
        return new QpContext(EventLoopConfig.defaults(), false);
    }

    /**
     * {@return a context on the given engine}
     *
     * @param engine the engine to run on
     * @throws IOException if that engine cannot run here, with the reason
     */
    public static QpContext open(EventLoopConfig.Choice engine) throws IOException {
        if (engine == null) {
            throw new IllegalArgumentException("engine choice is null");
        }
        return new QpContext(EventLoopConfig.defaults().withEngine(engine), false);
    }

    /**
     * {@return a context whose loop is built as {@code loopConfig} says: its engine, queue sizes, and whether the
     * loop thread sleeps in the kernel when idle or busy-polls ({@link EventLoopConfig#withIdle})}
     * The idle strategy, if any, then serves this context's loop thread alone: give each context its own unless
     * it keeps no state ({@link io.zcnet.ring.LoopIdle#yielding()} keeps none).
     *
     * @param loopConfig how to build the context's event loop
     * @throws IOException if that engine cannot run here, with the reason
     */
    public static QpContext open(EventLoopConfig loopConfig) throws IOException {
        if (loopConfig == null) {
            throw new IllegalArgumentException("loop configuration is null");
        }
        return new QpContext(loopConfig, false);
    }

    /**
     * {@return a context with no loop thread: the calling thread opens the loop and drives it itself, as an MPI
     * progress engine or an Agrona {@code AgentInvoker} does}
     * Only this thread may then use the context and its queue pairs; the loop turns only while it is inside a call
     * that waits ({@link #connect}, {@link QpListener#accept}, {@link QueuePair#await}, {@link #progress}, the waits
     * of a {@link #runOnLoop} job, which runs at once). So every wait ends when the kernel wakes this one thread,
     * with no loop thread to wake first and none competing for the core: the lowest latency for request-response
     * and collective patterns, above all when busy-polling ({@link EventLoopConfig#withIdle}; the idle strategy
     * is then the caller's to apply between its polls).
     *
     * <p>Between such calls nothing moves: frames wait in the kernel, acknowledgements and heartbeats are not
     * sent, so a peer may declare this side's subflows silent. Give every queue pair of such a context a silence
     * timeout ({@link QpConfig#withTimeouts}) longer than the longest pause between this thread's calls, and
     * agree it with the peers (the shorter of the two sides' applies). Calls from other threads that would wait
     * for the loop are refused with an {@link IllegalStateException}; {@link #register} is for any thread.
     *
     * @param loopConfig how to build the loop
     * @throws IOException if that engine cannot run here, with the reason
     */
    public static QpContext openOnCallingThread(EventLoopConfig loopConfig) throws IOException {
        if (loopConfig == null) {
            throw new IllegalArgumentException("loop configuration is null");
        }
        return new QpContext(loopConfig, true);
    }

    /**
     * The loop thread is dying of {@code cause} (a fault that no queue pair could take on itself): on it, before
     * the loop closes, every queue pair fails with {@link WorkCompletion#FATAL_ERROR}, and the cause is logged,
     * once for the context rather than once per queue pair.
     */
    private void onLoopFailure(Throwable cause) {
        LOG.log(System.Logger.Level.ERROR, "zcnet: the event loop of a queue-pair context died; its "
                + liveQueuePairs.size() + " queue pairs fail with FATAL_ERROR", cause);
        for (QpEngine e : new ArrayList<>(liveQueuePairs)) {
            e.loopDied(cause);
        }
    }

    /**
     * {@return why this context's loop thread stopped, or null while it runs} Once it is set, every queue pair of the
     * context is in ERROR with {@link WorkCompletion#FATAL_ERROR}, and calls that need the loop throw an
     * {@link IllegalStateException} naming it. Any thread.
     */
    public Throwable failure() {
        return thread.failure();
    }

    /**
     * {@return what this context holds now: queue pairs by state, handshakes in progress, what its listeners refused}
     * Any thread but the driver's own of a context opened on the calling thread; it asks the loop and waits.
     */
    public ContextStatistics statistics() {
        checkOpen();
        try {
            return onLoop(() -> ContextStatistics.of(liveQueuePairs, listeners, senderSpaces, receiveBuffers));
        } catch (IOException e) {
            throw new IllegalStateException("the loop did not answer: " + e.getMessage(), e);
        }
    }

    /** {@return whether the thread that opened this context drives its loop ({@link #openOnCallingThread})} */
    public boolean isDrivenByCallingThread() {
        return thread.isAdopted();
    }

    /** {@return whether the loop thread busy-polls rather than sleeping in the kernel when idle} */
    public boolean isBusyPolling() {
        return thread.isBusyPolling();
    }

    /** {@return the engine the loop runs on} */
    public EngineKind engine() {
        return loop.engine();
    }

    // ---------------------------------------------------------------- memory

    /**
     * Registers {@code segment} (native memory whose scope any thread may use) with {@code access}
     * ({@link io.zcnet.buffer.Access} bits; local reads are always allowed). Its local key names it in work
     * requests and receives; its remote key, unguessable, is what a peer's WRITE or READ must name.
     *
     * @param segment the memory to register
     * @param access {@link io.zcnet.buffer.Access} bits
     * @return the region, with its keys
     * @throws IllegalArgumentException if the segment is not native, is confined to a thread, or the access
     *                                  bits are invalid
     */
    public MemoryRegion register(MemorySegment segment, int access) {
        checkOpen();
        return registry.register(segment, access);
    }

    /**
     * Deregisters a region: later uses of its keys are refused (a peer's WRITE gets REMOTE_ACCESS_ERROR).
     *
     * @param region a region this context registered
     * @throws IllegalStateException if the kernel may still be writing into it (a receive in flight)
     */
    public void deregister(MemoryRegion region) {
        registry.deregister(region);
    }

    // ---------------------------------------------------------------- connections

    /**
     * Listens on {@code address} (port 0: any free port) for queue pairs and their extra subflows.
     *
     * @param address where to listen
     * @param config what this side asks for in every handshake on it
     * @return the listener; it accepts until closed or until the context closes
     * @throws IOException if the address cannot be bound
     */
    public QpListener listen(InetSocketAddress address, QpConfig config) throws IOException {
        if (config == null) {
            throw new IllegalArgumentException("address and config are required");
        }
        return listen(address, ListenerConfig.of(config));
    }

    /**
     * Listens on {@code address} (port 0: any free port) for queue pairs and their extra subflows, with the
     * admission policy and bounds {@code settings} gives (a server meets strangers: {@link ListenerConfig}).
     *
     * @param address where to listen
     * @param settings what this side asks for in every handshake, who is admitted, and the bounds
     * @return the listener; it accepts until closed or until the context closes
     * @throws IOException if the address cannot be bound
     */
    public QpListener listen(InetSocketAddress address, ListenerConfig settings) throws IOException {
        checkOpen();
        if (address == null || settings == null) {
            throw new IllegalArgumentException("address and settings are required");
        }
        settings.sharedQueues().check(this, settings.queuePairs());
        QpListener listener = onLoop(() -> new QpListener(this, loop, address, settings));
        synchronized (listeners) {
            listeners.add(listener);
        }
        return listener;
    }

    /**
     * {@return {@link #connect(List, QpConfig)} with {@link QpConfig#subflows()} subflows to {@code remote}}
     *
     * @param remote the listener to connect to
     * @param config what this side asks for; {@link QpConfig#subflows()} connections are opened
     * @throws IOException if the first subflow cannot be established, with the reason
     */
    public QueuePair connect(InetSocketAddress remote, QpConfig config) throws IOException {
        return connect(remote, config, SharedQueues.NONE);
    }

    /**
     * {@return {@link #connect(List, QpConfig, SharedQueues)} with {@link QpConfig#subflows()} subflows to {@code remote}}
     *
     * @param remote the listener to connect to
     * @param config what this side asks for; {@link QpConfig#subflows()} connections are opened
     * @param shared the shared queues it uses instead of its own
     * @throws IOException if the first subflow cannot be established, with the reason
     */
    public QueuePair connect(InetSocketAddress remote, QpConfig config, SharedQueues shared) throws IOException {
        if (remote == null || config == null) {
            throw new IllegalArgumentException("remote and config are required");
        }
        List<SubflowPath> paths = new ArrayList<>();
        for (int i = 0; i < config.subflows(); i++) {
            paths.add(SubflowPath.to(remote));
        }
        return connect(paths, config, shared);
    }

    /**
     * Connects a queue pair: the first path opens it (handshake, parameters, RTR), every further path
     * joins it as another subflow. Returns once every path succeeded or failed; a failed extra path leaves
     * the queue pair with fewer subflows ({@link QueuePair#liveSubflows()}) and its reason in
     * {@link QueuePair#joinFailures()}; a failed first path throws.
     *
     * @param paths the first opens the queue pair, each further one joins it as another subflow
     * @param config what this side asks for
     * @return the queue pair, in RTS
     * @throws IOException if the first subflow cannot be established within the handshake timeout, with
     *                     the reason (refused, no listener, timed out)
     */
    public QueuePair connect(List<SubflowPath> paths, QpConfig config) throws IOException {
        return connect(paths, config, SharedQueues.NONE);
    }

    /**
     * {@link #connect(List, QpConfig)} for a queue pair that completes into or receives from shared queues of this
     * context ({@link SharedQueues}).
     *
     * @param paths  the first opens the queue pair, each further one joins it as another subflow
     * @param config what this side asks for
     * @param shared the shared queues it uses instead of its own
     * @return the queue pair, in RTS
     * @throws IOException if the first subflow cannot be established within the handshake timeout
     */
    public QueuePair connect(List<SubflowPath> paths, QpConfig config, SharedQueues shared) throws IOException {
        checkOpen();
        checkDriver("connect()");
        if (paths == null || paths.isEmpty() || config == null || shared == null) {
            throw new IllegalArgumentException("at least one path, a config and shared queues (SharedQueues.NONE) are required");
        }
        if (paths.size() > config.maxSubflows()) {
            throw new IllegalArgumentException(paths.size() + " paths but at most " + config.maxSubflows() + " subflows");
        }
        shared.check(this, config);
        return connector.connect(paths, config, shared);
    }

    // ---------------------------------------------------------------- shared queues

    /**
     * Creates a completion queue many queue pairs of this context complete into (ibv_create_cq(3)).
     *
     * @param depth the completions it holds, a power of two in 1..2^20
     * @return the queue; give it to queue pairs with {@link SharedQueues}
     */
    public SharedCompletionQueue createCompletionQueue(int depth) {
        return createCompletionQueue(depth, null);
    }

    /**
     * Creates a completion queue that tells {@code channel} of its completions once armed
     * ({@link SharedCompletionQueue#requestNotification()}).
     *
     * @param depth   the completions it holds, a power of two in 1..2^20
     * @param channel where a thread waits for it, or null
     * @return the queue
     * @throws IllegalStateException if the channel serves as many queues as it can
     */
    public SharedCompletionQueue createCompletionQueue(int depth, CompletionChannel channel) {
        checkOpen();
        checkDepth(depth, "completion queue");
        if (channel != null) {
            channel.attach();
        }
        try {
            return call(() -> new SharedCompletionQueue(this, depth, channel));
        } catch (RuntimeException e) {
            if (channel != null) {
                channel.detach();
            }
            throw e;
        }
    }

    /**
     * Creates a receive queue many queue pairs of this context take their receives from (ibv_create_srq(3)); see
     * {@link SharedReceiveQueue} for how its receives become the peers' credits.
     *
     * @param depth        the receives it holds before they are lent, a power of two in 1..2^20
     * @param maxSge       the most scatter/gather elements of a receive, 1..{@link QpConfig#MAX_SGE}; each queue
     *                     pair's {@link QpConfig#maxReceiveSge()} must be at least this
     * @param perQueuePair the most receives lent to one queue pair at a time (its peer's credits), at least 1
     * @return the queue
     */
    public SharedReceiveQueue createSharedReceiveQueue(int depth, int maxSge, int perQueuePair) {
        checkOpen();
        checkDepth(depth, "shared receive queue");
        if (maxSge < 1 || maxSge > QpConfig.MAX_SGE) {
            throw new IllegalArgumentException("maxSge " + maxSge + " outside 1.." + QpConfig.MAX_SGE);
        }
        if (perQueuePair < 1 || perQueuePair > depth) {
            throw new IllegalArgumentException("perQueuePair " + perQueuePair + " outside 1..depth (" + depth + ")");
        }
        return call(() -> new SharedReceiveQueue(this, depth, maxSge, perQueuePair));
    }

    private static void checkDepth(int depth, String what) {
        if (depth < 1 || depth > 1 << 20 || Integer.bitCount(depth) != 1) {
            throw new IllegalArgumentException(what + " depth " + depth + " must be a power of two in 1..2^20");
        }
    }

    /** Opens one more subflow of {@code qp} along {@code path}; completes with its index. */
    CompletableFuture<Integer> join(QueuePair qp, SubflowPath path) {
        return connector.join(qp, path);
    }

    /** A queue pair whose first subflow this side opened, once its handshake agreed {@code agreement}. Loop thread. */
    QueuePair createConnected(Agreement agreement, QpConfig config, SharedQueues shared, long token, byte[] secret) {
        QueuePair qp = new QueuePair(this, loop, registry, bufferRing, agreement, config, shared, token, secret);
        liveQueuePairs.add(qp.engine());
        return qp;
    }

    // ---------------------------------------------------------------- running on the loop

    /**
     * Runs {@code job} on this context's loop thread, between two turns of the loop, and returns when it has
     * run. Inside the job the thread may post and poll this context's queue pairs and wait for them with
     * {@link #progress(long)}, which runs the loop: each wait then ends when the kernel wakes this one thread,
     * instead of the loop thread waking the job's thread after it. For bounded work that waits on completions
     * many times in a row (a small collective's rounds, a burst of round trips); while it runs the loop does
     * nothing else, so it must not compute for long between its waits. Callers from several threads take
     * turns; the job may touch only memory the loop thread may access (not a segment confined to the
     * caller). Allocates nothing.
     *
     * @param job the work; made once, it may be run many times
     * @throws Exception what {@code job} threw
     * @throws IllegalStateException if the context is closed or its loop thread stopped
     */
    public void runOnLoop(LoopJob job) throws Exception {
        checkOpen();
        thread.runDriving(job);
    }

    /**
     * Runs one turn of the loop from inside a {@link #runOnLoop} job, or on the thread that drives a context
     * {@linkplain #openOnCallingThread opened on the calling thread}: waits up to {@code timeoutNanos} for
     * completions (none if work is already queued, such as a post's), then handles them, so the queue pairs'
     * completion rings hold what arrived when it returns.
     *
     * @param timeoutNanos how long to wait for a completion: 0 not at all
     * @return how many completions and tasks the turn handled
     * @throws IllegalStateException off the loop thread, or from a handler or task of the loop
     * @throws IllegalArgumentException if {@code timeoutNanos} is negative
     */
    public int progress(long timeoutNanos) {
        if (timeoutNanos < 0) {
            throw new IllegalArgumentException("timeoutNanos " + timeoutNanos + " is negative");
        }
        if (!loop.inLoop()) {
            throw new IllegalStateException("progress() runs the loop: call it inside a runOnLoop job, not on "
                    + Thread.currentThread().getName());
        }
        return loop.poll(timeoutNanos);
    }

    /**
     * On the thread that owns the loop, turns it until {@code done} or the deadline: whoever waits there is the only
     * one who can make the awaited thing happen.
     */
    void drive(BooleanSupplier done, long deadlineNanos) {
        while (!done.getAsBoolean()) {
            if (!turn(deadlineNanos)) {
                return;
            }
        }
    }

    /** One turn of the loop on its own thread, waiting at most until the deadline; false once it has passed. */
    boolean turn(long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        loop.poll(Math.min(left, DRIVE_SLICE_NANOS));
        return true;
    }

    /**
     * Turns the loop until every queue pair of this context has handed the kernel all it was given: work requests
     * posted, their frames, acknowledgements owed. For the thread that drives the loop ({@link #openOnCallingThread},
     * or a {@link #runOnLoop} job) before it stops calling for a while: what it posted then still reaches the peers,
     * whose calls may be waiting for it, as an MPI rank's eager sends are on the wire when its call returns. Frames
     * that flow control holds back leave once the peer's acknowledgements come, so that can take a round trip,
     * which the thread spends asleep in the kernel (or idling as {@link EventLoopConfig#withIdle} says, when the
     * context busy-polls). Completions are not waited for.
     *
     * @param timeoutNanos how long to try at most
     * @return true if everything was handed over; false if the time ran out first (a peer that stopped taking)
     * @throws IllegalStateException off the loop's thread, or from one of its handlers or tasks
     */
    public boolean flush(long timeoutNanos) {
        if (!loop.inLoop()) {
            throw new IllegalStateException("flush() runs the loop: call it on the thread that drives it, not on "
                    + Thread.currentThread().getName());
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            // A turn that handled nothing prepared nothing: what was prepared before it has been submitted.
            int handled = loop.poll(0);
            if (handled == 0 && !loop.hasTasks() && !anyUnsent()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            if (handled == 0) {
                // What is left waits for the peer (acknowledgements, credits) or the kernel (a send in flight),
                // and either comes as a completion: wait for it as the loop would, not by spinning until then.
                if (idle != null) {
                    idle.idle(0);
                } else {
                    turn(deadline);
                }
            }
        }
    }

    private boolean anyUnsent() {
        for (int i = 0; i < liveQueuePairs.size(); i++) {
            if (liveQueuePairs.get(i).hasUnsent()) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return whether a {@link #runOnLoop} job may touch {@code segment}: false for a segment confined to
     * another thread}
     *
     * @param segment the memory a job would read or write
     */
    public boolean loopCanAccess(MemorySegment segment) {
        return segment.isAccessibleBy(thread.thread());
    }

    // ---------------------------------------------------------------- for listeners (loop thread)

    QueuePair createAccepted(Agreement agreement, QpConfig config, SharedQueues shared, long token, byte[] secret) {
        QueuePair qp = new QueuePair(this, loop, registry, bufferRing, agreement, config, shared, token, secret);
        byToken.put(token, qp.engine());
        liveQueuePairs.add(qp.engine());
        return qp;
    }

    HeartbeatClock heartbeats() {
        return heartbeats;
    }

    SenderSpaces senderSpaces() {
        return senderSpaces;
    }

    ReceiveBuffers receiveBuffers() {
        return receiveBuffers;
    }

    Icrc icrc() {
        return icrc;
    }

    QpEngine findByToken(long token) {
        return byToken.get(token);
    }

    void lingerStarted() {
        lingering++;
    }

    void lingerEnded() {
        lingering--;
    }

    void forget(QpEngine engine) {
        byToken.remove(engine.token(), engine);
        liveQueuePairs.remove(engine);
    }

    /**
     * Gives subflows that are ending a bounded time to let their last frames reach the peer (each is bounded
     * by its queue pair's silence timeout too), so closing a context right after a queue pair loses no final
     * ACKNOWLEDGE.
     *
     * @throws InterruptedException if the calling thread is interrupted: the endings are cut short
     * @throws Exception            what kept the loop from answering
     */
    private void awaitEndings() throws Exception {
        long deadline = System.nanoTime() + ENDINGS_WAIT.toNanos();
        if (loop.inLoop()) {
            drive(() -> lingering == 0, deadline);
            return;
        }
        BackoffWait wait = new BackoffWait(0, 0, ENDINGS_FIRST_PARK_NANOS, ENDINGS_LAST_PARK_NANOS);
        while (thread.call(() -> lingering) > 0 && System.nanoTime() < deadline) {
            if (Thread.interrupted()) { // a park returns at once while the status is set: the wait would spin
                throw new InterruptedException("interrupted while subflows were ending");
            }
            wait.pause();
        }
    }

    EventLoop loop() {
        return loop;
    }

    /**
     * Runs {@code task} on the loop thread and waits for it, unless the loop died (which failed everything the task
     * could touch): what a close of a shared object does. What the task throws is thrown here.
     */
    void callUnlessDead(Runnable task) {
        if (failure() == null) {
            call(() -> {
                task.run();
                return null;
            });
        }
    }

    /** Runs {@code task} on the loop thread and waits for it (control path). */
    <T> T call(java.util.function.Supplier<T> task) {
        if (loop.inLoop()) {
            return task.get();
        }
        checkDriver("this control path");
        checkLoop();
        CompletableFuture<T> f = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                f.complete(task.get());
            } catch (RuntimeException | Error e) {
                f.completeExceptionally(e);
            }
        });
        // An interrupt does not cut the wait short: the control path (a close above all) must finish, and
        // the loop answers within the bound; the caller's interrupt status is kept for it to act on.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                } catch (Exception e) {
                    throw new IllegalStateException("event loop did not answer: " + e, e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private <T> T onLoop(java.util.concurrent.Callable<T> task) throws IOException {
        try {
            return thread.call(task);
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    /**
     * Refuses a call from another thread than the one that drives the loop of a context
     * {@linkplain #openOnCallingThread opened on the calling thread}: it would wait for a loop nobody turns.
     */
    void checkDriver(String what) {
        if (thread.isAdopted() && !loop.inLoop()) {
            throw new IllegalStateException(what + " on " + Thread.currentThread().getName() + ": this context's loop is"
                    + " driven by " + thread.thread().getName() + ", which opened it; call from that thread");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("context is closed");
        }
        checkLoop();
    }

    /** Throws when the loop thread died: nothing waiting for it would ever be answered. */
    void checkLoop() {
        Throwable died = thread.failure();
        if (died != null) {
            throw new IllegalStateException("the context's event loop died: " + died, died);
        }
    }

    /**
     * Closes every listener and queue pair of this context (their peers see the connections end), stops
     * the loop and frees the pool. Regions stay registered in the closed registry; their memory is the
     * caller's. Every step is taken whatever the ones before it threw, so a failure leaves nothing behind;
     * the failure is thrown once all is freed. An interrupt cuts short only the wait for ending subflows
     * (their last frames may then be lost), and the interrupt status is kept. Idempotent: a later call does
     * nothing. Any thread; of a context {@linkplain #openOnCallingThread opened on the calling thread}, only that one.
     *
     * @throws IllegalStateException after freeing everything, if a step failed: a queue pair or listener did not
     *                               close, the loop did not answer or stop; the first failure is the cause, later
     *                               ones are suppressed. A loop thread that had died is not such a step: it was
     *                               told already ({@link #failure()})
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        checkDriver("close()");
        closed = true;
        // Closing must finish whatever the caller's interrupt says; the caller gets it back at the end.
        boolean interrupted = Thread.interrupted();
        Exception failure = null;
        List<QpListener> open;
        synchronized (listeners) {
            open = new ArrayList<>(listeners);
        }
        for (QpListener l : open) {
            try {
                l.close();
            } catch (RuntimeException e) {
                failure = firstOf(failure, e);
            }
        }
        // A loop thread that died was told once (logged, failure(), every queue pair FATAL_ERROR): closing after
        // it frees what is left and says nothing more, and hands the dead loop nothing.
        if (thread.failure() == null && thread.isAlive()) {
            try {
                thread.call(() -> {
                    for (QpEngine e : new ArrayList<>(liveQueuePairs)) {
                        e.close();
                    }
                    liveQueuePairs.clear();
                    byToken.clear();
                    senderSpaces.close(); // idle ones now; those still lent to ending subflows when they come back
                    receiveBuffers.close();
                    return null;
                });
                if (!interrupted) {
                    awaitEndings();
                }
            } catch (InterruptedException e) {
                interrupted = true; // the closes are queued on the loop all the same; only their endings are cut short
            } catch (Exception e) {
                failure = firstOf(failure, e);
            }
        }
        try {
            thread.close();
        } catch (RuntimeException e) {
            failure = firstOf(failure, e);
        }
        try {
            pool.close();
        } catch (RuntimeException e) {
            failure = firstOf(failure, e);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (failure != null) {
            throw new IllegalStateException("the context is closed, but not cleanly: " + failure.getMessage(), failure);
        }
    }

    /** The failure to report: the first one, which carries the later ones as suppressed. */
    private static Exception firstOf(Exception first, Exception next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
