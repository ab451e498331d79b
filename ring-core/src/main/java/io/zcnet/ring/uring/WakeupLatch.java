package io.zcnet.ring.uring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Decides, between one sleeper (the loop's owner thread) and any number of wakers, whether a wake-up
 * needs a system call: a waker writes the loop's eventfd only when the loop announced that it may
 * block, so waking a busy loop costs no syscall.
 *
 * <pre>
 *              wakeup()                          announceSleep() fails and takes the mark
 *   AWAKE ---------------------------&gt; WOKEN ----------------------------------------&gt; AWAKE
 *    | ^
 *    | | endSleep() (unless a waker took it first)
 *    v |
 *   SLEEPING --wakeup() wins the CAS--&gt; SIGNALLING --the signal is written--&gt; AWAKE
 *
 *   any state but SIGNALLING --shutOut()--&gt; CLOSED (final: wakeup() does nothing)
 * </pre>
 *
 * <h2>Threading</h2>
 * {@link #announceSleep}, {@link #endSleep} and {@link #shutOut} are the sleeper's; {@link #wakeup} is
 * for any thread. Every transition is a CAS on one volatile int; the latch orders nothing else (the
 * loop's task queue carries its own happens-before). The signal runs only in SIGNALLING, and
 * {@link #shutOut} waits that state out, so after it returns no signal is written: the eventfd may then
 * be closed and its number reused.
 *
 * <p>The sleeper re-checks its own work queue after a successful {@link #announceSleep}: a waker that
 * finds the latch SIGNALLING or WOKEN writes nothing and leaves no mark of its own.
 */
final class WakeupLatch {
    private static final int AWAKE = 0;
    private static final int SLEEPING = 1;
    /** A waker won the CAS from SLEEPING and is writing the signal; the eventfd must stay open. */
    private static final int SIGNALLING = 2;
    private static final int CLOSED = 3;
    /** A wake-up arrived while the sleeper was awake: its next announcement fails, and costs no syscall. */
    private static final int WOKEN = 4;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(WakeupLatch.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Runnable signal;
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    /** @param signal wakes the blocked sleeper (writes the eventfd); called by a waker in SIGNALLING */
    WakeupLatch(Runnable signal) {
        this.signal = signal;
    }

    /**
     * Sleeper: announces that it is about to block.
     *
     * @return true if it may block until signalled; false when a wake-up came while it was awake (the
     *         mark is taken) or a waker is still SIGNALLING (its write may already have been consumed), so
     *         it must not block this round
     */
    boolean announceSleep() {
        if (STATE.compareAndSet(this, AWAKE, SLEEPING)) {
            return true;
        }
        STATE.compareAndSet(this, WOKEN, AWAKE);
        return false;
    }

    /** Sleeper: the blocking call returned. Fails harmlessly when a waker took SLEEPING: it resets it. */
    void endSleep() {
        STATE.compareAndSet(this, SLEEPING, AWAKE);
    }

    /** Any thread: makes the sleeper's current or next block return. */
    void wakeup() {
        // Awake: leave a mark the next announcement sees instead of writing the eventfd. Losing the CAS
        // means the sleeper has just announced (or closed): fall through to the sleeper case.
        if ((int) STATE.getVolatile(this) == AWAKE && STATE.compareAndSet(this, AWAKE, WOKEN)) {
            return;
        }
        if ((int) STATE.getVolatile(this) == SLEEPING && STATE.compareAndSet(this, SLEEPING, SIGNALLING)) {
            try {
                signal.run();
            } finally {
                STATE.compareAndSet(this, SIGNALLING, AWAKE);
            }
        }
    }

    /** Sleeper: moves to CLOSED once no waker is mid-signal, so no signal can hit a closed or reused fd. */
    void shutOut() {
        while (true) {
            int s = (int) STATE.getVolatile(this);
            if (s == SIGNALLING) {
                Thread.onSpinWait();
            } else if (STATE.compareAndSet(this, s, CLOSED)) {
                return;
            }
        }
    }
}
