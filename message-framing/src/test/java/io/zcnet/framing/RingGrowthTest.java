package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The tables that start small and grow on demand up to their bound: every held entry keeps its value (and a
 * receive its list) across a growth, wrapped around the small arrays or not, and none grows past its bound.
 */
class RingGrowthTest {

    @Test
    void grownArraysKeepEachHeldSequenceAtItsNewPlace() {
        long[] old = new long[4];
        for (long seq = 6; seq < 10; seq++) { // wraps: slots 2, 3, 0, 1
            old[(int) seq & 3] = 100 + seq;
        }
        long[] grown = RingArrays.grown(old, 16, 6, 10);
        assertEquals(16, grown.length);
        for (long seq = 6; seq < 10; seq++) {
            assertEquals(100 + seq, grown[(int) seq & 15], "sequence " + seq);
        }
        assertArrayEquals(new boolean[8], RingArrays.grown(new boolean[4], 8, 0, 0));
        SgeList[] lists = SgeList.table(4, 2);
        SgeList[] grownLists = RingArrays.grownLists(lists, 8, 6, 10, 2);
        for (long seq = 6; seq < 10; seq++) {
            assertSame(lists[(int) seq & 3], grownLists[(int) seq & 7], "list of sequence " + seq);
        }
        for (SgeList l : grownLists) {
            assertNotNull(l);
            assertEquals(2, l.capacity());
        }
    }

    @Test
    void completionQueueGrowsUpToItsCapacityInOrder() {
        CompletionQueue queue = new CompletionQueue(64);
        assertEquals(CompletionQueue.INITIAL_CAPACITY, queue.allocated());
        assertEquals(64, queue.capacity());
        Completion c = new Completion();
        for (int n = 0; n < 5; n++) { // so the held ones wrap when the arrays grow
            assertTrue(queue.offer(n, 0, 0, n, 0, n));
            assertTrue(queue.poll(c));
        }
        for (int n = 5; n < 69; n++) {
            assertTrue(queue.offer(n, 1, 2, 3 * n, 4 * n, n), "room for completion " + n);
        }
        assertEquals(64, queue.allocated());
        assertFalse(queue.offer(99, 0, 0, 0, 0, 0), "full at its capacity");
        assertEquals(0, queue.remaining());
        for (int n = 5; n < 69; n++) {
            assertTrue(queue.poll(c));
            assertEquals(n, c.workRequestId());
            assertEquals(3 * n, c.byteCount());
            assertEquals(4 * n, c.immediate());
            assertEquals(n, c.msn());
        }
        assertFalse(queue.poll(c));
    }

    @Test
    void receiveQueueGrowsUpToItsCapacityAndKeepsEachReceivesList() {
        ReceiveQueue queue = new ReceiveQueue(64, 2);
        assertEquals(ReceiveQueue.INITIAL_CAPACITY, queue.allocated());
        for (int n = 0; n < 5; n++) {
            queue.claim().add(1, n, 1);
            queue.post(n);
            queue.consume();
        }
        SgeList[] lists = new SgeList[64];
        for (int n = 0; n < 64; n++) {
            SgeList list = queue.claim();
            assertNotNull(list, "room for receive " + n);
            list.add(7, 100L * n, n + 1);
            queue.post(1000 + n);
            lists[n] = list;
        }
        assertEquals(64, queue.allocated());
        assertNull(queue.claim(), "full at its capacity");
        for (int n = 0; n < 64; n++) {
            long index = 5 + n;
            assertTrue(queue.isPosted(index));
            assertEquals(1000 + n, queue.workRequestId(index));
            assertSame(lists[n], queue.pieces(index), "receive " + n + " keeps its list");
            assertEquals(100L * n, queue.pieces(index).offset(0));
        }
    }
}
