package io.zcnet.ring.uring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Decides, between one sleeper (the loop's owner thread) and any number of wakers, whether a wake-up
 * needs a system call: a waker writes the loop's eventfd only when the loop announced that it may
 * block, so waking a busy loop costs no syscall.
 *
 * <pre>
 *            wakeup()                    announceSleep() fails and takes the mark
 *   AWAKE -------------------&gt; WOKEN ------------------------------------------&gt; AWAKE
 *    | ^                          ^
 *    | | endSleep(), unless       | the write is done
 *    v |  a waker took SLEEPING   |
 *   SLEEPING --wakeup()--&gt; SIGNALLING --wakeup()--&gt; SIGNALLING_WOKEN
 *                              |
 *                              +--the write is done--&gt; AWAKE
 *
 *   any state but SIGNALLING and SIGNALLING_WOKEN --shutOut()--&gt; CLOSED (final)
 * </pre>
 *
 * No wake-up is lost: one that finds the sleeper awake leaves a mark that makes its next
 * {@link #announceSleep} fail; one that finds it SLEEPING writes the signal; one that finds another
 * waker mid-write leaves a mark that waker hands on when done, because the sleeper may have consumed
 * that write already. A waker that loses a CAS looks at the state again.
 *
 * <h2>Threading</h2>
 * {@link #announceSleep}, {@link #endSleep} and {@link #shutOut} are the sleeper's; {@link #wakeup} is
 * for any thread. Every transition is a CAS on one volatile int; the latch orders nothing else (the
 * loop's task queue carries its own happens-before). The signal is written only in SIGNALLING and
 * SIGNALLING_WOKEN, and {@link #shutOut} waits those out, so after it returns no signal is written:
 * the eventfd may then be closed and its number reused.
 */
final class WakeupLatch {
    private static final int AWAKE = 0;
    private static final int SLEEPING = 1;
    /** A waker won the CAS from SLEEPING and is writing the signal; the eventfd must stay open. */
    private static final int SIGNALLING = 2;
    private static final int CLOSED = 3;
    /** A wake-up arrived while the sleeper was awake: its next announcement fails, and costs no syscall. */
    private static final int WOKEN = 4;
    /** SIGNALLING, and another wake-up arrived meanwhile: WOKEN once the write is done. */
    private static final int SIGNALLING_WOKEN = 5;
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

    /** @param signal wakes the blocked sleeper (writes the eventfd); called by the waker that took SLEEPING */
    WakeupLatch(Runnable signal) {
        this.signal = signal;
    }

    /**
     * Sleeper: announces that it is about to block.
     *
     * @return true if it may block until signalled; false when a wake-up came while it was awake (the
     *         mark is taken) or a waker is still writing (the write may already have been consumed), so
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
        while (true) {
            int s = (int) STATE.getVolatile(this);
            if (s == AWAKE) {
                if (STATE.compareAndSet(this, AWAKE, WOKEN)) {
                    return;
                }
            } else if (s == SLEEPING) {
                if (STATE.compareAndSet(this, SLEEPING, SIGNALLING)) {
                    signal();
                    return;
                }
            } else if (s == SIGNALLING) {
                if (STATE.compareAndSet(this, SIGNALLING, SIGNALLING_WOKEN)) {
                    return;
                }
            } else {
                return; // WOKEN or SIGNALLING_WOKEN: a mark is there already; CLOSED: nobody to wake
            }
        }
    }

    private void signal() {
        try {
            signal.run();
        } finally {
            // Only this waker leaves SIGNALLING or SIGNALLING_WOKEN, so if the first CAS fails the second holds.
            if (!STATE.compareAndSet(this, SIGNALLING, AWAKE)) {
                STATE.compareAndSet(this, SIGNALLING_WOKEN, WOKEN);
            }
        }
    }

    /** Sleeper: moves to CLOSED once no waker is mid-write, so no signal can hit a closed or reused fd. */
    void shutOut() {
        while (true) {
            int s = (int) STATE.getVolatile(this);
            if (s == SIGNALLING || s == SIGNALLING_WOKEN) {
                Thread.onSpinWait();
            } else if (STATE.compareAndSet(this, s, CLOSED)) {
                return;
            }
        }
    }

    @Override
    public String toString() {
        return switch ((int) STATE.getVolatile(this)) {
            case AWAKE -> "AWAKE";
            case SLEEPING -> "SLEEPING";
            case SIGNALLING -> "SIGNALLING";
            case CLOSED -> "CLOSED";
            case WOKEN -> "WOKEN";
            default -> "SIGNALLING_WOKEN";
        };
    }
}
