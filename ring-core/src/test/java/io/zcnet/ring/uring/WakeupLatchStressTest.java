package io.zcnet.ring.uring;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Waker threads against one sleeper on a {@link WakeupLatch} whose signal releases a semaphore permit,
 * as a write adds to the eventfd's counter; the sleeper blocks by taking a permit and drains the rest
 * when it wakes, as the eventfd read does.
 *
 * <p>Lost wake-ups are found by counting, not timing. Wakers number their wake-ups in the order they
 * start them; each time the sleeper wakes it notes the highest number started so far. A wake-up with a
 * higher number is owed to the sleeper, and once it has returned it must have made the next
 * announcement fail or left a permit: an announcement that succeeds while an owed wake-up has returned
 * and no permit is pending is a lost wake-up. So is a block that no permit ends within
 * {@link #STUCK_MILLIS}, far beyond any scheduling delay; in every other round only one waker wakes the
 * sleeper, so no other wake-up can hide a lost one. Each test runs for a bounded number of rounds or a
 * time budget, whichever ends first, and every wait is bounded.
 */
class WakeupLatchStressTest {
    private static final int WAKERS = 3;
    private static final long BUDGET_NANOS = TimeUnit.MILLISECONDS.toNanos(1_500);
    private static final int ROUNDS = 100_000;
    /** A block with no signal for this long is a lost wake-up, not a slow thread. */
    private static final long STUCK_MILLIS = 5_000;
    private static final long JOIN_MILLIS = 10_000;

    @Test
    void noWakeUpIsLost() throws Exception {
        Semaphore permits = new Semaphore(0);
        AtomicLong signals = new AtomicLong();
        WakeupLatch latch = new WakeupLatch(() -> {
            permits.release();
            signals.incrementAndGet();
            slowDown(); // a waker preempted after its write keeps the latch SIGNALLING
        });
        Sleeper sleeper = new Sleeper(latch, permits);
        List<Thread> wakers = new ArrayList<>();
        for (int i = 0; i < WAKERS; i++) {
            int id = i;
            wakers.add(Thread.ofPlatform().daemon().name("waker-" + i).start(() -> {
                long seen = 0;
                while (!sleeper.stop) {
                    long round = sleeper.round;
                    if (round == seen) {
                        Thread.onSpinWait();
                        Thread.yield();
                        continue;
                    }
                    seen = round;
                    // Even rounds: every waker, racing each other. Odd rounds: one waker alone.
                    if (round % 2 == 0 || (round / 2) % WAKERS == id) {
                        slowDown(); // at a random point of the round
                        sleeper.wake();
                    }
                }
            }));
        }
        Thread sleeping = Thread.ofPlatform().daemon().name("sleeper").start(sleeper);
        long deadline = System.nanoTime() + BUDGET_NANOS;
        while (sleeper.round < ROUNDS && sleeping.isAlive() && System.nanoTime() - deadline < 0) {
            Thread.sleep(10);
        }
        sleeper.stop = true;
        for (Thread waker : wakers) {
            waker.join(JOIN_MILLIS);
            assertFalse(waker.isAlive(), waker.getName() + " did not stop");
        }
        sleeper.wake(); // the sleeper may be blocked: this last wake-up must reach it too
        sleeping.join(JOIN_MILLIS + STUCK_MILLIS);
        assertFalse(sleeping.isAlive(), "the sleeper never saw the last wake-up: " + sleeper);
        assertNull(sleeper.lost.get(), sleeper.toString());
        assertTrue(signals.get() > 0 && sleeper.refused > 0, "both wake-up paths ran: " + sleeper);
    }

    /** The loop thread: announces, blocks on the semaphore (now and then with a short timeout, as a timed poll), wakes. */
    private static final class Sleeper implements Runnable {
        private final WakeupLatch latch;
        private final Semaphore permits;
        /** Numbers the wake-ups in the order they start. */
        private final AtomicLong started = new AtomicLong();
        /** The highest number among the wake-ups that have returned. */
        private final AtomicLong returned = new AtomicLong();
        private final AtomicReference<String> lost = new AtomicReference<>();
        /** Advances each time the sleeper has woken; wakers wait for it. */
        volatile long round;
        volatile boolean stop;
        long refused;
        long signalled;
        long timedOut;

        Sleeper(WakeupLatch latch, Semaphore permits) {
            this.latch = latch;
            this.permits = permits;
        }

        /** A waker: one wake-up, numbered. */
        void wake() {
            long number = started.incrementAndGet();
            latch.wakeup();
            returned.accumulateAndGet(number, Math::max);
        }

        /** Rounds until stopped; a stop is seen only at the top of a round, as a loop sees its stop flag. */
        @Override
        public void run() {
            long owedAfter = started.get(); // wake-ups numbered above this are owed to the sleeper
            boolean woke = true;
            try {
                while (!stop) {
                    if (woke) {
                        round++; // only this thread writes it
                    }
                    slowDown(); // the loop's work while awake
                    long returnedBefore = returned.get();
                    if (!latch.announceSleep()) {
                        refused++;
                        owedAfter = started.get();
                        woke = true;
                        continue;
                    }
                    if (returnedBefore > owedAfter && permits.availablePermits() == 0) {
                        lost.set("wake-up " + returnedBefore + " started after the sleeper woke (at " + owedAfter
                                + ") and returned before it announced, yet the announcement succeeded with no "
                                + "signal pending; round " + round);
                        return;
                    }
                    boolean timedPoll = ThreadLocalRandom.current().nextInt(4) == 0;
                    woke = timedPoll
                            ? permits.tryAcquire(ThreadLocalRandom.current().nextInt(200), TimeUnit.MICROSECONDS)
                            : permits.tryAcquire(STUCK_MILLIS, TimeUnit.MILLISECONDS);
                    latch.endSleep();
                    if (woke) {
                        permits.drainPermits();
                        signalled++;
                        owedAfter = started.get();
                    } else if (timedPoll) {
                        timedOut++; // what was owed stays owed, and the round goes on
                    } else {
                        lost.set("blocked " + STUCK_MILLIS + " ms with no signal; wake-ups up to " + returned.get()
                                + " returned, owed after " + owedAfter + "; round " + round);
                        return;
                    }
                }
            } catch (InterruptedException e) {
                lost.set("interrupted");
            }
        }

        @Override
        public String toString() {
            return "round " + round + ", wake-ups " + started.get() + ", announcements refused " + refused
                    + ", signalled sleeps " + signalled + ", timed-out sleeps " + timedOut + ", latch " + latch
                    + ", lost: " + lost.get();
        }
    }

    @Test
    void noSignalIsWrittenOnceShutOut() throws Exception {
        AtomicLong signals = new AtomicLong();
        AtomicLong late = new AtomicLong();
        AtomicReference<String> firstLate = new AtomicReference<>();
        AtomicReference<Episode> current = new AtomicReference<>(new Episode(signals, late, firstLate));
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> wakers = new ArrayList<>();
        for (int i = 0; i < WAKERS; i++) {
            wakers.add(Thread.ofPlatform().daemon().name("waker-" + i).start(() -> {
                while (!stop.get()) {
                    current.get().latch.wakeup(); // often a latch the sleeper has shut out already
                    Thread.yield();
                }
            }));
        }
        long deadline = System.nanoTime() + BUDGET_NANOS;
        int episodes = 0;
        while (episodes < ROUNDS && System.nanoTime() - deadline < 0) {
            Episode e = new Episode(signals, late, firstLate);
            current.set(e);
            for (int r = ThreadLocalRandom.current().nextInt(4); r > 0; r--) {
                if (e.latch.announceSleep()) {
                    e.permits.tryAcquire(ThreadLocalRandom.current().nextInt(100), TimeUnit.MICROSECONDS);
                    e.latch.endSleep();
                }
            }
            e.latch.shutOut();
            e.shutOut = true; // from here on a signal would write to a closed, maybe reused, eventfd
            episodes++;
        }
        Episode last = current.get();
        stop.set(true);
        for (Thread waker : wakers) {
            waker.join(JOIN_MILLIS);
            assertFalse(waker.isAlive(), waker.getName() + " did not stop");
        }
        last.latch.wakeup();
        assertEquals(0, late.get(), "signals after shutOut() in " + episodes + " episodes: " + firstLate.get());
        assertTrue(signals.get() > 0, "wakers signalled sleepers in " + episodes + " episodes");
    }

    /** One latch from creation to shutOut(), with a signal that notices being written after it. */
    private static final class Episode {
        final Semaphore permits = new Semaphore(0);
        final WakeupLatch latch;
        volatile boolean shutOut;

        Episode(AtomicLong signals, AtomicLong late, AtomicReference<String> firstLate) {
            this.latch = new WakeupLatch(() -> {
                boolean before = shutOut;
                permits.release();
                slowDown(); // the write is not instant: shutOut() must wait for it to end
                if (before || shutOut) {
                    late.incrementAndGet();
                    firstLate.compareAndSet(null, before ? "signal began after shutOut()" : "shutOut() returned mid-signal");
                }
                signals.incrementAndGet();
            });
        }
    }

    /** Now and then, a pause of a few hundred nanoseconds or a yield: widens the windows races need. */
    private static void slowDown() {
        int dice = ThreadLocalRandom.current().nextInt(16);
        if (dice == 0) {
            Thread.yield();
        } else if (dice < 4) {
            for (int i = ThreadLocalRandom.current().nextInt(200); i > 0; i--) {
                Thread.onSpinWait();
            }
        }
    }
}
