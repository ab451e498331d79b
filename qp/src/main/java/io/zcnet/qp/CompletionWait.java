package io.zcnet.qp;

import io.zcnet.ring.BackoffWait;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How a thread waits for a completion of a queue pair's own queue or of a {@link SharedCompletionQueue}: on the
 * thread that drives the queue's loop it turns the loop; elsewhere it spins briefly, then parks in short steps,
 * since nothing wakes it when a completion comes (a {@link CompletionChannel} does, for a thread that would rather
 * sleep). Allocates nothing.
 */
final class CompletionWait {
    private static final long PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    /** What is polled: a queue pair or a shared completion queue. */
    interface Source {
        boolean poll(WorkCompletion into);
    }

    /** The loop whose completions it waits for: turned when the waiter is its thread. */
    private final QpLoop home;
    private final Source source;
    /** The pauses of the one polling thread (polling is one thread's at a time). */
    private final BackoffWait pauses = new BackoffWait(1_000, 0, PARK_NANOS, PARK_NANOS);

    CompletionWait(QpLoop home, Source source) {
        this.home = home;
        this.source = source;
    }

    /** Waits up to {@code timeout} for a completion into {@code into}; false if none came in time. */
    boolean await(WorkCompletion into, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (home.loop().inLoop()) {
            while (!source.poll(into)) {
                if (!home.turn(deadline)) {
                    return false;
                }
            }
            return true;
        }
        if (source.poll(into)) {
            return true;
        }
        pauses.restart();
        do {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            pauses.pause();
        } while (!source.poll(into));
        return true;
    }

    /** Fills {@code into} from the start with up to {@code into.length} completions; how many. */
    int poll(WorkCompletion[] into) {
        int n = 0;
        while (n < into.length && source.poll(into[n])) {
            n++;
        }
        return n;
    }
}
