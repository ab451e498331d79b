package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The ring starts small, doubles when the producer finds it full up to its capacity, and loses, repeats or
 * reorders no entry across a growth, also with the consumer on another thread reading while it grows.
 */
class SpscRingTest {
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG;

    @Test
    void growsWhenFullUpToItsCapacityKeepingTheUnreadEntries() {
        SpscRing ring = new SpscRing(64, 16);
        assertEquals(SpscRing.INITIAL_CAPACITY, ring.allocated());
        long next = 0;
        long expected = 0;
        // Consume a few first, so the unread entries wrap around the small memory when it grows.
        for (int i = 0; i < 5; i++) {
            produce(ring, next++);
            expected = consume(ring, expected);
        }
        for (int i = 0; i < 64; i++) {
            assertTrue(produce(ring, next++), "room for entry " + i);
        }
        assertEquals(64, ring.allocated());
        assertEquals(-1, ring.claim(), "a full ring at its capacity refuses");
        assertEquals(64, ring.size());
        for (int i = 0; i < 64; i++) {
            expected = consume(ring, expected);
        }
        assertEquals(-1, ring.peek());
        assertEquals(next, expected);
    }

    @Test
    void aConsumerOnAnotherThreadSeesEveryEntryOnceAndInOrderWhileTheRingGrows() throws Exception {
        int entries = 1 << 20;
        SpscRing ring = new SpscRing(1 << 12, 16);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread consumer = new Thread(() -> {
            try {
                long expected = 0;
                while (expected < entries) {
                    if (ring.peek() >= 0) {
                        expected = consume(ring, expected);
                    } else {
                        Thread.onSpinWait();
                    }
                    if ((expected & 0xFFFF) == 0) {
                        Thread.yield(); // let the producer run ahead now and then, so the ring has to grow
                    }
                }
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        consumer.start();
        for (long n = 0; n < entries && failed.get() == null; ) {
            if (produce(ring, n)) {
                n++;
            } else {
                Thread.onSpinWait();
            }
        }
        consumer.join();
        if (failed.get() != null) {
            throw new AssertionError("consumer failed", failed.get());
        }
        assertEquals(0, ring.size());
    }

    /** Writes {@code value} and its complement into the next entry; false when the ring is full. */
    private static boolean produce(SpscRing ring, long value) {
        long at = ring.claim();
        if (at < 0) {
            return false;
        }
        ring.producerMemory().set(U64, at, value);
        ring.producerMemory().set(U64, at + 8, ~value);
        ring.publish();
        return true;
    }

    /** Reads the oldest entry, checks it is {@code expected} whole, and returns the value expected next. */
    private static long consume(SpscRing ring, long expected) {
        long at = ring.peek();
        assertTrue(at >= 0, "entry " + expected + " is there");
        assertEquals(expected, ring.consumerMemory().get(U64, at));
        assertEquals(~expected, ring.consumerMemory().get(U64, at + 8), "entry " + expected + " whole");
        ring.advance();
        return expected + 1;
    }
}
