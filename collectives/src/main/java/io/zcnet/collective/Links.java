package io.zcnet.collective;

import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpState;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.ring.BackoffWait;
import io.zcnet.ring.LoopJob;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A rank's links to all its peers and the one loop that drives them: the algorithms post sends and consume
 * arrivals, and when they can do neither they {@link #await} here, which polls every link's queue pair,
 * spins a little, then parks until a queue pair's completion listener wakes it. An operation that runs on
 * the context's loop thread ({@link #run}) waits by running the loop instead. Every wait checks every
 * link, so a failure anywhere (a peer's process gone, a queue pair ended by a peer whose own operation
 * failed) ends the running operation, and a wait with nothing moving for the timeout ends it too: no
 * operation can hang. A queue pair that failed by itself ends the operation at once. One merely ended by
 * its peer ends it only when nothing else arrives for a short grace: the peer failed in a later operation,
 * so what the others sent for this one is still on its way, and the grace may also show the link that
 * failed first.
 *
 * <p>Each operation is numbered; with the schedule (operation and algorithm) and each link's message count it
 * makes the immediate of every message ({@link Immediate}), which the receiver checks before it touches the
 * bytes.
 *
 * <p>One thread at a time (the caller of the operation, or the loop thread it handed the operation to);
 * {@link #wakeUp} runs on the loop thread. Nothing here allocates until an operation fails.
 */
final class Links {
    /** Polls of every link before the waiting thread parks. */
    private static final int SPINS = 64;
    /**
     * Longest park, and longest poll of the loop's own thread: the completion listener (or the kernel) normally
     * wakes the thread long before.
     */
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * How long an operation whose only failed links were ended by their peers goes on with what still
     * arrives, and waits to find the link that failed first.
     */
    private static final long BLAME_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    private final int rank;
    private final QpContext context;
    private final Link[] byRank;
    private final Link[] all;
    private final long timeoutNanos;
    /** Whether the context's loop busy-polls: every wait here then polls and yields instead of sleeping. */
    private final boolean busyPoll;
    private final WorkCompletion completion = new WorkCompletion();
    /** Run by every queue pair's loop after a turn that added completions. */
    final Runnable wakeUp = this::wakeUp;
    /** The thread waiting off the loop, which {@link #wakeUp} unparks; null while none waits. */
    private volatile Thread sleeper;
    /** How that thread pauses between its looks at the links. */
    private final BackoffWait offLoopWait = new BackoffWait(SPINS, 0, PARK_NANOS, PARK_NANOS);

    private Schedule schedule;
    private long sequence;
    private long lastProgress;
    /** When the running operation's grace for links ended by their peers runs out; 0 while none is ended. */
    private long graceEnd;
    private CollectiveException broken;
    /** The thread that called the running operation: its interrupt ends the operation wherever it runs. */
    private Thread caller;
    /** Whether the running operation runs on the loop thread, which then waits by running the loop. */
    private boolean onLoop;
    /** Whether the thread that joined drives the loop itself: then every wait of it runs the loop. */
    private final boolean drivenByCaller;

    /** @param byRank the link to each rank, null at {@code rank} */
    Links(int rank, QpContext context, Link[] byRank, long timeoutNanos) {
        this.rank = rank;
        this.context = context;
        this.byRank = byRank;
        this.timeoutNanos = timeoutNanos;
        this.busyPoll = context.isBusyPolling();
        this.drivenByCaller = context.isDrivenByCallingThread();
        List<Link> present = new ArrayList<>();
        for (Link l : byRank) {
            if (l != null) {
                present.add(l);
            }
        }
        this.all = present.toArray(new Link[0]);
    }

    Link to(int peer) {
        return byRank[peer];
    }

    Link[] all() {
        return all;
    }

    /**
     * Starts an operation of {@code schedule}: numbers it and restarts every link's message count.
     *
     * @throws CollectiveException if an earlier operation failed, or the calling thread is interrupted
     */
    void begin(Schedule schedule) throws CollectiveException {
        if (broken != null) {
            throw new CollectiveException("the communicator is broken since an earlier operation failed: "
                    + broken.getMessage(), broken.peer(), broken);
        }
        this.schedule = schedule;
        sequence++;
        for (Link l : all) {
            l.operationSent = 0;
            l.operationConsumed = 0;
        }
        lastProgress = System.nanoTime();
        graceEnd = 0;
        if (caller.isInterrupted()) {
            // Before anything is sent: a peer that fails first and closes its links must not turn this
            // rank's own reason into theirs.
            throw fail(-1, "the calling thread was interrupted before the operation began", null);
        }
    }

    /**
     * Runs {@code operation} (which calls {@link #begin} and the algorithm) on the context's loop thread, or on
     * this thread when {@code here}; either way it waits as its thread must. What else than a
     * {@link CollectiveException} it throws breaks the communicator too, before it is thrown on.
     */
    void run(LoopJob operation, boolean here) throws CollectiveException {
        caller = Thread.currentThread();
        onLoop = !here;
        try {
            if (here) {
                operation.run();
            } else {
                context.runOnLoop(operation);
                if (drivenByCaller) {
                    // Nothing turns this rank's loop until its next call: what the operation posted for its peers
                    // (its last messages, the acknowledgements they wait for) must be in the kernel before it returns.
                    context.flush(timeoutNanos);
                }
            }
        } catch (CollectiveException e) {
            throw e;
        } catch (RuntimeException e) {
            throw failedBy(e);
        } catch (Exception e) {
            throw failedBy(new IllegalStateException(e));
        } finally {
            onLoop = false;
        }
    }

    /**
     * Breaks the communicator for {@code e}, thrown in the middle of an operation (a bug, or memory freed under
     * it): closing the links tells the peers now, instead of at their timeouts. Returns {@code e} to throw.
     */
    private RuntimeException failedBy(RuntimeException e) {
        fail(-1, "the operation threw " + e, e);
        return e;
    }

    /** Whether an earlier operation failed. */
    boolean isBroken() {
        return broken != null;
    }

    // ---------------------------------------------------------------- messages

    /** The byte offset in {@code l.outbox} of the next message's slot, once it is free. */
    long awaitSlot(Link l) throws CollectiveException {
        while (!l.canSend()) {
            await();
        }
        return l.sendOffset();
    }

    /** Sends the next message of {@code l}: {@code bytes} of the slot {@link #awaitSlot} gave. */
    void send(Link l, long bytes) {
        l.send((int) bytes, Immediate.of(schedule, sequence, l.operationSent));
    }

    /**
     * As {@link #send(Link, long)}, telling the peer {@code hint} where the running operation's schedule
     * {@linkplain Immediate#carriesHint carries hints} (its only message on {@code l}); elsewhere the hint is not sent.
     */
    void send(Link l, long bytes, int hint) {
        if (hint < 0 || hint > Immediate.maxHint()) {
            throw new IllegalArgumentException("hint " + hint + " outside 0.." + Immediate.maxHint());
        }
        l.send((int) bytes, Immediate.of(schedule, sequence, schedule.carriesHint() ? hint : l.operationSent));
    }

    /** The hint the next message from {@code l} carries, once it {@linkplain #arrived arrived}; 0 where none is sent. */
    int hint(Link l) {
        return schedule.carriesHint() ? Immediate.index(l.arrivalImmediate()) : 0;
    }

    /**
     * The byte offset in {@code l.inbox} of the next message from {@code l}, once it has arrived and proved
     * to be the one expected, of {@code bytes} bytes.
     */
    long awaitArrival(Link l, long bytes) throws CollectiveException {
        while (!l.hasArrival()) {
            await();
        }
        check(l, bytes);
        return l.arrivalOffset();
    }

    /** Whether the next message from {@code l} has arrived (checked as {@link #awaitArrival} does); never waits. */
    boolean arrived(Link l, long bytes) throws CollectiveException {
        if (!l.hasArrival()) {
            return false;
        }
        check(l, bytes);
        return true;
    }

    private void check(Link l, long bytes) throws CollectiveException {
        int got = l.arrivalImmediate();
        // A hint stands where the index would be: the one message its schedule sends on a link is index 0.
        boolean hinted = schedule.carriesHint() && l.operationConsumed == 0;
        int want = Immediate.of(schedule, sequence, hinted ? Immediate.index(got) : l.operationConsumed);
        if (got != want) {
            throw fail(l.peer, "rank " + l.peer + " sent " + Immediate.describe(got) + " where this rank expected "
                    + Immediate.describe(want) + ": every rank must call the same operations, in the same order, with"
                    + " the same counts, root and algorithm", null);
        }
        if (l.arrivalBytes() != bytes) {
            throw fail(l.peer, "rank " + l.peer + " sent " + l.arrivalBytes() + " bytes as " + Immediate.describe(got)
                    + " where this rank expected " + bytes + ": the ranks passed different counts", null);
        }
    }

    // ---------------------------------------------------------------- waiting

    /**
     * Returns once some link took a completion (the caller then looks again at what it waits for); fails
     * the operation if a link failed, nothing moved for the timeout, or the thread was interrupted.
     */
    void await() throws CollectiveException {
        boolean turnsLoop = onLoop || drivenByCaller;
        if (!turnsLoop) {
            offLoopWait.restart();
            // Named before the first look, so a completion that comes after any look ends the next park.
            sleeper = Thread.currentThread();
        }
        try {
            while (!pollAll()) {
                if (System.nanoTime() - lastProgress > timeoutNanos) {
                    if (graceEnd != 0) {
                        throw linkFailed();
                    }
                    throw fail(-1, "nothing arrived and no send completed for "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (" + pending() + ")", null);
                }
                if (caller.isInterrupted()) {
                    throw fail(-1, "the calling thread was interrupted (" + pending() + ")", null);
                }
                if (!turnsLoop) {
                    offLoopWait.pause();
                    continue;
                }
                // The loop's own thread: one turn handles the posts just made, or waits in the kernel, or
                // when busy-polling looks without waiting and gives the core away if nothing came.
                if (busyPoll) {
                    if (context.progress(0) == 0) {
                        Thread.yield();
                    }
                } else {
                    context.progress(PARK_NANOS);
                }
            }
        } finally {
            if (!turnsLoop) {
                sleeper = null;
            }
        }
        lastProgress = System.nanoTime();
    }

    /**
     * Takes every link's completions; true if there were any. A failed link ends the operation only once
     * a poll finds nothing else: what arrived before the failure is looked at first, so a message that
     * proves the ranks disagree is reported as that, not as the link its sender then closed. When every
     * failed link was ended by its peer, polls find nothing for the grace before the operation ends.
     */
    private boolean pollAll() throws CollectiveException {
        boolean moved = false;
        boolean failed = false;
        for (Link l : all) {
            // The failure is read before the completions: a queue pair completes what arrived before it failed
            // ahead of showing ERROR, so those are in this drain, never lost to a race with the loop thread.
            boolean linkFailed = isFailed(l);
            if (l.drain(completion) > 0) {
                moved = true;
            }
            failed |= linkFailed;
        }
        if (failed && !moved) {
            long now = System.nanoTime();
            if (graceEnd == 0) {
                graceEnd = now + BLAME_GRACE_NANOS;
            }
            if (firstFailed(false) != null || now - graceEnd > 0) {
                throw linkFailed();
            }
        }
        return moved;
    }

    private void wakeUp() {
        Thread t = sleeper;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    // ---------------------------------------------------------------- failure

    /**
     * One or more links failed. The peer blamed is one whose queue pair failed by itself (its process or
     * host is gone) if there is one; else one that was merely ended by its peer.
     */
    private CollectiveException linkFailed() {
        Link culprit = firstFailed(false);
        if (culprit == null) {
            culprit = firstFailed(true);
        }
        StringBuilder why = new StringBuilder("the link to rank ").append(culprit.peer).append(" failed: ")
                .append(reason(culprit));
        List<Integer> others = new ArrayList<>();
        for (Link l : all) {
            if (l != culprit && isFailed(l)) {
                others.add(l.peer);
            }
        }
        if (!others.isEmpty()) {
            why.append("; the links to ranks ").append(others).append(" failed too");
        }
        return fail(culprit.peer, why.toString(), null);
    }

    /** The first failed link that was, or was not, ended by its peer; null if none. */
    private Link firstFailed(boolean endedByPeer) {
        for (Link l : all) {
            if (isFailed(l) && endedByPeer(l) == endedByPeer) {
                return l;
            }
        }
        return null;
    }

    private static boolean isFailed(Link l) {
        return l.failure != null || l.qp.state() == QpState.ERROR;
    }

    /** Whether the queue pair ended in an orderly way (closed by the peer) rather than by losing its transport. */
    private static boolean endedByPeer(Link l) {
        return l.qp.errorStatus() == WorkCompletion.FLUSH_ERROR;
    }

    private static String reason(Link l) {
        String qp = l.qp.errorReason();
        if (l.failure == null) {
            return qp == null ? "its queue pair is in ERROR" : qp;
        }
        return qp == null ? l.failure : l.failure + " (" + qp + ")";
    }

    /** What the running operation waits for, by link, for a timeout's message. */
    private String pending() {
        StringBuilder b = new StringBuilder();
        for (Link l : all) {
            if (l.operationSent > 0 || l.operationConsumed > 0 || l.hasArrival() || l.sendsInFlight() > 0) {
                b.append(b.isEmpty() ? "" : ", ").append(l);
            }
        }
        return b.isEmpty() ? "no link was used yet" : b.toString();
    }

    /**
     * Breaks the communicator: the running operation fails with the returned exception, later ones at
     * once, and every queue pair is closed so the peers' operations fail as soon as they look.
     */
    CollectiveException fail(int peer, String why, Throwable cause) {
        CollectiveException e = new CollectiveException(schedule + " #" + sequence + " failed on rank "
                + rank + ": " + why, peer, cause);
        if (broken == null) {
            broken = e;
        }
        try {
            abort();
        } catch (RuntimeException closing) {
            e.addSuppressed(closing);
        }
        return e;
    }

    /**
     * Closes every queue pair: what is outstanding is flushed, and each peer's queue pair ends too. Every one is
     * closed whatever another throws; then the first failure is thrown.
     */
    void abort() {
        Teardown teardown = new Teardown();
        for (Link l : all) {
            teardown.run(l.qp::close);
        }
        if (teardown.failure() != null) {
            throw teardown.failure();
        }
    }

    /**
     * Waits, up to the timeout, for every WRITE posted to complete: the peers then hold every byte this rank
     * sent, so closing the queue pairs next loses nothing a peer still needs.
     */
    void drainSends() throws CollectiveException {
        for (Link l : all) {
            l.flushSends();
            while (l.sendsInFlight() > 0) {
                await();
            }
        }
    }
}
