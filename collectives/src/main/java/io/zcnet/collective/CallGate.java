package io.zcnet.collective;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Who may call a communicator, and when: one call at a time, only the thread that joined when that thread
 * drives the rank ({@link CommunicatorConfig#busyPoll()}), and none once it is closed. A refused call changes
 * nothing. A call holds its {@link Admission} in a try-with-resources block. Any thread; what a call did before
 * its admission closed happens-before the next {@link #enter} returns.
 */
final class CallGate {
    private final AtomicBoolean busy = new AtomicBoolean();
    private final Admission admission = new Admission();
    /** The thread that joined; null when any thread may call. */
    private final Thread driver;
    /** Written inside a call, so ordered by {@link #busy} for the next; closing reads it first outside one. */
    private boolean closed;

    /** @param driver the only thread that may call, or null for any */
    CallGate(Thread driver) {
        this.driver = driver;
    }

    /**
     * Lets a call in.
     *
     * @return what the call closes when it ends: one, reused, so entering allocates nothing
     * @throws IllegalStateException on another thread than the driver, while another call runs, or once closed
     */
    Admission enter() {
        if (driver != null && Thread.currentThread() != driver) {
            throw new IllegalStateException("a busy-polling communicator is driven by the thread that joined it, "
                    + driver.getName() + "; call it there, not on " + Thread.currentThread().getName());
        }
        if (!busy.compareAndSet(false, true)) {
            throw new IllegalStateException("another thread is running an operation of this communicator");
        }
        if (closed) {
            busy.set(false);
            throw new IllegalStateException("the communicator is closed");
        }
        return admission;
    }

    /** Refuses every call after this one; inside a call. */
    void shut() {
        closed = true;
    }

    /** Whether the communicator is closed: exact inside a call, a hint outside one. */
    boolean isClosed() {
        return closed;
    }

    /** The call let in; closing it lets the next one in. */
    final class Admission implements AutoCloseable {
        @Override
        public void close() {
            busy.set(false);
        }
    }
}
