package io.zcnet.qp;

import java.time.Duration;

/**
 * A completion queue that many queue pairs of one context complete into (ibv_create_cq(3) given as the
 * {@code send_cq} and {@code recv_cq} of many queue pairs): a server polls one queue, not one per client. Each
 * completion names its queue pair ({@link WorkCompletion#queuePair()}); each queue pair's completions keep their
 * order (its send queue's in posting order, its receive queue's in posting order), while those of different queue
 * pairs interleave as they happen. Made with {@link QpContext#createCompletionQueue}; given to queue pairs with
 * {@link SharedQueues}.
 *
 * <p>When it is full, the queue pairs that have more to complete wait for a poll (nothing is dropped or fails, where
 * verbs would overflow the CQ): size it for the completions that may be outstanding between two polls, or poll
 * often. Queue pairs that complete into it cannot be polled one by one ({@link QueuePair#poll} throws).
 *
 * <p>Threads: one loop thread of the context writes (the loop it was made on,
 * {@link QpContext#createCompletionQueue(int, CompletionChannel, int)}), one thread at a time polls; polling allocates
 * nothing. A ring of one writer and one reader needs no atomic per completion, so rather than take completions from
 * several loops the queue binds its queue pairs to its loop: a listener or connect given it puts them there. A
 * thread may sleep until any of several queues, of any loops, has completions with a {@link CompletionChannel}.
 */
public final class SharedCompletionQueue implements AutoCloseable, CompletionWait.Source {
    private final QpContext context;
    /** The one loop that writes it: every queue pair that uses it lives there. */
    private final QpLoop home;
    final CompletionRing completions;
    private final CompletionChannel channel;
    private final CompletionWait waits;
    private int members;
    private volatile boolean closed;

    SharedCompletionQueue(QpLoop home, int depth, CompletionChannel channel) {
        this.context = home.context();
        this.home = home;
        this.channel = channel;
        this.completions = new CompletionRing(home.loop(), depth, this, channel);
        this.waits = new CompletionWait(home, this);
    }

    QpContext context() {
        return context;
    }

    QpLoop home() {
        return home;
    }

    /** A queue pair completes into this queue from now on; its slot. Loop thread. */
    int join(QueuePair qp) {
        if (closed) {
            throw new IllegalStateException("shared completion queue is closed");
        }
        members++;
        return completions.join(qp);
    }

    /** The queue pair in {@code slot} was closed. Loop thread. */
    void leave(int slot) {
        members--;
        completions.leave(slot);
    }

    /** {@return the completions it holds at most} */
    public int depth() {
        return completions.capacity();
    }

    /** {@return the completions waiting to be polled now (approximate while the loop writes)} */
    public int size() {
        return completions.size();
    }

    /** {@return the channel it tells when armed, or null} */
    public CompletionChannel channel() {
        return channel;
    }

    /**
     * Moves the oldest completion, of whichever queue pair, into {@code into}.
     *
     * @return false, leaving {@code into} untouched, when there is none
     * @param into the holder to fill
     * @throws IllegalStateException if the queue was closed
     */
    public boolean poll(WorkCompletion into) {
        if (into == null) {
            throw new IllegalArgumentException("into is null");
        }
        checkOpen();
        return completions.poll(into);
    }

    /**
     * Fills {@code into} from the start with up to {@code into.length} completions.
     *
     * @param into the holders to fill
     * @return how many were filled
     */
    public int poll(WorkCompletion[] into) {
        return waits.poll(into);
    }

    /**
     * Waits up to {@code timeout} for a completion, spinning briefly and then parking in short steps (a thread that
     * would rather sleep until one comes uses a {@link CompletionChannel}); on the thread that drives the context's
     * loop it turns the loop while it waits.
     *
     * @return false if none came in time
     * @param into the holder to fill
     * @param timeout how long to wait at most
     */
    public boolean await(WorkCompletion into, Duration timeout) {
        return waits.await(into, timeout);
    }

    /**
     * Arms the queue (ibv_req_notify_cq(3)): the next completion written to it makes its {@link #channel()} return it
     * from {@link CompletionChannel#await}, once; arm again after each event. As with verbs, completions already in
     * the queue raise none: arm, then poll until empty, then wait, or a completion that came before the arm waits
     * unseen. (The loop looks at the arm once per turn that wrote completions, so an event may also come for one
     * written in the same turn just before the arm; the poll finds it.)
     *
     * @throws IllegalStateException if the queue has no channel, or was closed
     */
    public void requestNotification() {
        if (channel == null) {
            throw new IllegalStateException("this shared completion queue has no completion channel");
        }
        checkOpen();
        completions.requestNotification();
    }

    /**
     * Has {@code listener} run on the context's loop thread after every loop turn that added completions, so an
     * application polls and posts from the loop thread itself with no thread of its own; completions already waiting
     * make it run once soon. It must not block. One that throws fails every queue pair that completes here, each with
     * GENERAL_ERROR (they share the listener), and leaves the loop running. Null removes it.
     *
     * @param listener what to run on the loop thread, or null
     */
    public void onCompletions(Runnable listener) {
        checkOpen();
        home.call(() -> {
            completions.listener(listener);
            return null;
        });
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("shared completion queue is closed");
        }
    }

    /**
     * Frees the queue; every queue pair that completes into it must have been closed first, as ibv_destroy_cq(3)
     * refuses with EBUSY while queue pairs use it. Idempotent.
     *
     * @throws IllegalStateException if queue pairs still complete into it
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        home.callUnlessDead(() -> {
            if (members > 0) {
                throw new IllegalStateException(members + " queue pairs still complete into this queue: close them first");
            }
            completions.listener(null);
        });
        closed = true;
        if (channel != null) {
            channel.detach();
        }
    }

    @Override
    public String toString() {
        return "SharedCompletionQueue[" + size() + "/" + depth() + (closed ? " closed" : "") + "]";
    }
}
