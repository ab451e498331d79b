package io.zcnet.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A wake-up of the loop that cannot be refused: {@link #raise()} has the loop run this signal's action once,
 * however many times it is raised before the action starts. Unlike {@link EventLoop#execute}, whose queue is
 * bounded and says so with a {@link java.util.concurrent.RejectedExecutionException}, a signal never fails
 * while the loop is open: each one sits in the loop's queue of raised signals at most once, so that queue holds
 * no more than the signals there are, and a thousand queue pairs' doorbells cannot crowd each other out. For
 * the "something to do" of an object that lives as long as it does (a queue pair's doorbell, its end of turn),
 * made once with {@link EventLoop#newSignal}.
 *
 * <p>Any thread may raise. Raised signals run on the loop thread, in the order they were raised, ahead of the
 * tasks queued with {@code execute} in the same turn: a thread that raises and then hands the loop a task (a
 * post, then a close) has them run in that order. A raise while the action runs queues it again, so work that
 * arrives during the action is not missed (the flag is cleared before the action starts).
 */
public final class LoopSignal {
    private static final VarHandle RAISED;

    static {
        try {
            RAISED = MethodHandles.lookup().findVarHandle(LoopSignal.class, "raised", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final EventLoop loop;
    private final Runnable action;
    /** 1 from a raise that queued the signal until its action starts. */
    @SuppressWarnings("unused") // accessed through RAISED
    private volatile int raised;

    LoopSignal(EventLoop loop, Runnable action) {
        this.loop = loop;
        this.action = action;
    }

    /**
     * Has the loop run the action once more, unless a raise since it last started has done so already. Any
     * thread; wakes the loop when called from another. Allocates nothing.
     *
     * @return false only when the loop is closed, and the action will not run
     */
    public boolean raise() {
        if ((int) RAISED.getAcquire(this) != 0 || !RAISED.compareAndSet(this, 0, 1)) {
            return true; // queued already and not started: that run will see what this raise announces
        }
        if (!loop.offerSignal(this)) {
            RAISED.setRelease(this, 0);
            return false;
        }
        return true;
    }

    /** {@return whether the signal is raised and its action has not started yet} Any thread. */
    public boolean isRaised() {
        return (int) RAISED.getAcquire(this) != 0;
    }

    /** Loop thread: clears the flag, then runs the action, so a raise during it queues the signal again. */
    void run() {
        RAISED.setVolatile(this, 0); // volatile: a raiser that misses this run sees 0 and queues another
        action.run();
    }

    @Override
    public String toString() {
        return "LoopSignal[" + action + (isRaised() ? " raised" : "") + "]";
    }
}
