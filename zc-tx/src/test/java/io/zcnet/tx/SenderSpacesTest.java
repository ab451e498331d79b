package io.zcnet.tx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The pool alone, no loop: it reuses the space given back last, makes one when none waits, keeps what it is
 * given back until a trim frees what the busiest moment since the last did not need (never below its floor),
 * and frees everything once closed. What senders do with it, on both engines,
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
    void betweenTrimsEverySpaceWaitsAndATrimKeepsWhatTheBusiestMomentNeeded() {
        try (SenderSpaces spaces = new SenderSpaces(SMALL, 1)) {
            SenderSpace first = spaces.take();
            SenderSpace second = spaces.take();
            SenderSpace third = spaces.take();
            spaces.giveBack(first);
            spaces.giveBack(second);
            spaces.giveBack(third);
            assertEquals("made=3 lent=0 idle=3", counts(spaces), "a burst's spaces wait for the next one");
            assertEquals(0, spaces.trim(), "three were lent at once since the last trim: all three are kept");
            assertTrue(spaces.aboveFloor(), "three wait over a floor of one: a later trim may free them");
            for (int round = 0; round < 5; round++) { // a steady load of two at once reuses what waits
                SenderSpace a = spaces.take();
                SenderSpace b = spaces.take();
                spaces.giveBack(b);
                spaces.giveBack(a);
            }
            assertEquals("made=3 lent=0 idle=3", counts(spaces));
            assertEquals(1, spaces.trim(), "two at most since the last trim: one more is freed");
            assertFalse(third.staging.scope().isAlive(), "the top of the stack goes first");
            assertEquals(1, spaces.trim(), "nothing lent since: down to the floor of one");
            assertEquals("made=3 lent=0 idle=1", counts(spaces));
            assertFalse(spaces.aboveFloor(), "at the floor: no trim frees more");
            assertTrue(first.staging.scope().isAlive(), "the floor keeps the one at the bottom");
            assertFalse(second.staging.scope().isAlive());
            assertEquals(0, spaces.trim(), "never below the floor");
            assertSame(first, spaces.take());
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
