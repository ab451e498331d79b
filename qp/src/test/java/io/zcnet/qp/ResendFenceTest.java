package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The claims of new MSNs stop {@link ResendFence#REACH} past any copy that may still arrive, and only until it is known gone. */
class ResendFenceTest {

    private static final long REACH = ResendFence.REACH;
    private static final long MS = 1_000_000;

    private final ResendFence fence = new ResendFence(4);

    @Test
    void nothingResentOrFailedFencesNothing() {
        assertEquals(Long.MAX_VALUE, fence.limit());
        assertTrue(fence.allows(Long.MAX_VALUE / 2, 0));
        assertEquals(-1, fence.proofWanted(1L << 40));
        fence.sentFresh(0, 5);
        fence.acknowledged(100);
        assertEquals(Long.MAX_VALUE, fence.limit(), "fresh frames alone prove nothing and need nothing");
    }

    @Test
    void aResendFencesUntilAMessageSentAfterItOnTheSameSubflowIsAcknowledged() {
        fence.resent(1, 1000);
        fence.resent(1, 1003);
        assertEquals(1000 + REACH, fence.limit(), "the oldest resend on the subflow sets the limit");
        assertTrue(fence.allows(1000 + REACH, 0));
        assertFalse(fence.allows(1000 + REACH + 1, 0));

        fence.sentFresh(2, 5000);
        fence.acknowledged(6000);
        assertEquals(1000 + REACH, fence.limit(), "a message on another subflow says nothing of this one");

        fence.sentFresh(1, 5001);
        fence.sentFresh(1, 5002);
        fence.acknowledged(5001);
        assertEquals(1000 + REACH, fence.limit(), "the proof is the first message after the resends: 5001, not yet acknowledged");
        fence.acknowledged(5002);
        assertEquals(Long.MAX_VALUE, fence.limit());
    }

    @Test
    void aLaterResendNeedsAProofOfItsOwn() {
        fence.resent(0, 10);
        fence.sentFresh(0, 20);
        fence.resent(0, 15);
        fence.acknowledged(21);
        assertEquals(10 + REACH, fence.limit(), "message 20 left before the second resend: it proves nothing of it");
        fence.sentFresh(0, 30);
        fence.acknowledged(31);
        assertEquals(Long.MAX_VALUE, fence.limit());
    }

    @Test
    void theOldestFloorOfAllSubflowsHolds() {
        fence.resent(0, 500);
        fence.resent(3, 200);
        assertEquals(200 + REACH, fence.limit());
        fence.sentFresh(3, 600);
        fence.acknowledged(601);
        assertEquals(500 + REACH, fence.limit(), "subflow 3 is proven read; subflow 0 is not");
    }

    @Test
    void aFailedSubflowsFramesCountAsArrivingForItsGraceThenNoLonger() {
        fence.failed(2, 700, 0, 10 * MS);
        assertEquals(700 + REACH, fence.limit(), "its unacknowledged frames, from 700 on, may still arrive");
        assertTrue(fence.heldByFailedSubflows());
        assertEquals(10 * MS, fence.goneUntil());
        assertFalse(fence.allows(700 + REACH + 1, 9 * MS));
        assertTrue(fence.allows(700 + REACH + 1, 10 * MS), "the grace is over");
        assertEquals(Long.MAX_VALUE, fence.limit());
        assertFalse(fence.heldByFailedSubflows());
    }

    @Test
    void aFailedSubflowCarriesItsUnprovenResendsIntoItsGrace() {
        fence.resent(1, 300);
        fence.failed(1, 900, 5 * MS, 10 * MS);
        assertEquals(300 + REACH, fence.limit(), "the older resend, not the acknowledged point, is the floor");
        fence.sentFresh(1, 1000);
        fence.acknowledged(2000);
        assertEquals(300 + REACH, fence.limit(), "a later subflow at the same index proves nothing of the failed one");
        assertTrue(fence.allows(300 + REACH + 1, 15 * MS));
    }

    @Test
    void graceEndsAtTheLatestFailure() {
        fence.failed(0, 100, 0, 10 * MS);
        fence.failed(1, 400, 8 * MS, 10 * MS);
        assertEquals(100 + REACH, fence.limit(), "the oldest floor");
        assertEquals(18 * MS, fence.goneUntil());
        assertFalse(fence.allows(100 + REACH + 1, 12 * MS));
        assertTrue(fence.allows(100 + REACH + 1, 18 * MS));
    }

    @Test
    void aLiveFloorWithoutProofAsksForAFrameOnceTheClaimsAreHalfwayToItsLimit() {
        fence.resent(2, 1000);
        assertEquals(-1, fence.proofWanted(1000 + REACH / 2 - 1));
        assertEquals(2, fence.proofWanted(1000 + REACH / 2));
        fence.sentFresh(2, 1000 + REACH / 2);
        assertEquals(-1, fence.proofWanted(1000 + REACH / 2), "a proof is on its way");
        fence.failed(0, 1000, 0, MS);
        assertEquals(-1, fence.proofWanted(1L << 40), "a failed subflow is lifted by time, not by a frame");
    }
}
