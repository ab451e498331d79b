package io.zcnet.examples;

import io.zcnet.qp.QueuePair;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs one side's data phase of a bulk run on the queue pair's loop thread: {@link #start()} makes a
 * {@link Turn} the queue pair's {@link QueuePair#onCompletions completion listener}, so completions are
 * polled and the next work requests posted inline, on the thread that moves the bytes, with no application
 * thread competing for the cores; the calling thread only waits ({@link #await}) and reads progress. The
 * turn says when the phase is over, or fails; after that it is called no more, and {@link #stop()} gives
 * the queue pair back to the calling thread.
 *
 * <p>Threads: {@link #start()}, {@link #await} and {@link #stop()} from the one thread that ran the control
 * exchange before. That thread must not poll, nor post to a queue the turn posts to, between
 * {@link #start()} and {@link #stop()}. Ordering: what the calling thread did before {@link #start()}
 * happens-before every turn (the listener is installed by a task on the loop thread), and every turn
 * happens-before the return of {@link #stop()} (the listener is removed the same way), so the turn's plain
 * fields may be read after it.
 */
final class LoopDriver {
    /** One pass over the completions on the loop thread; must not block. */
    @FunctionalInterface
    interface Turn {
        /** Polls what completed and posts what is next; true when the phase is over. */
        boolean run() throws IOException;
    }

    private final QueuePair qp;
    private final Turn turn;
    private final CountDownLatch over = new CountDownLatch(1);
    /** Loop thread only. */
    private boolean finished;
    /** Written by the loop thread before {@link #over} counts down, read after it did. */
    private IOException failure;

    LoopDriver(QueuePair qp, Turn turn) {
        this.qp = qp;
        this.turn = turn;
    }

    /** Installs the turn: from now on the loop thread polls this queue pair. */
    void start() {
        qp.onCompletions(this::onCompletions);
    }

    private void onCompletions() {
        if (finished) {
            return; // the calling thread takes the queue pair back: leave what comes to it
        }
        try {
            finished = turn.run();
        } catch (IOException e) {
            failure = e;
            finished = true;
        } catch (RuntimeException e) { // a bug in a turn must not reach the loop, nor leave the caller waiting
            failure = new IOException("the data loop failed: " + e, e);
            finished = true;
        }
        if (finished) {
            over.countDown(); // release: failure and the turn's fields, for the thread that awaits
        }
    }

    /** Waits for the phase to end, however long it takes. */
    void await() throws InterruptedException {
        over.await();
    }

    /** Waits up to {@code nanos} for the phase to end; true once it has. */
    boolean await(long nanos) throws InterruptedException {
        return over.await(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Removes the turn, so the calling thread may poll and post again, and throws what failed the phase, if
     * anything did. Call it once the phase is over, or to abandon it (the queue pair is then closed anyway).
     */
    void stop() throws IOException {
        qp.onCompletions(null);
        if (over.getCount() == 0 && failure != null) { // the count's volatile read orders the failure's
            throw failure;
        }
    }
}
