package io.zcnet.ring;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
        RequiresUring.assumeUsable(choice);
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

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void theCallerOfADrivingJobOnABusyPollingLoopPollsInsteadOfSleeping(EventLoopConfig.Choice choice)
            throws Exception {
        RequiresUring.assumeUsable(choice);
        EventLoopThread thread = EventLoopThread.start("busy-job-" + choice, EventLoopConfig.defaults()
                .withEngine(choice).withIdle(LoopIdle.yielding()));
        Thread caller = Thread.currentThread();
        Set<Thread.State> callerStates = ConcurrentHashMap.newKeySet();
        AtomicBoolean jobRunning = new AtomicBoolean();
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        Thread sampler = Thread.ofPlatform().name("busy-job-sampler").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                if (jobRunning.get()) {
                    Thread.State state = caller.getState();
                    // Kept only if the job still ran after the look: once the last job ends, the caller goes on to
                    // join this thread, a wait that is not the job's.
                    if (jobRunning.get()) {
                        callerStates.add(state);
                    }
                }
                Thread.onSpinWait();
            }
        });
        try {
            assertTrue(thread.isBusyPolling());
            for (int round = 0; round < 3; round++) {
                thread.runDriving(() -> {
                    ranOn.set(Thread.currentThread());
                    jobRunning.set(true);
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
                    while (System.nanoTime() < end) {
                        thread.loop().poll(0); // a job that waits on the network long after the caller's spins
                    }
                    jobRunning.set(false);
                });
            }
        } finally {
            sampler.interrupt();
            sampler.join();
            thread.close();
        }
        assertEquals(thread.thread(), ranOn.get(), "the job ran on the loop thread");
        assertTrue(callerStates.contains(Thread.State.RUNNABLE), "the caller was seen waiting: " + callerStates);
        assertFalse(callerStates.contains(Thread.State.TIMED_WAITING) || callerStates.contains(Thread.State.WAITING),
                "in busy-poll mode the caller of a job polls: a park would make the job's end wait for a wake-up: " + callerStates);
    }
}
