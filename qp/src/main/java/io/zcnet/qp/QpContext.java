package io.zcnet.qp;

import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.ring.EngineKind;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopJob;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What queue pairs share, the {@code ibv_context} and protection domain of zcnet: one or more event loops, each on a
 * thread of its own (io_uring, or the NIO engine where io_uring cannot run), and the memory registry that hands out
 * local and remote keys, one for the context, so a key is valid whichever loop a queue pair lives on. A queue pair
 * lives on one loop for its whole life: its engine, subflows and timers run there. A listener accepts on the first
 * loop and hands each new queue pair to the loop with the fewest, and each further subflow of one to that queue
 * pair's loop; {@link #connect} picks the loop with the fewest too, or the one it is given. With one loop (the
 * default) every queue pair runs on it; {@link #open(EventLoopConfig, int)} gives more, to use more cores.
 *
 * <p>Thread-safe: any thread may register memory, listen, connect and close; of a context
 * {@linkplain #openOnCallingThread opened on the calling thread}, only that thread, which drives its loop.
 */
public final class QpContext implements AutoCloseable {
    /** The most loop threads a context runs. */
    public static final int MAX_LOOPS = 64;

    /** Its loops, each a thread of its own (one driven by the opening thread: {@link #openOnCallingThread}). */
    private final QpLoop[] loops;
    /** Keys valid on every loop: the registry is thread-safe, lookups take no lock. */
    private final MemoryRegistry registry = new MemoryRegistry(MemoryRegistry.MAX_CAPACITY);
    /**
     * Queue pairs this context accepted, by token, for joins: a JOIN accepted on one loop finds here the queue pair
     * it names, and so the loop it must go to. Any thread.
     */
    private final Map<Long, QpEngine> byToken = new ConcurrentHashMap<>();
    private final List<QpListener> listeners = new ArrayList<>();
    /** Where the balancing looks first, so loops of equal load take turns. */
    private final AtomicInteger nextLoop = new AtomicInteger();
    private volatile boolean closed;

    private QpContext(EventLoopConfig loopConfig, int count, boolean adopt) throws IOException {
        if (count < 1 || count > MAX_LOOPS) {
            throw new IllegalArgumentException("loops " + count + " outside 1.." + MAX_LOOPS);
        }
        if (count > 1 && loopConfig.idle() != null) {
            throw new IllegalArgumentException("a busy-polling context (EventLoopConfig.withIdle) runs one loop: an idle"
                    + " strategy serves one thread; open one context per busy-polling thread instead");
        }
        this.loops = new QpLoop[count];
        try {
            for (int i = 0; i < count; i++) {
                loops[i] = new QpLoop(this, i, loopConfig, adopt, count == 1 ? "zcnet-qp" : "zcnet-qp-" + i);
            }
        } catch (IOException | RuntimeException e) {
            for (QpLoop l : loops) {
                if (l != null) {
                    l.stop();
                }
            }
            throw e;
        }
    }

    /**
     * {@return a context on the best engine this machine has ({@code -Dzcnet.engine=nio|uring} overrides)}
     *
     * @throws IOException if no engine can start its event loop
     */
    public static QpContext open() throws IOException {
        return new QpContext(EventLoopConfig.defaults(), 1, false);
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
        return new QpContext(EventLoopConfig.defaults().withEngine(engine), 1, false);
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
        return new QpContext(loopConfig, 1, false);
    }

    /**
     * {@return a context of {@code loops} loop threads, each built as {@code loopConfig} says} Queue pairs spread over
     * them (a listener's and {@link #connect}'s go to the loop with the fewest), each living on one; the memory
     * registry is the context's, so keys are valid on every loop. More loops than cores only add wake-ups and
     * hand-offs: a loop is worth its thread where queue pairs keep a core busy each.
     *
     * @param loopConfig how to build each loop; one that busy-polls ({@link EventLoopConfig#withIdle}) takes one loop
     * @param loops      how many loop threads, 1..{@link #MAX_LOOPS}
     * @throws IOException              if that engine cannot run here, with the reason
     * @throws IllegalArgumentException if {@code loops} is outside 1..{@link #MAX_LOOPS}, or several busy-poll
     */
    public static QpContext open(EventLoopConfig loopConfig, int loops) throws IOException {
        if (loopConfig == null) {
            throw new IllegalArgumentException("loop configuration is null");
        }
        return new QpContext(loopConfig, loops, false);
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
        return new QpContext(loopConfig, 1, true);
    }

    /**
     * {@return why a loop thread of this context stopped (the first loop's that did), or null while they all run}
     * Once it is set, every queue pair of that loop is in ERROR with {@link WorkCompletion#FATAL_ERROR}, and calls
     * that need the loop throw an {@link IllegalStateException} naming it; the queue pairs of the other loops carry
     * on. Any thread.
     */
    public Throwable failure() {
        for (QpLoop l : loops) {
            Throwable died = l.failure();
            if (died != null) {
                return died;
            }
        }
        return null;
    }

    /** {@return how many loop threads this context runs} */
    public int loops() {
        return loops.length;
    }

    /**
     * {@return the queue pairs living on each loop now, or on their way there (handshakes routed to it), by loop
     * index} What the listener and {@link #connect} balance by. Any thread.
     */
    public int[] loopLoads() {
        int[] loads = new int[loops.length];
        for (int i = 0; i < loops.length; i++) {
            loads[i] = loops[i].load();
        }
        return loads;
    }

    /**
     * {@return what this context holds now, summed over its loops: queue pairs by state, handshakes in progress, what
     * its listeners refused} A loop that died counts nothing (its queue pairs failed with it). Any thread but the
     * driver's own of a context opened on the calling thread; it asks each loop and waits.
     */
    public ContextStatistics statistics() {
        checkOpen();
        List<ContextStatistics> perLoop = new ArrayList<>(loops.length);
        for (QpLoop l : loops) {
            if (l.failure() != null) {
                continue; // its queue pairs failed with it, and it answers nothing more
            }
            try {
                perLoop.add(l.onLoop(l::statistics));
            } catch (IOException e) {
                throw new IllegalStateException("the loop did not answer: " + e.getMessage(), e);
            }
        }
        return ContextStatistics.of(perLoop, listeners);
    }

    /** {@return whether the thread that opened this context drives its loop ({@link #openOnCallingThread})} */
    public boolean isDrivenByCallingThread() {
        return loops[0].thread().isAdopted();
    }

    /** {@return whether the loop thread busy-polls rather than sleeping in the kernel when idle} */
    public boolean isBusyPolling() {
        return loops[0].thread().isBusyPolling();
    }

    /** {@return the engine the loops run on} */
    public EngineKind engine() {
        return loops[0].loop().engine();
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
        QpLoop accepting = loops[0];
        accepting.checkLoop();
        QpListener listener = accepting.onLoop(() -> new QpListener(this, accepting, address, settings));
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
        checkConnect(paths, config, shared);
        QpLoop home = shared.home();
        return connectOn(home != null ? home : leastLoaded(), paths, config, shared);
    }

    /**
     * {@link #connect(List, QpConfig, SharedQueues)} on loop {@code loop} of this context: the queue pair lives there,
     * and every further subflow of it connects from there.
     *
     * @param paths  the first opens the queue pair, each further one joins it as another subflow
     * @param config what this side asks for
     * @param shared the shared queues it uses instead of its own: they must be of loop {@code loop}
     * @param loop   the index of the loop it lives on, 0..{@link #loops()}-1
     * @return the queue pair, in RTS
     * @throws IOException              if the first subflow cannot be established within the handshake timeout
     * @throws IllegalArgumentException if there is no such loop, or the shared queues are of another
     */
    public QueuePair connect(List<SubflowPath> paths, QpConfig config, SharedQueues shared, int loop) throws IOException {
        checkConnect(paths, config, shared);
        QpLoop chosen = loop(loop);
        QpLoop home = shared.home();
        if (home != null && home != chosen) {
            throw new IllegalArgumentException("the shared queues are of loop " + home.index() + ", not " + loop
                    + ": a queue pair lives on its shared queues' loop");
        }
        return connectOn(chosen, paths, config, shared);
    }

    private void checkConnect(List<SubflowPath> paths, QpConfig config, SharedQueues shared) {
        checkOpen();
        checkDriver("connect()");
        if (paths == null || paths.isEmpty() || config == null || shared == null) {
            throw new IllegalArgumentException("at least one path, a config and shared queues (SharedQueues.NONE) are required");
        }
        if (paths.size() > config.maxSubflows()) {
            throw new IllegalArgumentException(paths.size() + " paths but at most " + config.maxSubflows() + " subflows");
        }
        shared.check(this, config);
    }

    private QueuePair connectOn(QpLoop home, List<SubflowPath> paths, QpConfig config, SharedQueues shared)
            throws IOException {
        home.checkLoop();
        home.claim();
        return home.connector().connect(paths, config, shared);
    }

    // ---------------------------------------------------------------- shared queues

    /**
     * Creates a completion queue many queue pairs of this context complete into (ibv_create_cq(3)), on its first
     * loop: the queue pairs that use it live there.
     *
     * @param depth the completions it holds, a power of two in 1..2^20
     * @return the queue; give it to queue pairs with {@link SharedQueues}
     */
    public SharedCompletionQueue createCompletionQueue(int depth) {
        return createCompletionQueue(depth, null);
    }

    /**
     * Creates a completion queue, on the context's first loop, that tells {@code channel} of its completions once armed
     * ({@link SharedCompletionQueue#requestNotification()}).
     *
     * @param depth   the completions it holds, a power of two in 1..2^20
     * @param channel where a thread waits for it, or null
     * @return the queue
     * @throws IllegalStateException if the channel serves as many queues as it can
     */
    public SharedCompletionQueue createCompletionQueue(int depth, CompletionChannel channel) {
        return createCompletionQueue(depth, channel, 0);
    }

    /**
     * Creates a completion queue of loop {@code loop}: it is written by that loop thread alone, so every queue pair
     * that completes into it lives on that loop (a listener's or a connect's given it goes there).
     *
     * @param depth   the completions it holds, a power of two in 1..2^20
     * @param channel where a thread waits for it, or null
     * @param loop    the index of its loop, 0..{@link #loops()}-1
     * @return the queue
     * @throws IllegalStateException if the channel serves as many queues as it can
     */
    public SharedCompletionQueue createCompletionQueue(int depth, CompletionChannel channel, int loop) {
        checkOpen();
        QpLoop home = loop(loop);
        checkDepth(depth, "completion queue");
        if (channel != null) {
            channel.attach();
        }
        try {
            return home.call(() -> new SharedCompletionQueue(home, depth, channel));
        } catch (RuntimeException e) {
            if (channel != null) {
                channel.detach();
            }
            throw e;
        }
    }

    /**
     * Creates a receive queue many queue pairs of this context take their receives from (ibv_create_srq(3)), on its
     * first loop (the queue pairs that use it live there); see
     * {@link SharedReceiveQueue} for how its receives become the peers' credits.
     *
     * @param depth        the receives it holds before they are lent, a power of two in 1..2^20
     * @param maxSge       the most scatter/gather elements of a receive, 1..{@link QpConfig#MAX_SGE}; each queue
     *                     pair's {@link QpConfig#maxReceiveSge()} must be at least this
     * @param perQueuePair the most receives lent to one queue pair at a time (its peer's credits), at least 1
     * @return the queue
     */
    public SharedReceiveQueue createSharedReceiveQueue(int depth, int maxSge, int perQueuePair) {
        return createSharedReceiveQueue(depth, maxSge, perQueuePair, 0);
    }

    /**
     * Creates a shared receive queue of loop {@code loop}: it lends from that loop thread alone, so every queue pair
     * that takes its receives from it lives on that loop.
     *
     * @param depth        the receives it holds before they are lent, a power of two in 1..2^20
     * @param maxSge       the most scatter/gather elements of a receive, 1..{@link QpConfig#MAX_SGE}
     * @param perQueuePair the most receives lent to one queue pair at a time, at least 1
     * @param loop         the index of its loop, 0..{@link #loops()}-1
     * @return the queue
     */
    public SharedReceiveQueue createSharedReceiveQueue(int depth, int maxSge, int perQueuePair, int loop) {
        checkOpen();
        QpLoop home = loop(loop);
        checkDepth(depth, "shared receive queue");
        if (maxSge < 1 || maxSge > QpConfig.MAX_SGE) {
            throw new IllegalArgumentException("maxSge " + maxSge + " outside 1.." + QpConfig.MAX_SGE);
        }
        if (perQueuePair < 1 || perQueuePair > depth) {
            throw new IllegalArgumentException("perQueuePair " + perQueuePair + " outside 1..depth (" + depth + ")");
        }
        return home.call(() -> new SharedReceiveQueue(home, depth, maxSge, perQueuePair));
    }

    private static void checkDepth(int depth, String what) {
        if (depth < 1 || depth > 1 << 20 || Integer.bitCount(depth) != 1) {
            throw new IllegalArgumentException(what + " depth " + depth + " must be a power of two in 1..2^20");
        }
    }

    /** {@return loop {@code index}} */
    private QpLoop loop(int index) {
        if (index < 0 || index >= loops.length) {
            throw new IllegalArgumentException("loop " + index + " outside 0.." + (loops.length - 1));
        }
        return loops[index];
    }

    /**
     * {@return the loop with the fewest queue pairs living there or on their way, ties taken in turn} The loads are
     * read one by one while other threads change them: two choices at once may both pick the same loop, which the
     * next choices even out.
     */
    QpLoop leastLoaded() {
        if (loops.length == 1) {
            return loops[0];
        }
        int start = Math.floorMod(nextLoop.getAndIncrement(), loops.length);
        QpLoop best = null;
        for (int i = 0; i < loops.length; i++) {
            QpLoop l = loops[(start + i) % loops.length];
            if (l.failure() == null && (best == null || l.load() < best.load())) {
                best = l;
            }
        }
        return best != null ? best : loops[start];
    }

    // ---------------------------------------------------------------- running on the loop

    /**
     * Runs {@code job} on this context's (first) loop thread, between two turns of the loop, and returns when it has
     * run. Inside the job the thread may post and poll the queue pairs of that loop and wait for them with
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
        runOnLoop(0, job);
    }

    /**
     * {@link #runOnLoop(LoopJob)} on loop {@code loop} of this context: the job may post and poll the queue pairs that
     * live there ({@link QueuePair#loop()}), and only those.
     *
     * @param loop the loop's index, 0 .. {@link #loops()} - 1
     * @param job the work; made once, it may be run many times
     * @throws Exception what {@code job} threw
     * @throws IllegalArgumentException if there is no such loop
     * @throws IllegalStateException if the context is closed or that loop's thread stopped
     */
    public void runOnLoop(int loop, LoopJob job) throws Exception {
        QpLoop l = loop(loop);
        checkOpen();
        l.thread().runDriving(job);
    }

    /**
     * Runs one turn of the calling thread's loop from inside a {@link #runOnLoop} job, or on the thread that drives a
     * context {@linkplain #openOnCallingThread opened on the calling thread}: waits up to {@code timeoutNanos} for
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
        QpLoop own = current();
        if (own == null) {
            throw new IllegalStateException("progress() runs the loop: call it inside a runOnLoop job, not on "
                    + Thread.currentThread().getName());
        }
        return own.loop().poll(timeoutNanos);
    }

    /**
     * Turns the calling thread's loop until every queue pair of it has handed the kernel all it was given: work
     * requests posted, their frames, acknowledgements owed. For the thread that drives the loop
     * ({@link #openOnCallingThread}, or a {@link #runOnLoop} job) before it stops calling for a while: what it posted
     * then still reaches the peers, whose calls may be waiting for it, as an MPI rank's eager sends are on the wire
     * when its call returns. Frames that flow control holds back leave once the peer's acknowledgements come, so
     * that can take a round trip, which the thread spends asleep in the kernel (or idling as
     * {@link EventLoopConfig#withIdle} says, when the context busy-polls). Completions are not waited for.
     *
     * @param timeoutNanos how long to try at most
     * @return true if everything was handed over; false if the time ran out first (a peer that stopped taking)
     * @throws IllegalStateException off the loop's thread, or from one of its handlers or tasks
     */
    public boolean flush(long timeoutNanos) {
        QpLoop own = current();
        if (own == null) {
            throw new IllegalStateException("flush() runs the loop: call it on the thread that drives it, not on "
                    + Thread.currentThread().getName());
        }
        return own.flush(System.nanoTime() + timeoutNanos);
    }

    /** {@return the loop whose thread is the caller, or null} */
    private QpLoop current() {
        for (QpLoop l : loops) {
            if (l.loop().inLoop()) {
                return l;
            }
        }
        return null;
    }

    /**
     * {@return whether a {@link #runOnLoop} job, or any other loop thread of this context, may touch {@code segment}:
     * false for a segment confined to another thread}
     *
     * @param segment the memory a job would read or write
     */
    public boolean loopCanAccess(MemorySegment segment) {
        for (QpLoop l : loops) {
            if (!segment.isAccessibleBy(l.thread().thread())) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------- for the loops and listeners

    /** {@return the heartbeat clock of the first loop: the one every queue pair of a one-loop context ticks on} */
    HeartbeatClock heartbeats() {
        return loops[0].heartbeats();
    }

    MemoryRegistry registry() {
        return registry;
    }

    /** A queue pair a listener accepted, on {@code home}, found by its token for joins from now on. Its loop thread. */
    QueuePair createAccepted(QpLoop home, Agreement agreement, QpConfig config, SharedQueues shared, long token,
            byte[] secret) {
        QueuePair qp = home.create(registry, agreement, config, shared, token, secret);
        byToken.put(token, qp.engine());
        return qp;
    }

    /** The queue pair a JOIN names, or null. Any thread; its state only on its own loop. */
    QpEngine findByToken(long token) {
        return byToken.get(token);
    }

    void forgetToken(QpEngine engine) {
        byToken.remove(engine.token(), engine);
    }

    /** Refuses a call that would wait for a loop nobody turns ({@link QpLoop#checkDriver}). */
    void checkDriver(String what) {
        loops[0].checkDriver(what);
    }

    /** Throws once closed, or once every loop died: a loop that dies fails its own queue pairs, not the context. */
    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("context is closed");
        }
        for (QpLoop l : loops) {
            if (l.failure() == null) {
                return;
            }
        }
        loops[0].checkLoop();
    }

    /**
     * Closes every listener and queue pair of this context (their peers see the connections end), stops
     * the loops and frees their pools. Regions stay registered in the closed registry; their memory is the
     * caller's. Every step is taken whatever the ones before it threw, so a failure leaves nothing behind;
     * the failure is thrown once all is freed. An interrupt cuts short only the wait for ending subflows
     * (their last frames may then be lost), and the interrupt status is kept. Idempotent: a later call does
     * nothing. Any thread; of a context {@linkplain #openOnCallingThread opened on the calling thread}, only that one.
     *
     * @throws IllegalStateException after freeing everything, if a step failed: a queue pair or listener did not
     *                               close, a loop did not answer or stop; the first failure is the cause, later
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
        // A loop thread that died was told once (logged, failure(), its queue pairs FATAL_ERROR): closing after it
        // frees what is left and says nothing more, and hands the dead loop nothing.
        for (QpLoop l : loops) {
            try {
                l.closeQueuePairs(!interrupted);
            } catch (InterruptedException e) {
                interrupted = true; // the closes are queued on the loop all the same; only their endings are cut short
            } catch (Exception e) {
                failure = firstOf(failure, e);
            }
        }
        byToken.clear();
        for (QpLoop l : loops) {
            try {
                l.stop();
            } catch (RuntimeException e) {
                failure = firstOf(failure, e);
            }
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
