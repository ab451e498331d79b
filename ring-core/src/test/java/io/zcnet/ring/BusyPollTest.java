package io.zcnet.ring;

import io.zcnet.ring.uring.Uring;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Busy-poll mode: an {@link EventLoopThread} given an idle strategy never blocks in the kernel,
 * polls without waiting, idles through the strategy, and still runs every operation and task.
 */
class BusyPollTest {

    /** Counts how the loop idles, and idles as the back-off strategy does. */
    private static final class CountingIdle implements LoopIdle {
        final AtomicLong idleRounds = new AtomicLong();
        final AtomicLong busyRounds = new AtomicLong();
        private final LoopIdle delegate = LoopIdle.backoff(10, 20, 1_000, 100_000);

        @Override
        public void idle(int workCount) {
            (workCount > 0 ? busyRounds : idleRounds).incrementAndGet();
            delegate.idle(workCount);
        }
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void aBusyPollingLoopRunsOperationsAndTasksAndStopsPromptly(EventLoopConfig.Choice choice) throws Exception {
        assumeTrue(choice != EventLoopConfig.Choice.URING || Uring.availability().usable(),
                () -> "io_uring not usable: " + Uring.availability().reason());
        CountingIdle idle = new CountingIdle();
        EventLoopThread thread = EventLoopThread.start("busy-" + choice, EventLoopConfig.defaults()
                .withEngine(choice).withIdle(idle));
        try {
            LoopHarness.await(() -> idle.idleRounds.get() > 100,
                    "an idle busy-polling loop to go round its strategy, not into a blocking wait");

            BlockingQueue<int[]> completions = new ArrayBlockingQueue<>(8);
            long start = System.nanoTime();
            thread.call(() -> {
                EventLoop loop = thread.loop();
                int handler = loop.registerHandler((op, tag, result, flags) -> completions.add(new int[] {op, result}));
                loop.nop(handler, 1);
                return loop.timeout(handler, 2, TimeUnit.MILLISECONDS.toNanos(50));
            });
            int[] nop = completions.poll(5, TimeUnit.SECONDS);
            assertNotNull(nop, "NOP completed");
            assertEquals(Op.NOP, nop[0]);
            assertEquals(0, nop[1]);
            int[] timeout = completions.poll(5, TimeUnit.SECONDS);
            assertNotNull(timeout, "timeout completed");
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertEquals(Op.TIMEOUT, timeout[0]);
            assertEquals(-Errno.ETIME, timeout[1]);
            assertTrue(elapsedMillis >= 50, "timeout fired after " + elapsedMillis + " ms");
            assertTrue(idle.busyRounds.get() >= 1, "rounds that did work are reported to the strategy as such");
        } finally {
            long closeStart = System.nanoTime();
            thread.close();
            long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closeStart);
            assertTrue(closeMillis < 10_000, "a busy-polling loop stops, took " + closeMillis + " ms");
            assertFalse(thread.isAlive());
        }
    }
}
