package io.zcnet.tx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The pool alone, no loop: it reuses the space given back last, makes one when none waits, keeps at most its
 * bound idle and frees the rest, and frees everything once closed. What senders do with it, on both engines,
 * is in {@link FrameSenderContractTest}.
 */
class SenderSpacesTest {
    private static final SenderConfig SMALL = SenderConfig.defaults().withQueue(8, 1 << 20);

    @Test
    void theSpaceGivenBackLastIsLentFirstAndANewOneIsMadeOnlyWhenNoneWaits() {
        try (SenderSpaces spaces = new SenderSpaces(SMALL)) {
            SenderSpace a = spaces.take();
            SenderSpace b = spaces.take();
            assertNotSame(a, b);
            assertEquals("made=2 lent=2 idle=0", counts(spaces));
            spaces.giveBack(a);
            spaces.giveBack(b);
            assertEquals("made=2 lent=0 idle=2", counts(spaces));
            assertSame(b, spaces.take(), "last in, first out: the warm one");
            assertSame(a, spaces.take());
            assertEquals("made=2 lent=2 idle=0", counts(spaces));
        }
    }

    @Test
    void atMostMaxIdleWaitAndTheRestAreFreed() {
        try (SenderSpaces spaces = new SenderSpaces(SMALL, 1)) {
            SenderSpace kept = spaces.take();
            SenderSpace freed = spaces.take();
            spaces.giveBack(kept);
            spaces.giveBack(freed);
            assertEquals("made=2 lent=0 idle=1", counts(spaces));
            assertTrue(kept.staging.scope().isAlive(), "the first one back is kept");
            assertFalse(freed.staging.scope().isAlive(), "one beyond the bound is freed");
            assertSame(kept, spaces.take());
        }
    }

    @Test
    void closingFreesTheIdleSpacesNowAndTheLentOnesWhenTheyComeBack() {
        SenderSpaces spaces = new SenderSpaces(SMALL);
        SenderSpace idle = spaces.take();
        SenderSpace lent = spaces.take();
        spaces.giveBack(idle);
        spaces.close();
        assertFalse(idle.staging.scope().isAlive());
        assertTrue(lent.staging.scope().isAlive(), "its sender may still be sending from it");
        spaces.giveBack(lent);
        assertFalse(lent.staging.scope().isAlive());
        assertEquals("made=2 lent=0 idle=0", counts(spaces));
        assertThrows(IllegalStateException.class, spaces::take);
        spaces.close();
    }

    @Test
    void spacesAreOfTheConfigurationsSizesAndTheBoundIsChecked() {
        try (SenderSpaces spaces = new SenderSpaces(SMALL)) {
            assertEquals(SenderSpaces.DEFAULT_MAX_IDLE, spaces.maxIdle());
            SenderSpace space = spaces.take();
            assertEquals(8, space.headerLength.length);
            assertEquals(16, space.pieceSegment.length);
            assertEquals(SMALL.stagingBytes(), space.staging.byteSize());
            assertEquals(17, space.batch.capacity(), "a header and a slice a frame, and a staging run");
            assertTrue(spaces.fits(SMALL.withZeroCopyThreshold(0)), "thresholds are the sender's, not the space's");
            assertFalse(spaces.fits(SenderConfig.defaults()));
            spaces.giveBack(space);
        }
        assertThrows(IllegalArgumentException.class, () -> new SenderSpaces(SMALL, -1));
        assertThrows(IllegalArgumentException.class, () -> new SenderSpaces(SMALL, (1 << 16) + 1));
        assertThrows(IllegalArgumentException.class, () -> new SenderSpaces(null));
    }

    /** {@return the pool's counts as the tests compare them} */
    static String counts(SenderSpaces spaces) {
        return "made=" + spaces.made() + " lent=" + spaces.lent() + " idle=" + spaces.idle();
    }
}
