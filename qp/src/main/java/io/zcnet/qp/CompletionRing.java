package io.zcnet.qp;

import io.zcnet.ring.EventLoop;
import io.zcnet.ring.LoopSignal;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The ring completions are written to, for one queue pair (its own) or for many ({@link SharedCompletionQueue}):
 * the loop thread writes, one polling thread at a time reads. Each entry names its queue pair by a slot of this
 * ring's member table, as verbs' {@code ibv_wc.qp_num} does.
 *
 * <p>When the ring is full the loop stops completing for the queue pairs that found it so and notes them; the next
 * poll wakes the loop to continue them (completions wait, none is dropped: verbs would overflow the CQ instead).
 * Once per loop turn that added completions it runs the completion listener, and tells the completion channel when
 * the ring was armed ({@link #requestNotification}).
 *
 * <p>Slots: a queue pair's slot is handed out again only once the poller has passed every completion written for
 * it, so a completion polled late still names the queue pair that made it. The member table is written by the loop
 * before the completion that names a slot is published (release) and read by the poller after it acquired that
 * completion, so it needs no lock of its own.
 */
final class CompletionRing {
    private static final VarHandle STALLED;
    private static final VarHandle ARMED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STALLED = lookup.findVarHandle(CompletionRing.class, "stalled", int.class);
            ARMED = lookup.findVarHandle(CompletionRing.class, "armed", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SpscRing ring;
    private final EventLoop loop;
    private final LoopSignal resume;
    private final LoopSignal turnDone;
    /** The shared queue this ring is the body of, or null for a queue pair's own. */
    private final SharedCompletionQueue shared;
    private final CompletionChannel channel;
    private QueuePair[] members = new QueuePair[1];
    private int slotsUsed;
    private final ArrayDeque<long[]> freedSlots = new ArrayDeque<>();
    /** Engines that found the ring full, in that order; swapped with {@link #resuming} while they resume. */
    private QpEngine[] stalledEngines = new QpEngine[1];
    private QpEngine[] resuming = new QpEngine[1];
    private int stalledCount;
    private Runnable listener;
    private boolean turnDoneRaised;
    /** 1 when the loop stopped because the ring was full: the next poll wakes it. */
    @SuppressWarnings("unused")
    private volatile int stalled;
    /** 1 while the next completion should tell {@link #channel}. */
    @SuppressWarnings("unused")
    private volatile int armed;

    CompletionRing(EventLoop loop, int capacity, SharedCompletionQueue shared, CompletionChannel channel) {
        this.ring = new SpscRing(capacity, QueueEntries.COMPLETION_ENTRY);
        this.loop = loop;
        this.shared = shared;
        this.channel = channel;
        this.resume = loop.newSignal(this::onPolled);
        this.turnDone = loop.newSignal(this::onTurnDone);
    }

    boolean isShared() {
        return shared != null;
    }

    EventLoop loop() {
        return loop;
    }

    // ---------------------------------------------------------------- members (loop thread)

    /** {@return the slot {@code qp}'s completions name} Loop thread. */
    int join(QueuePair qp) {
        int slot;
        long[] freed = freedSlots.peekFirst();
        if (freed != null && ring.consumed() >= freed[1]) {
            freedSlots.pollFirst();
            slot = (int) freed[0];
        } else {
            slot = slotsUsed++;
            if (slot == members.length) {
                members = Arrays.copyOf(members, members.length * 2);
            }
        }
        members[slot] = qp;
        return slot;
    }

    /** {@code slot}'s queue pair writes no more completions; the slot is free once they are all polled. Loop thread. */
    void leave(int slot) {
        freedSlots.addLast(new long[] {slot, ring.published()});
        for (int i = 0; i < stalledCount; i++) {
            if (stalledEngines[i].qp == members[slot]) {
                stalledEngines[i] = stalledEngines[--stalledCount];
                stalledEngines[stalledCount] = null;
                break;
            }
        }
    }

    // ---------------------------------------------------------------- producer (loop thread)

    /** Whether a completion fits now; if not, {@code engine} resumes once the ring was polled. */
    boolean hasRoom(QpEngine engine) {
        if (ring.claim() >= 0) {
            return true;
        }
        stall(engine);
        return false;
    }

    /** Writes one completion for the queue pair in {@code slot}; false (and {@code engine} resumes later) when full. */
    boolean write(QpEngine engine, int slot, long id, int status, int opcode, int bytes, boolean withImm, int imm) {
        long at = ring.claim();
        if (at < 0) {
            stall(engine);
            return false;
        }
        QueueEntries.writeCompletion(ring.producerMemory(), at, slot, id, status, opcode, bytes, withImm, imm);
        ring.publish();
        if (!turnDoneRaised && (listener != null || channel != null)) {
            turnDoneRaised = true;
            turnDone.raise();
        }
        return true;
    }

    private void stall(QpEngine engine) {
        if (!engine.completer.stalled) {
            engine.completer.stalled = true;
            if (stalledCount == stalledEngines.length) {
                stalledEngines = Arrays.copyOf(stalledEngines, stalledCount * 2);
            }
            stalledEngines[stalledCount++] = engine;
        }
        STALLED.setRelease(this, 1);
    }

    /** The ring was polled after it filled: every engine it stopped goes on, in the order they stopped. */
    private void onPolled() {
        QpEngine[] run = stalledEngines;
        int n = stalledCount;
        stalledEngines = resuming.length >= run.length ? resuming : new QpEngine[run.length];
        resuming = run;
        stalledCount = 0;
        for (int i = 0; i < n; i++) {
            QpEngine e = run[i];
            run[i] = null;
            e.completer.stalled = false;
            e.onCompletionsPolled(); // one that finds the ring full again is noted anew
        }
    }

    /**
     * Runs {@code listener} on the loop thread once per loop turn that added completions (null: none), and once soon
     * if completions wait already: those written before it was set would otherwise wait for a turn that adds more,
     * which may never come. Loop thread.
     */
    void listener(Runnable listener) {
        this.listener = listener;
        if (listener != null && ring.size() > 0 && !turnDoneRaised) {
            turnDoneRaised = true;
            turnDone.raise();
        }
    }

    private void onTurnDone() {
        turnDoneRaised = false;
        if (channel != null) {
            // The fence pairs with requestNotification's: either this reads the arm, or the poll after the arm sees
            // the completions this turn published (a store then a load, which the processor may otherwise reorder).
            VarHandle.fullFence();
            if ((int) ARMED.getVolatile(this) != 0 && ARMED.compareAndSet(this, 1, 0)) {
                channel.signal(shared);
            }
        }
        Runnable l = listener;
        if (l == null) {
            return;
        }
        try {
            l.run();
        } catch (RuntimeException | Error e) {
            listenerFailed(e);
        }
    }

    /** A throwing listener fails what it listens for: its queue pair, or every member of a shared queue. */
    private void listenerFailed(Throwable e) {
        for (int i = 0; i < slotsUsed; i++) {
            QueuePair qp = members[i];
            if (qp != null && !qp.engine().isClosed() && qp.engine().state() == QpState.RTS) {
                qp.engine().failure.onFault("the completion listener", e);
            }
        }
    }

    // ---------------------------------------------------------------- consumer (the polling thread)

    /** Moves the oldest completion into {@code into}; false, leaving it untouched, when there is none. */
    boolean poll(WorkCompletion into) {
        long at = ring.peek();
        if (at >= 0) {
            MemorySegment m = ring.consumerMemory();
            QueueEntries.readCompletion(m, at, into);
            into.queuePair = members[QueueEntries.completionSlot(m, at)];
            ring.advance();
        }
        // Also when nothing was there: the loop may have found the ring full just before it was emptied.
        if ((int) STALLED.getAcquire(this) != 0 && STALLED.compareAndSet(this, 1, 0)) {
            resume.raise();
        }
        return at >= 0;
    }

    /**
     * Arms the ring: the end of the next loop turn that writes a completion tells the channel, once
     * (ibv_req_notify_cq(3)). A full fence: the arm must be visible before the caller's next poll reads the ring,
     * or a completion written between the two would neither be polled nor raise the event.
     */
    void requestNotification() {
        ARMED.setVolatile(this, 1);
        VarHandle.fullFence();
    }

    int size() {
        return ring.size();
    }

    int capacity() {
        return ring.capacity();
    }
}
