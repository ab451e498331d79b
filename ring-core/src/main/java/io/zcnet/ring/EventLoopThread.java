package io.zcnet.ring;

import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Runs one {@link EventLoop} on a thread of its own: the loop is created on that thread (so with
 * io_uring the thread is the single issuer from the start) and closed on it. Or, {@linkplain #adopt adopted},
 * on the thread that opened it, which then drives it itself whenever it waits, as an Agrona
 * {@code AgentInvoker} or an MPI progress engine does: no second thread, so no wake-up between them.
 *
 * <p>{@link #execute} and {@link #call} are for any thread; {@link #close} stops the loop, lets it
 * cancel what is in flight, and joins the thread within a bounded time. {@link #runDriving} lends the loop
 * thread to work that waits on the loop many times in a row, such as a small collective operation's rounds:
 * the work runs between two polls and polls the loop itself while it waits, so each of its waits ends when
 * the kernel wakes the loop thread, with no second thread to wake after it.
 */
public final class EventLoopThread implements AutoCloseable {
    /** How long a blocking loop sleeps in the kernel before it looks at its stop flag again. */
    private static final long BLOCKING_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /**
     * How long a start waits for the new thread to open its loop, a call for its task and a close for the thread
     * to end. A loop that cannot open says so at once (the thread's exception); only a thread that gets no CPU
     * waits this long, as on two cores with four JVMs starting at once, where 15 s was seen to run out.
     */
    private static final long JOIN_MILLIS = 60_000;
    /** How often a caller of {@link #runDriving} looks whether the loop thread is still alive. */
    private static final long JOB_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Spins of a caller of {@link #runDriving} before it parks: short jobs end without a park. */
    private static final int JOB_SPINS = 200;
    /**
     * A caller spins only while the jobs before took less than this: one that waits on the network (a
     * collective's rounds) would spin in vain, on a core the threads it waits for may need.
     */
    private static final long SHORT_JOB_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private final Thread thread;
    /** Whether {@link #thread} is the caller that {@linkplain #adopt adopted} the loop rather than a thread of ours. */
    private final boolean adopted;
    private final EventLoopConfig config;
    private final CompletableFuture<EventLoop> started = new CompletableFuture<>();
    private volatile boolean stopping;
    private volatile EventLoop loop;
    private volatile Throwable failure;
    /** Told, on the loop thread, why the loop failed, before it closes; null for none. */
    private final Consumer<Throwable> onFailure;
    /** One {@link #runDriving} at a time: its caller holds this while its job is handed over. */
    private final ReentrantLock jobLock = new ReentrantLock();
    /** The job handed over and not yet run, or null. Set by the caller, cleared by the loop thread. */
    private volatile LoopJob job;
    private volatile Thread jobCaller;
    private volatile Throwable jobFailure;
    private volatile boolean jobDone;
    /** How long the last job ran: written by the loop thread before {@link #jobDone}, read by the next caller. */
    private long lastJobNanos;

    private EventLoopThread(String name, EventLoopConfig config, Consumer<Throwable> onFailure) {
        this.config = config;
        this.onFailure = onFailure;
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this::run);
        this.adopted = false;
    }

    private EventLoopThread(EventLoopConfig config, Thread caller) {
        this.config = config;
        this.onFailure = null;
        this.thread = caller;
        this.adopted = true;
    }

    /**
     * Opens a loop on the calling thread, which becomes its only driver: the loop turns only while this thread
     * polls it, in {@link #runDriving} jobs (run at once) or through {@link EventLoop#poll}. Every wait of such a
     * job ends when the kernel wakes this one thread; between jobs nothing turns. Other threads may only
     * {@link #execute} (the task runs at the next poll): {@link #call}, {@link #runDriving} and {@link #close}
     * from them are refused, since they would wait for a thread that may never poll.
     *
     * @param config how to open the loop; its idle strategy, if any, is the caller's to use
     * @return the loop, driven by the calling thread
     * @throws IOException if the loop cannot be opened (the reason is in the message)
     */
    public static EventLoopThread adopt(EventLoopConfig config) throws IOException {
        if (config == null) {
            throw new IllegalArgumentException("loop configuration is null");
        }
        EventLoopThread t = new EventLoopThread(config, Thread.currentThread());
        t.loop = EventLoops.open(config);
        return t;
    }

    /**
     * Starts a thread, opens the loop on it, and returns once it runs (or throws why it could not).
     *
     * @param name the thread's name
     * @param config how to open the loop
     * @return the running thread
     * @throws IOException if the loop cannot be opened on the new thread (the reason is in the message)
     */
    public static EventLoopThread start(String name, EventLoopConfig config) throws IOException {
        return start(name, config, null);
    }

    /**
     * {@return {@link #start(String, EventLoopConfig)}, and if a task, handler or the idle strategy ever throws out
     * of the loop, {@code onFailure} is told why on the loop thread before the loop closes} So whatever runs on
     * the loop can be failed with a clear reason, and the loop's last operations prepared, while it still can.
     * What {@code onFailure} throws is added to the failure as suppressed.
     *
     * @param name the thread's name
     * @param config how to build the loop
     * @param onFailure told why the loop failed, or null
     * @throws IOException if the loop cannot be opened, with the reason
     */
    public static EventLoopThread start(String name, EventLoopConfig config, Consumer<Throwable> onFailure)
            throws IOException {
        EventLoopThread t = new EventLoopThread(name, config, onFailure);
        t.thread.start();
        try {
            t.loop = t.started.get(JOIN_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            t.stopping = true;
            throw new IOException("event loop thread " + name + " did not start", e);
        }
        return t;
    }

    /** {@return the loop this thread runs: hand it work with {@link #execute} or {@link #call}} */
    public EventLoop loop() {
        return loop;
    }

    /**
     * Runs {@code task} on the loop thread.
     *
     * @param task what to run; it must not block the loop
     */
    public void execute(Runnable task) {
        loop.execute(task);
    }

    /**
     * Runs {@code task} on the loop thread and waits for its result; rethrows what it threw. Called on the
     * loop thread itself, it runs {@code task} at once.
     *
     * @param <T> the task's result type
     * @param task what to run; it must not block the loop
     * @return what {@code task} returned
     * @throws Exception what {@code task} threw, or an exception saying the loop did not run it in time
     */
    public <T> T call(Callable<T> task) throws Exception {
        if (Thread.currentThread() == thread) {
            return task.call();
        }
        refuseIfAdopted("call()");
        CompletableFuture<T> result = new CompletableFuture<>();
        loop.execute(() -> {
            try {
                result.complete(task.call());
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        try {
            return result.get(JOIN_MILLIS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception ex ? ex : new RuntimeException(e.getCause());
        }
    }

    /**
     * Runs {@code job} on the loop thread between two polls, after the tasks queued before it, and returns
     * when it has run; rethrows what it threw. The job may call {@link EventLoop#poll} on this thread's loop
     * (it owns the loop while it runs), so it waits for completions in the kernel itself; everything else the loop does (other tasks,
     * timers, other connections) waits until the job returns, so it must be bounded. Called on the loop
     * thread itself (or the driver of an {@linkplain #adopt adopted} loop), it runs {@code job} at once (from a
     * handler or task, the job must then not poll).
     * Callers from several threads take turns. Allocates nothing.
     *
     * <p>The caller waits until the job has run, also when interrupted (the job may be using the caller's
     * memory); its interrupt status stays set, so a job that knows its caller's thread can look at it and
     * end early.
     *
     * @param job the work to run on the loop thread
     * @throws Exception what {@code job} threw
     * @throws IllegalStateException if the loop thread stopped before it ran the job
     */
    public void runDriving(LoopJob job) throws Exception {
        if (job == null) {
            throw new IllegalArgumentException("job is null");
        }
        if (Thread.currentThread() == thread) {
            job.run();
            return;
        }
        refuseIfAdopted("runDriving()");
        jobLock.lock();
        try {
            jobDone = false;
            jobFailure = null;
            jobCaller = Thread.currentThread();
            this.job = job;
            loop.wakeup();
            awaitJob();
            Throwable t = jobFailure;
            jobFailure = null;
            if (t instanceof Exception e) {
                throw e;
            } else if (t instanceof Error e) {
                throw e;
            } else if (t != null) {
                throw new IllegalStateException(t);
            }
        } finally {
            jobCaller = null;
            jobLock.unlock();
        }
    }

    private void awaitJob() {
        int spins = lastJobNanos < SHORT_JOB_NANOS ? 0 : JOB_SPINS;
        while (!jobDone) {
            if (++spins < JOB_SPINS) {
                Thread.onSpinWait();
            } else if (isBusyPolling() || Thread.currentThread().isInterrupted()) {
                // In busy-poll mode the caller polls too, giving the core away between looks: a park would
                // make the end of every job wait for a wake-up, which busy polling is there to avoid. With the
                // interrupt set, park would return at once: the status stays set for the job to see.
                Thread.yield();
            } else {
                LockSupport.parkNanos(this, JOB_CHECK_NANOS);
            }
            if (spins >= JOB_SPINS && !thread.isAlive() && !jobDone) {
                job = null;
                throw new IllegalStateException("event loop thread " + thread.getName() + " stopped before it ran"
                        + " the job" + (failure == null ? "" : ": " + failure));
            }
        }
    }

    /** Off the driving thread of an adopted loop: nothing would run what this thread waits for. */
    private void refuseIfAdopted(String what) {
        if (adopted) {
            throw new IllegalStateException(what + " on " + Thread.currentThread().getName() + ": this loop is driven by "
                    + thread.getName() + " alone, which adopted it; call from that thread");
        }
    }

    /** Loop thread: runs the job handed over, if any; true if there was one. */
    private boolean runJob(EventLoop own) {
        LoopJob j = job;
        if (j == null) {
            return false;
        }
        long start = System.nanoTime();
        try {
            // Tasks queued before the job was handed over run first, as they would have with execute():
            // a post the caller made just before (its doorbell) is taken before the job, say, closes.
            if (own.hasTasks()) {
                own.poll(0);
            }
            j.run();
        } catch (Throwable t) {
            jobFailure = t;
        }
        lastJobNanos = System.nanoTime() - start;
        Thread caller = jobCaller; // read first: once jobDone is set, the caller may leave and another come
        job = null;
        jobDone = true;
        LockSupport.unpark(caller);
        return true;
    }

    /** {@return the failure that ended the loop thread, if any} */
    public Throwable failure() {
        return failure;
    }

    /** {@return the loop thread, for checks such as which memory it may access} */
    public Thread thread() {
        return thread;
    }

    /** {@return whether the loop thread busy-polls ({@link EventLoopConfig#idle()} is set) rather than sleeping} */
    public boolean isBusyPolling() {
        return config.idle() != null;
    }

    /** {@return whether the loop thread still runs; for an adopted loop, whether it is still open} */
    public boolean isAlive() {
        return adopted ? !stopping : thread.isAlive();
    }

    /** {@return whether the calling thread {@linkplain #adopt adopted} the loop and drives it, with no thread of its own} */
    public boolean isAdopted() {
        return adopted;
    }

    private void run() {
        EventLoop own;
        try {
            own = EventLoops.open(config);
        } catch (Throwable t) {
            started.completeExceptionally(t);
            return;
        }
        started.complete(own);
        try {
            if (config.idle() == null) {
                while (!stopping) {
                    if (!runJob(own)) {
                        own.poll(BLOCKING_POLL_NANOS);
                    }
                }
            } else {
                while (!stopping) {
                    config.idle().idle(runJob(own) ? 1 : own.poll(0));
                }
            }
        } catch (Throwable t) {
            failure = t;
            if (onFailure != null) {
                try {
                    onFailure.accept(t);
                } catch (Throwable during) {
                    t.addSuppressed(during);
                }
            }
        } finally {
            own.close();
        }
    }

    /**
     * Stops the loop, which cancels in-flight work and releases its buffers, and joins the thread. An adopted
     * loop is closed at once, by the thread that drives it; idempotent.
     *
     * @throws IllegalStateException if the thread did not stop in time, or an adopted loop is closed from another
     *                               thread than its driver
     */
    @Override
    public void close() {
        if (adopted) {
            if (Thread.currentThread() != thread) {
                refuseIfAdopted("close()");
            }
            if (!stopping) {
                stopping = true;
                loop.close();
            }
            return;
        }
        stopping = true;
        EventLoop own = loop;
        if (own != null) {
            own.wakeup();
        }
        try {
            thread.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            throw new IllegalStateException("event loop thread " + thread.getName() + " did not stop within "
                    + JOIN_MILLIS + " ms");
        }
    }
}
