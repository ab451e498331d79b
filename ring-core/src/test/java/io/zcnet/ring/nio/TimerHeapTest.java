package io.zcnet.ring.nio;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TimerHeapTest {

    @Test
    void pollsInDeadlineOrderAgainstASortedReference() {
        SplittableRandom random = new SplittableRandom(42);
        TimerHeap heap = new TimerHeap(1);
        long[] deadlines = new long[2000];
        for (int id = 0; id < deadlines.length; id++) {
            deadlines[id] = random.nextLong(-1_000_000, 1_000_000);
            heap.add(id, deadlines[id]);
        }
        assertEquals(deadlines.length, heap.size());
        long previous = Long.MIN_VALUE;
        boolean[] seen = new boolean[deadlines.length];
        while (!heap.isEmpty()) {
            long deadline = heap.peekDeadline();
            int id = heap.poll();
            assertEquals(deadlines[id], deadline, "peeked deadline belongs to the polled id");
            assertTrue(deadline >= previous, "deadlines come out in order");
            assertFalse(seen[id], "each id comes out once");
            seen[id] = true;
            previous = deadline;
        }
    }

    @Test
    void removesArbitraryTimersAndKeepsTheRestOrdered() {
        SplittableRandom random = new SplittableRandom(7);
        TimerHeap heap = new TimerHeap(8);
        List<long[]> expected = new ArrayList<>();
        for (int id = 0; id < 500; id++) {
            long deadline = random.nextLong(0, 10_000);
            heap.add(id, deadline);
            expected.add(new long[] {deadline, id});
        }
        for (int id = 0; id < 500; id += 3) {
            assertTrue(heap.remove(id));
            assertFalse(heap.contains(id));
            assertFalse(heap.remove(id), "a removed timer is gone");
        }
        expected.removeIf(e -> e[1] % 3 == 0);
        expected.sort((a, b) -> Long.compare(a[0], b[0]));
        for (long[] e : expected) {
            assertEquals(e[0], heap.peekDeadline());
            int id = heap.poll();
            assertTrue(id % 3 != 0, "removed timer " + id + " came back");
        }
        assertTrue(heap.isEmpty());
    }

    @Test
    void comparesDeadlinesByDifferenceSoNanoTimeMayWrap() {
        TimerHeap heap = new TimerHeap(4);
        long nearWrap = Long.MAX_VALUE - 10;
        heap.add(0, nearWrap + 100); // wraps to a negative value, yet is later
        heap.add(1, nearWrap);
        assertEquals(1, heap.poll());
        assertEquals(0, heap.poll());
    }

    @Test
    void idsAreReusableAfterPollingAndDuplicatesAreRejected() {
        TimerHeap heap = new TimerHeap(2);
        heap.add(5, 10);
        assertThrows(IllegalStateException.class, () -> heap.add(5, 20));
        assertThrows(IllegalArgumentException.class, () -> heap.add(-1, 20));
        assertEquals(5, heap.poll());
        heap.add(5, 30);
        assertTrue(heap.contains(5));
        assertEquals(30, heap.peekDeadline());
    }
}
