package io.zcnet.ring;

/**
 * The pause between two looks of a thread that waits for a loop it does not run (a completion, a collective's
 * next message, a close's last frames): it spins, then yields, then parks in steps that double from the shortest
 * park to the longest ({@link LoopIdle#backoff}). A wait that ends within microseconds so costs no wake-up, and
 * one that lasts costs no core. The caller looks for what it waits for between pauses and decides itself when
 * the wait ends (a deadline, an interrupt, a failure); a thread that {@link java.util.concurrent.locks.LockSupport#unpark
 * unparks} the waiter ends its park at once. An interrupt ends a park at once too and is kept: a wait that must
 * stop on one looks at the interrupt status itself.
 *
 * <p>One waiting thread at a time: the backoff's state is the waiter's. Made once per waiter and
 * {@linkplain #restart restarted} per wait, it allocates nothing.
 */
public final class BackoffWait {
    private final LoopIdle backoff;

    /**
     * A wait that spins, yields, then parks as these say.
     *
     * @param spins        pauses spent spinning ({@link Thread#onSpinWait()}) before yielding
     * @param yields       pauses spent yielding the core before parking
     * @param minParkNanos the first park
     * @param maxParkNanos the longest park, and so the longest a wait sleeps past what it waits for when nobody
     *                     unparks it
     */
    public BackoffWait(long spins, long yields, long minParkNanos, long maxParkNanos) {
        if (spins < 0 || yields < 0 || minParkNanos <= 0 || maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException("spins " + spins + ", yields " + yields + ", parks " + minParkNanos
                    + ".." + maxParkNanos + " ns: counts must not be negative, parks positive and in order");
        }
        this.backoff = LoopIdle.backoff(spins, yields, minParkNanos, maxParkNanos);
    }

    /** Starts a new wait: its pauses spin again first. The waiting thread only. */
    public void restart() {
        backoff.idle(1); // work done: the backoff starts over
    }

    /** Pauses once after a look that found nothing, as the wait's count of pauses so far says. The waiting thread only. */
    public void pause() {
        backoff.idle(0);
    }
}
