package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link CompletionHandler} that hands every completion to the test thread, in the order the loop
 * dispatched them.
 *
 * <p>{@link #onCompletion} runs on the loop thread; {@link #next} and friends on the test thread. The
 * queue gives the happens-before edge between them, so a test may read whatever a handler wrote before
 * the completion it took.
 */
final class Recorder implements CompletionHandler {
    /** How long a test waits for a completion it expects before failing. */
    static final long WAIT_MILLIS = 5_000;

    /** One reaped completion, stamped with when and on which thread it was dispatched. */
    record Completion(int op, int tag, int result, int flags, long nanos, Thread thread) {
        boolean more() {
            return CqeFlags.hasMore(flags);
        }

        boolean notification() {
            return CqeFlags.isNotification(flags);
        }

        @Override
        public String toString() {
            return Op.name(op) + " tag=" + tag + " result=" + describe(result) + " flags=" + flagNames(flags);
        }
    }

    private final LinkedBlockingQueue<Completion> queue = new LinkedBlockingQueue<>();
    private final List<Completion> taken = new ArrayList<>();

    @Override
    public void onCompletion(int op, int tag, int result, int flags) {
        queue.add(new Completion(op, tag, result, flags, System.nanoTime(), Thread.currentThread()));
    }

    /** The next completion, or a failure naming what came before if none arrives in time. */
    Completion next() throws InterruptedException {
        Completion c = queue.poll(WAIT_MILLIS, TimeUnit.MILLISECONDS);
        if (c == null) {
            fail("no completion within " + WAIT_MILLIS + " ms; " + history());
        }
        taken.add(c);
        return c;
    }

    /** The next {@code count} completions, in dispatch order. */
    List<Completion> next(int count) throws InterruptedException {
        List<Completion> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(next());
        }
        return out;
    }

    /** Completions up to and including the first one without {@link CqeFlags#MORE} for {@code op}. */
    List<Completion> untilFinal(int op) throws InterruptedException {
        List<Completion> out = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            Completion c = next();
            out.add(c);
            if (c.op() == op && !c.more()) {
                return out;
            }
        }
        return fail("no final " + Op.name(op) + " completion among " + out.size());
    }

    /** Fails if any completion arrives within {@code millis}. */
    void assertQuietFor(long millis) throws InterruptedException {
        Completion c = queue.poll(millis, TimeUnit.MILLISECONDS);
        if (c != null) {
            fail("unexpected completion " + c + "; " + history());
        }
    }

    /** The completions taken so far, the last few of them in full, for failure messages. */
    private String history() {
        int from = Math.max(0, taken.size() - 12);
        return taken.size() + " taken before" + (from > 0 ? ", the last 12: " : ": ") + taken.subList(from, taken.size());
    }

    /** "-111 (ECONNREFUSED)" for errors, the plain number otherwise. */
    static String describe(int result) {
        return result < 0 ? result + " (" + Errno.name(result) + ")" : Integer.toString(result);
    }

    static String flagNames(int flags) {
        StringBuilder s = new StringBuilder();
        if ((flags & CqeFlags.BUFFER) != 0) {
            s.append("BUFFER(").append(CqeFlags.bufferId(flags)).append(")|");
        }
        if ((flags & CqeFlags.MORE) != 0) {
            s.append("MORE|");
        }
        if ((flags & CqeFlags.SOCK_NONEMPTY) != 0) {
            s.append("SOCK_NONEMPTY|");
        }
        if ((flags & CqeFlags.NOTIF) != 0) {
            s.append("NOTIF|");
        }
        if ((flags & CqeFlags.BUF_MORE) != 0) {
            s.append("BUF_MORE|");
        }
        return s.isEmpty() ? "0" : s.substring(0, s.length() - 1);
    }
}
