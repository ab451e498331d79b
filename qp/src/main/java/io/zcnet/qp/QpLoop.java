package io.zcnet.qp;

import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.framing.Icrc;
import io.zcnet.ring.BackoffWait;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoopThread;
import io.zcnet.ring.LoopIdle;
import io.zcnet.rx.ReceiveBuffers;
import io.zcnet.tx.SenderSpaces;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * One loop thread of a {@link QpContext} and everything its queue pairs share that only that thread may touch: the
 * provided buffer ring and its pool, the heartbeat clock, the ICRC calculator, the senders' spaces and the
 * receivers' buffers, the handshakes it initiates ({@link Connector}) and the queue pairs that live on it. A queue
 * pair lives on one loop for its whole life; only the context's memory registry, its token map and its listeners'
 * bounds are shared by the loops.
 *
 * <p>Threads: {@link #load}, {@link #failure}, {@link #call} and {@link #execute} any thread; the rest its loop thread.
 */
final class QpLoop {
    private static final System.Logger LOG = System.getLogger("io.zcnet.qp");
    /** Provided-buffer ring of the loop: the receive buffers small frames land in. */
    private static final int RING_BUFFERS = 256;
    private static final int RING_BUFFER_SIZE = 16 * 1024;
    private static final int RING_GROUP = 1;
    /** Idle receive buffers of each size the loop keeps for the next lease. */
    private static final int RECEIVE_BUFFERS_IDLE = 16;
    /** How long a close lets ending subflows finish before it stops the loop. */
    private static final Duration ENDINGS_WAIT = Duration.ofSeconds(2);
    /** Parks of that wait off the loop: short first, as endings on a fast path finish within a round trip. */
    private static final long ENDINGS_FIRST_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    private static final long ENDINGS_LAST_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** Longest single poll of a wait on the loop's own thread, so its deadline is looked at. */
    private static final long DRIVE_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final QpContext context;
    private final int index;
    private final EventLoopThread thread;
    private final EventLoop loop;
    /** How the loop's thread idles when it busy-polls; null when it sleeps in the kernel instead. */
    private final LoopIdle idle;
    private final BufferPool pool;
    private final BufferRing bufferRing;
    /** Handler of closes whose completion nothing waits for (a socket that could not be set up). */
    private final int closer;
    /** The initiating side of handshakes: the first subflow of a queue pair, and the joins of more. */
    private final Connector connector;
    /** The one timer every queue pair of this loop ticks on. Loop thread. */
    private final HeartbeatClock heartbeats;
    /** The one timer that bounds every handshake running here. Loop thread. */
    private final HandshakeDeadlines handshakeDeadlines;
    /** The working memory of the subflows' senders, lent while they have something to send. Loop thread. */
    private final SenderSpaces senderSpaces;
    /** The receivers' carry and drain buffers and the queue pairs' deferred stores, lent while in use. Loop thread. */
    private final ReceiveBuffers receiveBuffers;
    /** The ICRC calculator of every queue pair's framers here: one per thread is enough. Loop thread. */
    private final Icrc icrc = new Icrc();
    /**
     * Every queue pair of this loop not yet closed, each once. Loop thread only. A list, walked by index:
     * {@link QpContext#flush} looks at every one after each operation of a busy-polling rank, and an iterator there
     * is garbage whenever the JIT does not remove it.
     */
    private final List<QpEngine> liveQueuePairs = new ArrayList<>();
    /**
     * Queue pairs of this loop not yet closed, and those on their way here (an OPEN routed here, a connect that chose
     * this loop): what the listener and connect balance by. Any thread.
     */
    private final AtomicInteger load = new AtomicInteger();
    /** Subflows ending gracefully (last frame leaving, the peer's FIN awaited). Loop thread only. */
    private int lingering;

    /** Starts loop {@code index} of {@code context} on a thread of its own, or on the calling one ({@code adopt}). */
    QpLoop(QpContext context, int index, EventLoopConfig loopConfig, boolean adopt, String threadName) throws IOException {
        this.context = context;
        this.index = index;
        this.pool = BufferPool.create(PoolConfig.of(new SizeClass(RING_BUFFER_SIZE, RING_BUFFERS)));
        EventLoopThread t = null;
        try {
            t = adopt ? EventLoopThread.adopt(loopConfig) : EventLoopThread.start(threadName, loopConfig, this::onLoopFailure);
            EventLoop l = t.loop();
            this.bufferRing = t.call(() -> l.createBufferRing(RING_GROUP, pool, RING_BUFFERS, RING_BUFFER_SIZE));
            this.closer = t.call(() -> l.registerHandler((op, tag, result, flags) -> { }));
            SenderSpaces spaces = t.call(() -> new SenderSpaces(Subflow.SMALL_SENDER, Subflow.SENDER,
                    SenderSpaces.DEFAULT_MAX_IDLE));
            this.senderSpaces = spaces;
            // The spaces are trimmed at every tick: a steady load keeps what it uses, a burst's memory goes back,
            // also after the last queue pair has gone.
            this.heartbeats = t.call(() -> new HeartbeatClock(l, () -> {
                spaces.trim();
                return spaces.aboveFloor();
            }));
            this.handshakeDeadlines = t.call(() -> new HandshakeDeadlines(l));
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
        this.connector = new Connector(context, this, closer);
        this.idle = loopConfig.idle();
        if (adopt) {
            loop.poll(0); // the opening thread owns the loop from here on: inLoop() holds for it alone
        }
    }

    /**
     * This loop thread is dying of {@code cause} (a fault that no queue pair could take on itself): on it, before the
     * loop closes, each of its queue pairs fails with {@link WorkCompletion#FATAL_ERROR} (those of the context's other
     * loops carry on), and the cause is logged, once for the loop rather than once per queue pair.
     */
    private void onLoopFailure(Throwable cause) {
        LOG.log(System.Logger.Level.ERROR, "zcnet: event loop " + index + " of a queue-pair context died; its "
                + liveQueuePairs.size() + " queue pairs fail with FATAL_ERROR", cause);
        for (QpEngine e : new ArrayList<>(liveQueuePairs)) {
            e.loopDied(cause);
        }
    }

    int index() {
        return index;
    }

    QpContext context() {
        return context;
    }

    EventLoop loop() {
        return loop;
    }

    EventLoopThread thread() {
        return thread;
    }

    Connector connector() {
        return connector;
    }

    HeartbeatClock heartbeats() {
        return heartbeats;
    }

    HandshakeDeadlines handshakeDeadlines() {
        return handshakeDeadlines;
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

    /** {@return why this loop thread stopped, or null while it runs} Any thread. */
    Throwable failure() {
        return thread.failure();
    }

    /** {@return the queue pairs living here or on their way} Any thread. */
    int load() {
        return load.get();
    }

    /** A queue pair is on its way here (an OPEN routed here, a connect): counted until it is created or given up. */
    void claim() {
        load.incrementAndGet();
    }

    /** A queue pair on its way here will not come (its handshake failed). */
    void unclaim() {
        load.decrementAndGet();
    }

    // ---------------------------------------------------------------- queue pairs (loop thread)

    /**
     * A queue pair on this loop, once a first subflow's handshake agreed {@code agreement}; the caller
     * {@linkplain #claim claimed} its place. Loop thread.
     */
    QueuePair create(MemoryRegistry registry, Agreement agreement, QpConfig config, SharedQueues shared, long token,
            byte[] secret) {
        QueuePair qp = new QueuePair(this, registry, bufferRing, agreement, config, shared, token, secret);
        liveQueuePairs.add(qp.engine());
        return qp;
    }

    /** A queue pair of this loop was closed. Loop thread. */
    void forget(QpEngine engine) {
        if (liveQueuePairs.remove(engine)) {
            load.decrementAndGet();
        }
        context.forgetToken(engine);
    }

    void lingerStarted() {
        lingering++;
    }

    void lingerEnded() {
        lingering--;
    }

    /** {@return what this loop holds now} Loop thread. */
    ContextStatistics statistics() {
        return ContextStatistics.ofLoop(liveQueuePairs, senderSpaces, receiveBuffers);
    }

    /** Whether a queue pair of this loop has work it has not handed the kernel yet. Loop thread. */
    boolean anyUnsent() {
        for (int i = 0; i < liveQueuePairs.size(); i++) {
            if (liveQueuePairs.get(i).hasUnsent()) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- running the loop

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

    /**
     * One turn of the loop on its own thread, waiting at most until the deadline; false once it has passed. A loop
     * that busy-polls looks without waiting and idles as configured: a wait in the kernel would cost the wake-up
     * busy polling is there to avoid (a queue pair's {@link QueuePair#await} on a rank driven by its caller paid
     * one per message).
     */
    boolean turn(long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            return false;
        }
        if (idle != null) {
            idle.idle(loop.poll(0));
        } else {
            loop.poll(Math.min(left, DRIVE_SLICE_NANOS));
        }
        return true;
    }

    /**
     * Turns the loop until every queue pair here has handed the kernel all it was given, or the deadline passes
     * ({@link QpContext#flush}). Loop thread.
     */
    boolean flush(long deadline) {
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

    /** Queues {@code task} on the loop thread. Any thread. */
    void execute(Runnable task) {
        loop.execute(task);
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

    /** {@link EventLoopThread#call}, its checked failures as an {@link IOException}. */
    <T> T onLoop(java.util.concurrent.Callable<T> task) throws IOException {
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
     * {@linkplain QpContext#openOnCallingThread opened on the calling thread}: it would wait for a loop nobody turns.
     */
    void checkDriver(String what) {
        if (thread.isAdopted() && !loop.inLoop()) {
            throw new IllegalStateException(what + " on " + Thread.currentThread().getName() + ": this context's loop is"
                    + " driven by " + thread.thread().getName() + ", which opened it; call from that thread");
        }
    }

    /** Throws when the loop thread died: nothing waiting for it would ever be answered. */
    void checkLoop() {
        Throwable died = thread.failure();
        if (died != null) {
            throw new IllegalStateException("the context's event loop " + (context.loops() > 1 ? index + " " : "")
                    + "died: " + died, died);
        }
    }

    // ---------------------------------------------------------------- closing

    /**
     * Closes every queue pair of this loop and frees its spaces, then gives ending subflows a bounded time to let
     * their last frames reach the peer (each is bounded by its queue pair's silence timeout too), so closing a
     * context right after a queue pair loses no final ACKNOWLEDGE. Nothing is asked of a loop that died.
     *
     * @param waitForEndings false when the caller was interrupted: the closes are queued, their endings not awaited
     * @throws InterruptedException if the calling thread is interrupted: the endings are cut short
     * @throws Exception            what kept the loop from answering
     */
    void closeQueuePairs(boolean waitForEndings) throws Exception {
        if (thread.failure() != null || !thread.isAlive()) {
            return;
        }
        thread.call(() -> {
            for (QpEngine e : new ArrayList<>(liveQueuePairs)) {
                e.close();
            }
            liveQueuePairs.clear();
            senderSpaces.close(); // idle ones now; those still lent to ending subflows when they come back
            receiveBuffers.close();
            return null;
        });
        if (waitForEndings) {
            awaitEndings();
        }
    }

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

    /** Stops the loop thread (closing what is left on it), then frees the ring's pool, whatever the first threw. */
    void stop() {
        try {
            thread.close();
        } finally {
            pool.close();
        }
    }

    @Override
    public String toString() {
        return "QpLoop[" + index + " load=" + load.get() + " " + loop.engine() + "]";
    }
}
