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
}
