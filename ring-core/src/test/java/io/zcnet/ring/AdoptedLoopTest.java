package io.zcnet.ring;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A loop {@linkplain EventLoopThread#adopt adopted} by the thread that opened it: that thread runs jobs at once
 * and drives the loop itself; other threads may only hand it tasks.
 */
class AdoptedLoopTest {

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void theAdoptingThreadRunsJobsAtOnceAndItsPollsCompleteTheirOperations(EventLoopConfig.Choice choice)
            throws Exception {
        RequiresUring.assumeUsable(choice);
        EventLoopThread adopted = EventLoopThread.adopt(EventLoopConfig.defaults().withEngine(choice));
        try {
            assertTrue(adopted.isAdopted());
            assertSame(Thread.currentThread(), adopted.thread());
            assertEquals(choice.name(), adopted.loop().engine().name());
            List<int[]> completions = new ArrayList<>();
            AtomicReference<Thread> ranOn = new AtomicReference<>();
            adopted.runDriving(() -> {
                ranOn.set(Thread.currentThread());
                EventLoop loop = adopted.loop();
                int handler = loop.registerHandler((op, tag, result, flags) -> completions.add(new int[] {op, result}));
                loop.timeout(handler, 1, TimeUnit.MILLISECONDS.toNanos(20));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (completions.isEmpty() && System.nanoTime() < deadline) {
                    loop.poll(TimeUnit.MILLISECONDS.toNanos(5));
                }
            });
            assertSame(Thread.currentThread(), ranOn.get(), "the job ran on the adopting thread, at once");
            assertEquals(1, completions.size(), "the adopting thread's polls completed the timeout");
            assertEquals(Op.TIMEOUT, completions.getFirst()[0]);
            assertEquals(-Errno.ETIME, completions.getFirst()[1]);
            assertEquals(42, (int) adopted.call(() -> 42), "call() on the adopting thread runs at once");
        } finally {
            adopted.close();
        }
        assertFalse(adopted.isAlive(), "closed");
        adopted.close(); // idempotent
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"URING", "NIO"})
    void otherThreadsMayHandItTasksButNothingThatWaitsForIt(EventLoopConfig.Choice choice) throws Exception {
        RequiresUring.assumeUsable(choice);
        EventLoopThread adopted = EventLoopThread.adopt(EventLoopConfig.defaults().withEngine(choice));
        try {
            adopted.loop().poll(0); // the adopting thread owns the loop from its first poll
            CompletableFuture<List<String>> refusals = CompletableFuture.supplyAsync(() -> {
                List<String> messages = new ArrayList<>();
                messages.add(assertThrows(IllegalStateException.class, () -> adopted.call(() -> 1)).getMessage());
                messages.add(assertThrows(IllegalStateException.class, () -> adopted.runDriving(() -> { })).getMessage());
                messages.add(assertThrows(IllegalStateException.class, adopted::close).getMessage());
                return messages;
            });
            for (String message : refusals.get(10, TimeUnit.SECONDS)) {
                assertTrue(message.contains(Thread.currentThread().getName()) && message.contains("alone"),
                        "the refusal names the driving thread: " + message);
            }
            assertTrue(adopted.isAlive(), "a refused close from another thread leaves the loop open");

            AtomicReference<Thread> ranOn = new AtomicReference<>();
            Thread other = Thread.ofPlatform().start(() -> adopted.execute(() -> ranOn.set(Thread.currentThread())));
            other.join();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (ranOn.get() == null && System.nanoTime() < deadline) {
                adopted.loop().poll(TimeUnit.MILLISECONDS.toNanos(5));
            }
            assertSame(Thread.currentThread(), ranOn.get(), "a task from another thread ran at the adopting thread's poll");
        } finally {
            adopted.close();
        }
    }
}
