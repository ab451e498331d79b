package io.zcnet.qp;

import org.jctools.queues.atomic.MpscAtomicArrayQueue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Where a thread sleeps until any of several {@link SharedCompletionQueue}s has completions (ibv_create_comp_channel(3)
 * and ibv_get_cq_event(3)), instead of spinning over them: each queue made with this channel and armed with
 * {@link SharedCompletionQueue#requestNotification()} is returned by {@link #await} once after a completion was
 * written to it. The queues may belong to different contexts.
 *
 * <p>The verbs pattern, which loses no completion:
 * <pre>{@code
 * cq.requestNotification();                 // arm every queue once at the start
 * while (running) {
 *     SharedCompletionQueue ready = channel.await(Duration.ofSeconds(1));
 *     if (ready == null) continue;
 *     ready.requestNotification();           // arm again first,
 *     while (ready.poll(wc)) handle(wc);     // then empty it: what came before the arm is polled here
 * }
 * }</pre>
 *
 * <p>Threads: one thread at a time waits; the loops of the queues signal, several at once (of one context's loops or
 * of several contexts): the event queue takes many producers. An event is queued at most once
 * per arm, so the channel holds at most as many as it has queues ({@code capacity}). Waiting allocates nothing.
 */
public final class CompletionChannel {
    private final MpscAtomicArrayQueue<SharedCompletionQueue> events;
    private final int capacity;
    private final AtomicInteger attached = new AtomicInteger();
    private volatile Thread waiter;

    /**
     * A channel for up to {@code capacity} completion queues.
     *
     * @param capacity the most completion queues that may use this channel at once
     * @throws IllegalArgumentException if {@code capacity} is outside 1..2^20
     */
    public CompletionChannel(int capacity) {
        if (capacity < 1 || capacity > 1 << 20) {
            throw new IllegalArgumentException("capacity " + capacity + " outside 1..2^20");
        }
        this.capacity = capacity;
        this.events = new MpscAtomicArrayQueue<>(capacity);
    }

    /** A queue made with this channel; refused past the capacity, as the events would not fit. */
    void attach() {
        if (attached.incrementAndGet() > capacity) {
            attached.decrementAndGet();
            throw new IllegalStateException("this completion channel already serves " + capacity + " queues (its capacity)");
        }
    }

    void detach() {
        attached.decrementAndGet();
    }

    /** {@code cq} was armed and has a new completion. A loop thread. */
    void signal(SharedCompletionQueue cq) {
        events.offer(cq); // at most one event per attached queue is ever queued, and there is room for each
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    /**
     * {@return the next queue that had a completion since it was armed, or null when none came within {@code timeout}}
     * The queue is disarmed: arm it again before polling it empty.
     *
     * @param timeout how long to wait at most
     * @throws InterruptedException if the waiting thread is interrupted
     */
    public SharedCompletionQueue await(Duration timeout) throws InterruptedException {
        SharedCompletionQueue ready = events.poll();
        if (ready != null) {
            return ready;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        waiter = Thread.currentThread();
        try {
            while ((ready = events.poll()) == null) { // looked at after waiter is set: a signal before it is not lost
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                if (Thread.interrupted()) {
                    throw new InterruptedException("interrupted while waiting for a completion event");
                }
                LockSupport.parkNanos(this, left);
            }
            return ready;
        } finally {
            waiter = null;
        }
    }

    /** {@return the next queue that had a completion since it was armed, or null at once} */
    public SharedCompletionQueue poll() {
        return events.poll();
    }

    @Override
    public String toString() {
        return "CompletionChannel[" + attached.get() + "/" + capacity + " queues, " + events.size() + " events]";
    }
}
