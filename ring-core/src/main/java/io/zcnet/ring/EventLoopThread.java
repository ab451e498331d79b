package io.zcnet.ring;

import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one {@link EventLoop} on a thread of its own: the loop is created on that thread (so with
 * io_uring the thread is the single issuer from the start) and closed on it.
 *
 * <p>{@link #execute} and {@link #call} are for any thread; {@link #close} stops the loop, lets it
 * cancel what is in flight, and joins the thread within a bounded time.
 */
public final class EventLoopThread implements AutoCloseable {
    /** How long a blocking loop sleeps in the kernel before it looks at its stop flag again. */
    private static final long BLOCKING_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final long JOIN_MILLIS = 15_000;

    private final Thread thread;
    private final EventLoopConfig config;
    private final CompletableFuture<EventLoop> started = new CompletableFuture<>();
    private volatile boolean stopping;
    private volatile EventLoop loop;
    private volatile Throwable failure;

    private EventLoopThread(String name, EventLoopConfig config) {
        this.config = config;
        this.thread = Thread.ofPlatform().name(name).daemon(true).unstarted(this::run);
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
        EventLoopThread t = new EventLoopThread(name, config);
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

    /** {@return the failure that ended the loop thread, if any} */
    public Throwable failure() {
        return failure;
    }

    /** {@return whether the loop thread still runs} */
    public boolean isAlive() {
        return thread.isAlive();
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
                    own.poll(BLOCKING_POLL_NANOS);
                }
            } else {
                while (!stopping) {
                    config.idle().idle(own.poll(0));
                }
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            own.close();
        }
    }

    /** Stops the loop, which cancels in-flight work and releases its buffers, and joins the thread. */
    @Override
    public void close() {
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
