package io.zcnet.qp;

import io.zcnet.ring.EventLoop;
import io.zcnet.ring.LoopSignal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Receives posted once for many queue pairs of one context (ibv_create_srq(3), ibv_post_srq_recv(3)): a server
 * keeps one pool of receive buffers for all its clients instead of one per queue pair. Made with
 * {@link QpContext#createSharedReceiveQueue}; given to queue pairs with {@link SharedQueues}.
 *
 * <h2>Credits</h2>
 * A queue pair over TCP has no receiver-not-ready retry: a peer sends a SEND only into a receive it knows is
 * posted for it (its credit). So the queue lends its receives to its queue pairs, in the order they were posted,
 * at most {@code perQueuePair} to one queue pair at a time, one at a time round the queue pairs that have fewer:
 * each lent receive is one credit of that queue pair's peer, and is consumed by the next SEND (or WRITE with
 * immediate) that queue pair receives, whatever its size up to the receive's. A consumed receive is replaced
 * from the queue at once. Receives lent to a queue pair that fails come back as FLUSH_ERROR completions of that
 * queue pair, as verbs flush what a queue pair took from its SRQ; the buffers are then the application's again, to
 * post anew. With few receives and many queue pairs, those lent to quiet queue pairs wait there: post at least
 * {@code perQueuePair} for each queue pair that must make progress.
 *
 * <h2>Limit</h2>
 * {@link #armLimit} asks for one event ({@code IBV_EVENT_SRQ_LIMIT_REACHED}) when fewer receives than the limit are
 * left to lend: the listener runs on the loop thread, and may post more from there.
 *
 * <p>Threads: one thread at a time posts; one loop of the context lends (the loop it was made on,
 * {@link QpContext#createSharedReceiveQueue(int, int, int, int)}), and every queue pair that takes its receives from
 * it lives on that loop, so lending stays one thread's work. Posting allocates nothing.
 */
public final class SharedReceiveQueue implements AutoCloseable {
    private static final VarHandle LIMIT;

    static {
        try {
            LIMIT = MethodHandles.lookup().findVarHandle(SharedReceiveQueue.class, "limit", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final QpContext context;
    /** The one loop that writes it: every queue pair that uses it lives there. */
    private final QpLoop home;
    final SpscRing ring;
    private final int maxSge;
    private final int perQueuePair;
    private final EventLoop loop;
    private final LoopSignal doorbell;
    /** Queue pairs holding fewer than {@link #perQueuePair} lent receives, each at most once. Loop thread. */
    private final ArrayDeque<QpEngine> wanting = new ArrayDeque<>();
    private Runnable limitListener;
    /** The queue pairs that take their receives from here. Loop thread. */
    private final List<QpEngine> members = new ArrayList<>();
    /** Receives lent to queue pairs and not yet consumed or flushed. Loop thread. */
    private long lentOut;
    /** The armed limit, or 0. */
    @SuppressWarnings("unused")
    private volatile int limit;
    private volatile boolean closed;

    SharedReceiveQueue(QpLoop home, int depth, int maxSge, int perQueuePair) {
        this.context = home.context();
        this.home = home;
        this.maxSge = maxSge;
        this.perQueuePair = perQueuePair;
        this.ring = new SpscRing(depth, QueueEntries.receiveEntry(maxSge));
        this.loop = home.loop();
        this.doorbell = loop.newSignal(this::lend);
    }

    QpContext context() {
        return context;
    }

    QpLoop home() {
        return home;
    }

    /** {@return the receives it holds at most, lent ones not counted} */
    public int depth() {
        return ring.capacity();
    }

    /** {@return the most scatter/gather elements a receive may have} */
    public int maxSge() {
        return maxSge;
    }

    /** {@return the most receives lent to one queue pair at a time} */
    public int perQueuePair() {
        return perQueuePair;
    }

    /** {@return the receives posted and not yet lent (approximate while the loop lends)} */
    public int available() {
        return ring.size();
    }

    /**
     * Posts a receive of up to {@code length} bytes at {@code offset} of the local region {@code lkey} (which needs
     * LOCAL_WRITE), for whichever queue pair needs it next. A bad key or range completes the receive with
     * LOCAL_PROTECTION_ERROR at the queue pair it was lent to, and fails that queue pair, as verbs do.
     *
     * @return false if the queue is full
     * @param workRequestId reported in the receive's completion
     * @param lkey the local key of a region that grants LOCAL_WRITE
     * @param offset where the receive starts in the region
     * @param length the most bytes the receive takes
     * @throws IllegalArgumentException if the range is negative
     * @throws IllegalStateException    if the queue was closed
     */
    public boolean postReceive(long workRequestId, int lkey, long offset, int length) {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("receive range " + offset + "+" + length + " is negative");
        }
        checkOpen();
        long at = ring.claim();
        if (at < 0) {
            return false;
        }
        QueueEntries.writeReceive(ring.producerMemory(), at, workRequestId, lkey, offset, length);
        ring.publish();
        lendSoon();
        return true;
    }

    /**
     * Posts a receive scattered over {@code rr}'s elements (copied); otherwise as
     * {@link #postReceive(long, int, long, int)}.
     *
     * @return false if the queue is full
     * @param rr the receive; copied, so it may be refilled at once
     * @throws IllegalArgumentException if {@code rr} has no element or more than {@link #maxSge()}
     * @throws IllegalStateException    if the queue was closed
     */
    public boolean postReceive(ReceiveRequest rr) {
        if (rr == null) {
            throw new IllegalArgumentException("receive request is null");
        }
        int count = rr.sges.count();
        if (count < 1 || count > maxSge) {
            throw new IllegalArgumentException(count + " scatter/gather elements, this queue takes 1.." + maxSge + ": " + rr);
        }
        checkOpen();
        long at = ring.claim();
        if (at < 0) {
            return false;
        }
        QueueEntries.writeReceive(ring.producerMemory(), at, rr);
        ring.publish();
        lendSoon();
        return true;
    }

    /**
     * Has {@code listener} run on the loop thread when fewer than the armed limit are left to lend (null: none).
     * One that throws is logged by the loop's fault path of every member queue pair: each fails with GENERAL_ERROR.
     *
     * @param listener what to run, once per {@link #armLimit}
     */
    public void onLimit(Runnable listener) {
        checkOpen();
        home.call(() -> {
            limitListener = listener;
            return null;
        });
    }

    /**
     * Arms the limit (ibv_modify_srq(3) with {@code IBV_SRQ_LIMIT}): once fewer than {@code limit} receives are left
     * to lend, the {@link #onLimit} listener runs once and the limit is disarmed. Arming below what is left now
     * raises it at the next lend that goes under; 0 disarms.
     *
     * @param limit receives left to lend below which the event comes
     * @throws IllegalArgumentException if {@code limit} is negative or past the depth
     */
    public void armLimit(int limit) {
        if (limit < 0 || limit > depth()) {
            throw new IllegalArgumentException("limit " + limit + " outside 0.." + depth());
        }
        checkOpen();
        LIMIT.setVolatile(this, limit);
        doorbell.raise(); // looked at by the loop now, should the queue already be below it
    }

    /**
     * Has what was posted lent: at once on the loop thread (a completion listener reposting, where a signal would
     * wait for the next loop turn, and the credit with it), else by the doorbell.
     */
    private void lendSoon() {
        if (loop.inLoop()) {
            lend();
        } else {
            doorbell.raise();
        }
    }

    // ---------------------------------------------------------------- the loop's side

    /** {@code engine} takes its receives from here from now on: it is lent its first ones. Loop thread. */
    void join(QpEngine engine) {
        if (closed) {
            engine.fail(WorkCompletion.LOCAL_PROTECTION_ERROR, "its shared receive queue was closed");
            return;
        }
        members.add(engine);
        want(engine);
    }

    /** {@code engine} was closed. Loop thread. */
    void leave(QpEngine engine) {
        members.remove(engine);
        wanting.remove(engine);
        lentOut -= engine.intake.borrowed();
    }

    /** {@code engine} holds fewer receives than it may: it is lent the next one posted. Loop thread. */
    void want(QpEngine engine) {
        if (!engine.intake.isWanting() && engine.intake.mayBorrow(perQueuePair)) {
            engine.intake.wanting(true);
            wanting.addLast(engine);
        }
        lend();
    }

    /** A receive lent earlier was consumed or flushed. Loop thread. */
    void returned() {
        lentOut--;
    }

    /** Lends posted receives, round the queue pairs that want one, and raises the limit event. Loop thread. */
    private void lend() {
        if (closed) {
            return; // raised before the close, run after it: the ring is freed
        }
        long at;
        while (!wanting.isEmpty() && (at = ring.peek()) >= 0) {
            QpEngine e = wanting.pollFirst();
            e.intake.wanting(false);
            if (!e.intake.mayBorrow(perQueuePair)) {
                continue; // failed or closed since it asked
            }
            if (!e.intake.borrow(ring, at)) {
                continue; // its receive queue is full after all: it asks again once one is consumed
            }
            lentOut++;
            if (e.intake.mayBorrow(perQueuePair)) {
                e.intake.wanting(true);
                wanting.addLast(e);
            }
        }
        int armed = (int) LIMIT.getVolatile(this);
        if (armed > 0 && ring.size() < armed && LIMIT.compareAndSet(this, armed, 0)) {
            runLimitListener();
        }
    }

    private void runLimitListener() {
        Runnable l = limitListener;
        if (l == null) {
            return;
        }
        try {
            l.run();
        } catch (RuntimeException | Error e) {
            for (QpEngine member : List.copyOf(members)) {
                if (member.state() == QpState.RTS) {
                    member.failure.onFault("the shared receive queue's limit listener", e);
                }
            }
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("shared receive queue is closed");
        }
    }

    /**
     * Frees the queue; every queue pair that takes receives from it must have been closed first, as
     * ibv_destroy_srq(3) refuses with EBUSY while queue pairs use it. Receives still posted are dropped (their
     * buffers are the application's again). Idempotent.
     *
     * @throws IllegalStateException if queue pairs still take receives from it
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        home.callUnlessDead(() -> {
            if (!members.isEmpty()) {
                throw new IllegalStateException(members.size() + " queue pairs still take receives from this queue: close them first");
            }
        });
        closed = true;
    }

    @Override
    public String toString() {
        return "SharedReceiveQueue[" + available() + "/" + depth() + " to lend, " + lentOut + " lent to " + members.size()
                + " queue pairs" + (closed ? ", closed" : "") + "]";
    }
}
