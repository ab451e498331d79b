package io.zcnet.ring.uring;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The latch's transitions one at a time, on one thread; {@link WakeupLatchStressTest} races them. */
class WakeupLatchTest {
    private int signals;

    @Test
    void aWakeUpWhileAwakeLeavesAMarkInsteadOfASignal() {
        WakeupLatch latch = new WakeupLatch(() -> signals++);
        latch.wakeup();
        latch.wakeup();
        assertEquals("WOKEN", latch.toString());
        assertFalse(latch.announceSleep(), "the mark keeps the next sleep from blocking");
        assertTrue(latch.announceSleep(), "and is taken by it: " + latch);
        assertEquals(0, signals);
    }

    @Test
    void aWakeUpWhileSleepingSignalsOnce() {
        WakeupLatch latch = new WakeupLatch(() -> signals++);
        assertTrue(latch.announceSleep());
        latch.wakeup();
        assertEquals(1, signals);
        latch.endSleep();
        assertEquals("AWAKE", latch.toString());
        assertTrue(latch.announceSleep(), "the signal left no mark behind");
    }

    @Test
    void aWakeUpDuringAnotherWakersSignalIsNotLost() {
        boolean[] announcedMidSignal = new boolean[1];
        WakeupLatch[] latch = new WakeupLatch[1];
        latch[0] = new WakeupLatch(() -> {
            if (signals++ == 0) {
                // The sleeper wakes on this write and goes round again before the waker is done...
                latch[0].endSleep();
                announcedMidSignal[0] = latch[0].announceSleep();
                // ...and a second waker comes while the first is still writing.
                latch[0].wakeup();
            }
        });
        assertTrue(latch[0].announceSleep());
        latch[0].wakeup();
        assertFalse(announcedMidSignal[0], "no sleep while a waker is still writing");
        assertEquals(1, signals, "the second waker wrote nothing");
        assertFalse(latch[0].announceSleep(), "the second wake-up is kept as a mark: " + latch[0]);
        assertTrue(latch[0].announceSleep());
    }

    @Test
    void nothingIsSignalledOnceShutOut() {
        WakeupLatch latch = new WakeupLatch(() -> signals++);
        assertTrue(latch.announceSleep());
        latch.shutOut();
        latch.wakeup();
        assertEquals("CLOSED", latch.toString());
        assertEquals(0, signals);
    }
}
