package io.zcnet.ring;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class BackoffWaitTest {
    /** Parks so long that a pause which returns soon was ended by someone, not by its time. */
    private static final long LONG_PARK = TimeUnit.SECONDS.toNanos(20);
    private static final long SOON = TimeUnit.SECONDS.toNanos(5);

    @Test
    void aWaitSpinsFirstThenParksUntilUnparkedAndARestartSpinsAgain() throws Exception {
        BackoffWait wait = new BackoffWait(3, 2, LONG_PARK, LONG_PARK);
        Thread waiter = Thread.currentThread();
        Thread unparker = Thread.ofPlatform().start(() -> {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
            LockSupport.unpark(waiter);
        });
        wait.restart();
        long start = System.nanoTime();
        int pauses = 0;
        while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(50)) {
            wait.pause();
            pauses++;
        }
        long waited = System.nanoTime() - start;
        unparker.join();
        int paused = pauses;
        assertTrue(paused <= 10, () -> "paused " + paused + " times before parking: the 3 spins and 2 yields asked are fewer");
        assertTrue(waited < SOON, () -> "the park ended after " + waited / 1_000_000 + " ms, not at the unpark");

        wait.restart();
        long again = System.nanoTime();
        wait.pause();
        long spun = System.nanoTime() - again;
        assertTrue(spun < SOON, () -> "the first pause after a restart took " + spun / 1_000_000 + " ms: it parked");
    }

    @Test
    void anInterruptEndsAParkAtOnceAndIsKept() {
        BackoffWait wait = new BackoffWait(0, 0, LONG_PARK, LONG_PARK);
        wait.restart();
        Thread.currentThread().interrupt();
        long start = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            wait.pause();
        }
        long waited = System.nanoTime() - start;
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
        assertTrue(waited < SOON, () -> "parked " + waited / 1_000_000 + " ms though interrupted");
    }

    @Test
    void refusesParksOutOfOrder() {
        assertThrows(IllegalArgumentException.class, () -> new BackoffWait(1, 1, 100, 10));
        assertThrows(IllegalArgumentException.class, () -> new BackoffWait(-1, 1, 10, 100));
    }
}
