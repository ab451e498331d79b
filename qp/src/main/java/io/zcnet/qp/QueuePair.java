package io.zcnet.qp;

import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.framing.FramingConfig;
import io.zcnet.ring.BufferRing;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.LoopSignal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A connected queue pair: a send queue, a receive queue and a completion queue with the semantics of RDMA
 * verbs (ibv_post_send(3), ibv_post_recv(3), ibv_poll_cq(3)), carried over one or several TCP subflows.
 *
 * <h2>Semantics</h2>
 * <ul>
 *   <li>A SEND consumes the peer's oldest posted receive; a message longer than that receive fails both
 *   (LOCAL_LENGTH_ERROR at the peer). An RDMA WRITE lands in the peer's region named by its remote key
 *   and offset, with no completion at the peer; WRITE with immediate also consumes a receive, whose
 *   completion carries the immediate. An RDMA READ copies the peer's region into the local buffer.</li>
 *   <li>Local buffers are scatter/gather lists, as in verbs: a work request sends the concatenation of its
 *   1..{@link QpConfig#maxSendSge()} elements (a READ fills them in order), a receive is filled over its
 *   1..{@link QpConfig#maxReceiveSge()} elements in order ({@link WorkRequest#sge}, {@link ReceiveRequest}).
 *   Frames stay segment-aligned in the message whatever the elements: a frame's payload is gathered from
 *   several without a copy, and scattered over several on arrival.</li>
 *   <li>A SEND or WRITE completes once the peer has acknowledged it: its data is placed at the peer. A
 *   READ completes once its data has landed here.</li>
 *   <li>Completions of the send queue come in posting order, and so do those of the receive queue; the
 *   two are interleaved in the one completion queue.</li>
 *   <li>Sends that consume receives are flow-controlled by credits (the peer's posted receives): a SEND
 *   waits for a receive to be posted instead of failing, so no side buffers without bound. A WRITE with
 *   immediate sends none of its bytes before the peer has a receive posted for it (its data frames wait for
 *   the credit, not only its last one): a receiver that posts a receive only once it is done with the
 *   memory the next WRITE lands in may use its receives as the flow control of that memory. The receive's
 *   completion counts the WRITE's bytes when it is one message (up to 16 MiB less one segment; a longer
 *   WRITE is several messages, and the completion counts the last one's).</li>
 *   <li>Any failure (a refused key on either side, a protocol violation by the peer, the loss of every
 *   subflow, {@link #close()}) moves the queue pair to {@link QpState#ERROR}: what is outstanding completes
 *   with an error status (the failing request with its own, the rest FLUSH_ERROR), in posting order, and
 *   later posts complete with FLUSH_ERROR. Both sides hear of it as verbs report it: a WRITE or READ the
 *   responder refused completes with REMOTE_ACCESS_ERROR, a SEND too long for its receive with
 *   REMOTE_INVALID_REQUEST (and the receive with LOCAL_LENGTH_ERROR), and the responder's own queue pair
 *   fails too.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * The three queues are rings in off-heap memory between the posting thread and the context's loop
 * thread; posting and polling take no lock. One thread at a time may post sends, one may post receives
 * and one may poll (they may be the same thread, or the loop thread itself); posting from two threads at
 * once needs the caller's own lock, as concurrent ibv_post_send(3) calls need the provider's. Buffers
 * named by a work request must stay unchanged until it completes: a subflow that fails makes the queue
 * pair send them again from there.
 *
 * <p>The rings start with a few entries and double, up to the queue depths, when one side gets that far ahead
 * of the other ({@link SpscRing}): a queue pair with little outstanding holds little memory. Only that growth
 * allocates; once the rings are as large as the queue pair's use needs, nothing on the post or poll path does.
 */
public final class QueuePair implements AutoCloseable, CompletionWait.Source {

    private final QpContext context;
    /** The loop it lives on for its whole life: its engine, subflows and timers run there. */
    private final QpLoop home;
    private final EventLoop loop;
    final SpscRing sendRing;
    final SpscRing receiveRing;
    final SharedQueues sharedQueues;
    /** Where its completions go: its own ring, or its shared completion queue's. */
    final CompletionRing completions;
    /** Its slot in {@link #completions}' members. */
    final int completionSlot;
    private final QpEngine engine;
    private final QpConfig config;
    /**
     * Wakes the loop for what other threads posted: a signal, never refused, so a post that took effect never
     * throws for a full task queue and no wake-up is lost however many queue pairs share the loop.
     */
    private final LoopSignal doorbell;
    private final CompletionWait waits;
    private volatile boolean closed;
    /** The listener this queue pair waits in until {@link QpListener#accept} takes it, or null. */
    private final AtomicReference<QpListener> waitingIn = new AtomicReference<>();
    private final List<String> joinFailures = new CopyOnWriteArrayList<>();

    /** Created on the loop thread once a first subflow's handshake agreed {@code agreement}. */
    QueuePair(QpLoop home, MemoryRegistry registry, BufferRing bufferRing, Agreement agreement, QpConfig requested,
            SharedQueues shared, long token, byte[] secret) {
        this.context = home.context();
        this.home = home;
        this.loop = home.loop();
        this.config = agreement.applyTo(requested);
        this.sharedQueues = shared;
        FramingConfig framing = agreement.framing();
        this.sendRing = new SpscRing(config.sendQueueDepth(), QueueEntries.sendEntry(config.maxSendSge(),
                config.maxInlineData()));
        // A queue pair of a shared receive queue is lent its receives on the loop thread: its own ring stays empty.
        this.receiveRing = new SpscRing(shared.receiveQueue() != null ? 1 : config.receiveQueueDepth(),
                QueueEntries.receiveEntry(config.maxReceiveSge()));
        SharedCompletionQueue cq = shared.completionQueue();
        if (cq != null) {
            this.completions = cq.completions;
            this.completionSlot = cq.join(this);
        } else {
            this.completions = new CompletionRing(loop, Integer.highestOneBit(config.sendQueueDepth()
                    + config.receiveQueueDepth() - 1) * 2, null, null);
            this.completionSlot = completions.join(this);
        }
        this.engine = new QpEngine(this, loop, registry, bufferRing, framing, config, token, secret);
        this.doorbell = loop.newSignal(this::onDoorbell);
        this.waits = new CompletionWait(home, this);
    }

    QpContext context() {
        return context;
    }

    QpLoop home() {
        return home;
    }

    /**
     * {@return the index of the context's loop this queue pair lives on, 0..{@link QpContext#loops()}-1} Its
     * completion listener runs on that loop's thread. Any thread.
     */
    public int loop() {
        return home.index();
    }

    /** Established by {@code listener}, which holds it until {@link QpListener#accept} hands it out. Loop thread. */
    void waitIn(QpListener listener) {
        waitingIn.set(listener);
    }

    /**
     * {@return whether {@code listener}'s accept may hand this queue pair out} False when it failed while it waited,
     * and its listener is closing it: the two race for the one owner, and the compare-and-set picks it.
     */
    boolean takeFromListener(QpListener listener) {
        return waitingIn.compareAndSet(listener, null);
    }

    /** Moved to ERROR: a queue pair nobody has taken yet is closed by its listener rather than kept. Loop thread. */
    void failedWhileWaiting() {
        QpListener listener = waitingIn.getAndSet(null);
        if (listener != null) {
            listener.reap(this);
        }
    }

    QpEngine engine() {
        return engine;
    }

    /**
     * {@return what the two ends agreed (segment size, window, ICRC, subflow limit, silence timeout) and this side's
     * queue depths and handshake timeout}
     */
    public QpConfig config() {
        return config;
    }

    /**
     * {@return the current state}; any thread. Every receive whose message arrived whole before a failure is in
     * the completion ring before this reads ERROR, so a thread that reads ERROR and then polls finds them ahead of
     * the flushed ones.
     */
    public QpState state() {
        return engine.state();
    }

    /**
     * {@return why the queue pair went to {@link QpState#ERROR}, as a {@link WorkCompletion} status, or -1
     * while it is not in ERROR}: TRANSPORT_ERROR when every subflow was lost or the peer broke the
     * protocol, FLUSH_ERROR when it was closed here or the peer ended it, the failing request's own status
     * when a request failed. Any thread, also after {@link #close()}: the reason is written before the
     * state turns ERROR, so once {@link #state()} has returned ERROR this returns the status it went there with.
     */
    public int errorStatus() {
        return engine.state() == QpState.ERROR ? engine.errorStatus() : -1;
    }

    /** {@return the text that goes with {@link #errorStatus()} (which subflow, which request, what the peer said), or null} */
    public String errorReason() {
        return engine.state() == QpState.ERROR ? engine.errorReason() : null;
    }

    // ---------------------------------------------------------------- posting

    /**
     * Posts a send work request (copied: {@code wr} may be refilled at once). As ibv_post_send(3) answers
     * EINVAL for a work request with more elements than the queue pair's {@code max_send_sge}, a count
     * outside 1..{@link QpConfig#maxSendSge()} is refused here, and so are elements of more than
     * {@link WorkRequest#MAX_LENGTH} (2^31 - 1) bytes in all, which a completion could not count (verbs'
     * {@code byte_len} is 32 bits; ports commonly advertise a {@code max_msg_sz} of 2^31); everything else
     * about the elements (keys, bounds, rights, the total against the message and window limits) is checked
     * when the work request is taken, and fails it with a completion status. Inline data
     * ({@link WorkRequest#inline}) is copied here, and, as verbs refuse inline data past {@code max_inline_data},
     * more than {@link QpConfig#maxInlineData()} bytes of it is refused. On the loop thread (a completion
     * listener, a {@link QpContext#runOnLoop} job) a work request with none waiting ahead of it in the ring is
     * taken at once and sent at the end of the loop turn, without the round through the ring.
     *
     * @return false if the send queue is full (poll completions, then post again)
     * @param wr the work request; copied, so it may be refilled at once
     * @throws IllegalArgumentException if {@code wr} was never filled, has no element or more than
     *                                  {@link QpConfig#maxSendSge()}, elements of more than
     *                                  {@link WorkRequest#MAX_LENGTH} bytes in all, or inline data and the queue
     *                                  pair takes none or less ({@link QpConfig#maxInlineData()})
     * @throws IllegalStateException    if the queue pair was closed
     */
    public boolean postSend(WorkRequest wr) {
        if (wr == null || wr.opcode < 0) {
            throw new IllegalArgumentException("work request is not filled: " + wr);
        }
        checkSgeCount(wr.sges.count(), config.maxSendSge(), wr);
        if (wr.length() > WorkRequest.MAX_LENGTH) {
            throw tooLong(wr);
        }
        if (wr.inline && (wr.length() > config.maxInlineData() || config.maxInlineData() == 0)) {
            throw new IllegalArgumentException(wr.length() + " bytes of inline data, this queue pair takes "
                    + (config.maxInlineData() == 0 ? "none" : "at most " + config.maxInlineData())
                    + " (QpConfig.withMaxInlineData): " + wr);
        }
        checkOpen();
        if (loop.inLoop() && engine.postSendOnLoop(wr)) {
            return true;
        }
        long at = sendRing.claim();
        if (at < 0) {
            return false;
        }
        QueueEntries.writeSend(sendRing.producerMemory(), at, wr);
        sendRing.publish();
        ringDoorbell();
        return true;
    }

    /**
     * Posts a receive of up to {@code length} bytes at {@code offset} of the local region {@code lkey}
     * (which needs LOCAL_WRITE): a receive of one element. Each posted receive is one credit for the peer's
     * SENDs and WRITEs with immediate. A bad key or range completes the receive with LOCAL_PROTECTION_ERROR
     * and fails the queue pair, as verbs do. On the loop thread (a completion listener, a
     * {@link QpContext#runOnLoop} job) a receive with none waiting ahead of it in the ring is posted at once,
     * without the round through the ring.
     *
     * @return false if the receive queue is full
     * @param workRequestId reported in the receive's completion
     * @param lkey the local key of a region that grants LOCAL_WRITE
     * @param offset where the receive starts in the region
     * @param length the most bytes the receive takes
     * @throws IllegalArgumentException if the range is negative
     * @throws IllegalStateException    if the queue pair was closed
     */
    public boolean postReceive(long workRequestId, int lkey, long offset, int length) {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("receive range " + offset + "+" + length + " is negative");
        }
        checkOpen();
        checkOwnReceives();
        if (loop.inLoop() && engine.postReceiveOnLoop(workRequestId, lkey, offset, length)) {
            return true;
        }
        long at = receiveRing.claim();
        if (at < 0) {
            return false;
        }
        QueueEntries.writeReceive(receiveRing.producerMemory(), at, workRequestId, lkey, offset, length);
        receiveRing.publish();
        ringDoorbell();
        return true;
    }

    /**
     * Posts a receive scattered over {@code rr}'s elements (copied: {@code rr} may be refilled at once): a
     * SEND fills them in order, and one longer than all of them fails with LOCAL_LENGTH_ERROR. Otherwise as
     * {@link #postReceive(long, int, long, int)}; an element refused by the registry completes the receive
     * with LOCAL_PROTECTION_ERROR.
     *
     * @return false if the receive queue is full
     * @param rr the receive; copied, so it may be refilled at once
     * @throws IllegalArgumentException if {@code rr} has no element or more than {@link QpConfig#maxReceiveSge()}
     *                                  (ibv_post_recv(3)'s EINVAL)
     * @throws IllegalStateException    if the queue pair was closed
     */
    public boolean postReceive(ReceiveRequest rr) {
        if (rr == null) {
            throw new IllegalArgumentException("receive request is null");
        }
        checkSgeCount(rr.sges.count(), config.maxReceiveSge(), rr);
        checkOpen();
        checkOwnReceives();
        long at = receiveRing.claim();
        if (at < 0) {
            return false;
        }
        QueueEntries.writeReceive(receiveRing.producerMemory(), at, rr);
        receiveRing.publish();
        ringDoorbell();
        return true;
    }

    // Kept out of postSend, so that the path taken inlines.
    private static IllegalArgumentException tooLong(WorkRequest wr) {
        return new IllegalArgumentException("elements of " + wr.length() + " bytes in all, a work request takes at"
                + " most " + WorkRequest.MAX_LENGTH + " (what a completion's byte count holds): " + wr);
    }

    private static void checkSgeCount(int count, int max, Object request) {
        if (count < 1 || count > max) {
            throw new IllegalArgumentException(count + " scatter/gather elements, this queue pair takes 1.." + max
                    + ": " + request);
        }
    }

    /** Wakes the loop once for however many posts happen before it starts draining. */
    private void ringDoorbell() {
        doorbell.raise(); // false only once the loop closed: the queue pair has failed with it
    }

    private void onDoorbell() {
        if (!closed) {
            engine.onDoorbell();
        }
    }

    /** As ibv_post_recv(3) refuses a queue pair attached to an SRQ. */
    private void checkOwnReceives() {
        if (sharedQueues.receiveQueue() != null) {
            throw new IllegalStateException("this queue pair takes its receives from a shared receive queue: post there");
        }
    }

    private void checkOwnCompletions() {
        if (sharedQueues.completionQueue() != null) {
            throw new IllegalStateException("this queue pair completes into a shared completion queue: poll that");
        }
    }

    // ---------------------------------------------------------------- completions

    /**
     * Moves the oldest completion into {@code into}.
     *
     * @return false, leaving {@code into} untouched, when there is none
     * @param into the holder to fill
     * @throws IllegalStateException if the queue pair was closed, or completes into a {@link SharedCompletionQueue}
     */
    public boolean poll(WorkCompletion into) {
        if (into == null) {
            throw new IllegalArgumentException("into is null");
        }
        checkOpen();
        checkOwnCompletions();
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
     * Waits up to {@code timeout} for a completion, spinning briefly and then parking in short steps; on the
     * thread that drives the context's loop (a {@link QpContext#runOnLoop} job, or a context
     * {@linkplain QpContext#openOnCallingThread opened on the calling thread}) it turns the loop while it waits.
     *
     * @return false if none came in time
     * @param into the holder to fill
     * @param timeout how long to wait at most
     * @throws IllegalStateException on the loop's thread inside one of its handlers or tasks, where the loop cannot
     *                               be turned
     */
    public boolean await(WorkCompletion into, Duration timeout) {
        return waits.await(into, timeout);
    }

    /**
     * Has {@code listener} run on the context's loop thread after every loop turn that added completions,
     * so an application can poll and post from the loop thread itself, with no thread of its own and no
     * wake-ups (the inline style of an Agrona agent); completions already waiting when it is set make it run once
     * soon, so none waits for a later one. The listener must not block; null removes it.
     *
     * @param listener what to run on the loop thread, or null
     * @throws IllegalStateException if the queue pair was closed, or completes into a {@link SharedCompletionQueue}
     *                               (whose listener it is then)
     */
    public void onCompletions(Runnable listener) {
        checkOpen();
        checkOwnCompletions();
        call(() -> {
            completions.listener(listener);
            return null;
        });
    }

    // ---------------------------------------------------------------- subflows

    /**
     * Opens one more subflow along {@code path} and joins it to this queue pair (the connecting side only),
     * proving the pair's secret. Completes with the subflow's index, or exceptionally with the reason the
     * acceptor refused or the connection failed.
     *
     * @param path where the new subflow runs
     * @return the subflow's index, once it joined
     */
    public CompletableFuture<Integer> addSubflow(SubflowPath path) {
        checkOpen();
        return home.connector().join(this, path);
    }

    /**
     * {@return why paths given to {@link QpContext#connect(List, QpConfig)} did not join, one line per failed path
     * ({@code "LOCAL=REMOTE: reason"}), in the order of the paths; empty when every path joined} The queue
     * pair runs on the subflows that joined, as MPTCP does; a caller that needs them all checks this.
     */
    public List<String> joinFailures() {
        return List.copyOf(joinFailures);
    }

    void joinFailed(SubflowPath path, String reason) {
        joinFailures.add(path + ": " + reason);
    }

    /** {@return how many subflows carry frames now} */
    public int liveSubflows() {
        return call(engine::liveSubflows);
    }

    /** {@return a snapshot of the state, the resends and every subflow's share} */
    public QpStatistics statistics() {
        return call(() -> {
            List<QpStatistics.SubflowStatistics> list = new ArrayList<>();
            for (int i = 0; i < engine.subflowSlots(); i++) {
                Subflow s = engine.subflow(i);
                if (s != null) {
                    list.add(new QpStatistics.SubflowStatistics(s.index, s.path, !s.dead, s.bytesSent, s.framesSent,
                            s.rate() * 1e9, s.srttMicros()));
                }
            }
            return new QpStatistics(engine.state(), engine.errorReason(), engine.framesResent(), engine.bytesResent(), list);
        });
    }

    /** Runs {@code task} on the loop thread and waits for it (control path). */
    <T> T call(java.util.function.Supplier<T> task) {
        return home.call(task);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("queue pair is closed");
        }
    }

    /**
     * Moves the queue pair to ERROR (outstanding work completes with FLUSH_ERROR, which {@link #poll} no
     * longer returns); the rings' memory goes with the queue pair's last reference. Every subflow ends gracefully, in the background, within the
     * silence timeout: its last frame is a NAK that acknowledges every message this side completed (so the
     * peer's last SENDs complete successfully) and ends the peer's queue pair (its outstanding work is
     * flushed), then a FIN. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (home.failure() == null) {
            call(() -> {
                engine.close();
                engine.intake.stopBorrowing();
                if (completions.isShared()) {
                    sharedQueues.completionQueue().leave(completionSlot);
                } else {
                    completions.listener(null);
                }
                home.forget(engine);
                closed = true;
                return null;
            });
        } else {
            closed = true; // the loop died, and failed this queue pair first
        }
    }

    @Override
    public String toString() {
        return closed ? "QueuePair[closed]" : call(engine::describe);
    }
}
