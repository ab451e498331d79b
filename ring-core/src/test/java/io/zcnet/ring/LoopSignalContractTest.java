package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link LoopSignal}: a wake-up that a full task queue cannot refuse, run once per run of raises, and again
 * for a raise during its run. Subclassed once per engine.
 */
@Timeout(60)
abstract class LoopSignalContractTest {

    protected abstract EventLoopConfig.Choice engine();

    /** A loop thread whose task queue holds two tasks. */
    private EventLoopThread tinyQueue() throws Exception {
        EventLoopConfig d = EventLoopConfig.defaults().withEngine(engine());
        return EventLoopThread.start("signal-test", new EventLoopConfig(d.engine(), d.sqEntries(), d.cqEntries(), 2, null));
    }

    /** Holds the loop thread in a task until the returned latch is counted down. */
    private static CountDownLatch hold(EventLoopThread t) throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        t.execute(() -> {
            held.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(held.await(10, TimeUnit.SECONDS));
        return release;
    }

    @Test
    void raisesWhileTheTaskQueueIsFullAreNeverRefusedAndCoalesce() throws Exception {
        try (EventLoopThread t = tinyQueue()) {
            int signals = 100;
            AtomicInteger[] runs = new AtomicInteger[signals];
            List<LoopSignal> made = new ArrayList<>();
            for (int i = 0; i < signals; i++) {
                AtomicInteger count = runs[i] = new AtomicInteger();
                made.add(t.loop().newSignal(count::incrementAndGet));
            }
            CountDownLatch release = hold(t);
            try {
                int queued = 0;
                while (true) {
                    try {
                        t.execute(() -> { });
                        queued++;
                    } catch (RejectedExecutionException full) {
                        break;
                    }
                }
                assertTrue(queued <= 2, "the task queue took " + queued);
                List<Thread> raisers = new ArrayList<>();
                for (int r = 0; r < 4; r++) {
                    raisers.add(Thread.ofPlatform().start(() -> {
                        for (int round = 0; round < 50; round++) {
                            for (LoopSignal s : made) {
                                assertTrue(s.raise());
                            }
                        }
                    }));
                }
                for (Thread r : raisers) {
                    r.join();
                }
                for (LoopSignal s : made) {
                    assertTrue(s.isRaised());
                }
            } finally {
                release.countDown();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadline && made.stream().anyMatch(LoopSignal::isRaised)) {
                Thread.sleep(1);
            }
            t.call(() -> null); // a turn after the last run: every count is final
            for (int i = 0; i < signals; i++) {
                assertEquals(1, runs[i].get(), "signal " + i + ": 200 raises while the loop was held run it once");
            }
        }
    }

    @Test
    void aRaiseDuringItsActionRunsItAgain() throws Exception {
        try (EventLoopThread t = EventLoopThread.start("signal-test", EventLoopConfig.defaults().withEngine(engine()))) {
            AtomicInteger runs = new AtomicInteger();
            CountDownLatch twice = new CountDownLatch(2);
            LoopSignal[] self = new LoopSignal[1];
            self[0] = t.loop().newSignal(() -> {
                if (runs.incrementAndGet() == 1) {
                    assertTrue(self[0].raise()); // work that arrived while it ran
                }
                twice.countDown();
            });
            assertTrue(self[0].raise());
            assertTrue(twice.await(10, TimeUnit.SECONDS), "the raise during the run was lost: " + runs.get() + " runs");
            t.call(() -> null);
            assertEquals(2, runs.get());
        }
    }

    @Test
    void aRaiseAfterTheLoopClosedIsRefusedAndRunsNothing() throws Exception {
        EventLoopThread t = EventLoopThread.start("signal-test", EventLoopConfig.defaults().withEngine(engine()));
        AtomicInteger runs = new AtomicInteger();
        LoopSignal s = t.loop().newSignal(runs::incrementAndGet);
        t.close();
        assertFalse(s.raise());
        assertFalse(s.isRaised());
        assertEquals(0, runs.get());
        assertThrows(IllegalArgumentException.class, () -> t.loop().newSignal(null));
    }
}
