package io.zcnet.collective;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who may call a communicator, and when: one call at a time, only the thread that joined when that thread
 * drives the rank ({@link CommunicatorConfig#busyPoll()}), and none once it is closed. A refused call changes
 * nothing. Any thread; what a call did before {@link #leave} happens-before the next {@link #enter} returns.
 */
final class CallGate {
    private final AtomicBoolean busy = new AtomicBoolean();
    /** The thread that joined; null when any thread may call. */
    private final Thread driver;
    /** Written and read only inside a call, so ordered by {@link #busy}. */
    private boolean closed;

    /** @param driver the only thread that may call, or null for any */
    CallGate(Thread driver) {
        this.driver = driver;
    }

    /**
     * Starts a call, which must then {@link #leave}.
     *
     * @throws IllegalStateException on another thread than the driver, while another call runs, or once closed
     */
    void enter() {
        if (driver != null && Thread.currentThread() != driver) {
            throw new IllegalStateException("a busy-polling communicator is driven by the thread that joined it, "
                    + driver.getName() + "; call it there, not on " + Thread.currentThread().getName());
        }
        if (!busy.compareAndSet(false, true)) {
            throw new IllegalStateException("another thread is running an operation of this communicator");
        }
        if (closed) {
            leave();
            throw new IllegalStateException("the communicator is closed");
        }
    }

    /** Ends the call that entered. */
    void leave() {
        busy.set(false);
    }

    /** Refuses every call after this one; inside a call. */
    void close() {
        closed = true;
    }

    /** Whether the communicator is closed: exact inside a call, a hint outside one. */
    boolean isClosed() {
        return closed;
    }
}
