package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.framing.FramingConfig;
import org.junit.jupiter.api.Test;

/** The resend queue holds a message window of the largest messages, and queues a failed subflow's frames once. */
class ResendQueueTest {

    @Test
    void capacityIsAWindowOfTheLargestMessagesRoundedUpAndClamped() {
        // 2^24-1 bytes in 64 KiB segments: 256 frames a message, 64 messages.
        assertEquals(16384, ResendQueue.capacityFor(FramingConfig.defaults()));
        // 168 frames a message, 64 messages: 10752, rounded up.
        assertEquals(16384, ResendQueue.capacityFor(new FramingConfig(100_000, true, 64)));
        assertEquals(ResendQueue.MIN_CAPACITY, ResendQueue.capacityFor(new FramingConfig(1 << 23, true, 1)));
        assertEquals(ResendQueue.MAX_CAPACITY, ResendQueue.capacityFor(
                new FramingConfig(64, true, FramingConfig.largestWindow(64))));
    }

    @Test
    void aFailedSubflowsUnacknowledgedFramesAreQueuedOnceInOrder() {
        SendLedger ledger = new SendLedger(4, 1);
        ResendQueue resends = new ResendQueue(ResendQueue.MIN_CAPACITY);
        for (int e = 0; e < 2; e++) {
            long seq = ledger.append(WorkRequest.RDMA_WRITE, e, true, false, 0, 0, 0, 0, 0);
            int i = ledger.slot(seq);
            ledger.begin(i, 1, e + 1, 3L * e, 3);
            for (int f = 0; f < 3; f++) {
                ledger.handedFrame(i);
                resends.carried(3L * e + f, f == 1 ? 0 : 1);
            }
        }
        resends.queue(1, ledger, 1); // the first entry is acknowledged
        assertTrue(resends.hasResends());
        assertEquals(1, resends.headEntry());
        assertEquals(0, resends.headFrame());
        resends.resent(10);
        assertEquals(2, resends.headFrame());
        resends.skip();
        assertFalse(resends.hasResends());
        resends.queue(1, ledger, 1);
        assertFalse(resends.hasResends(), "a frame waiting or resent is carried by no subflow until carried again");
        assertEquals(1, resends.framesResent());
        assertEquals(10, resends.bytesResent());
    }

    @Test
    void theRecordsGrowAsFramesInFlightNeedAndKeepWhatTheyHeldUpToTheMost() {
        ResendQueue resends = new ResendQueue(256);
        assertEquals(ResendQueue.INITIAL_CAPACITY, resends.capacity());
        SendLedger ledger = new SendLedger(4, 1);
        // Frames 10..109 of one entry, carried alternately by subflows 0 and 1, then a second entry after them.
        long seq = ledger.append(WorkRequest.RDMA_WRITE, 0, true, false, 0, 0, 0, 0, 0);
        int i = ledger.slot(seq);
        assertTrue(resends.fits(10, 10, 110), "100 frames fit the most of 256");
        assertEquals(128, resends.capacity());
        ledger.begin(i, 1, 1, 10, 100);
        for (int f = 0; f < 100; f++) {
            ledger.handedFrame(i);
            resends.carried(10 + f, f % 2);
        }
        resends.queue(1, ledger, 0); // subflow 1 failed: its 50 frames wait
        assertTrue(resends.fits(10, 110, 266), "256 frames in flight: grown to the most");
        assertEquals(256, resends.capacity());
        for (int k = 0; k < 50; k++) {
            assertEquals(seq, resends.headEntry());
            assertEquals(2L * k + 1, resends.headFrame(), "the waiting frames kept their order across the growth");
            resends.skip();
        }
        assertFalse(resends.hasResends());
        resends.queue(0, ledger, 0);
        assertEquals(0, resends.headFrame(), "subflow 0's records moved with the growth");
        assertFalse(resends.fits(10, 110, 10 + 257), "more frames in flight than the queue pair may have");
        assertEquals(256, resends.capacity());
    }
}
