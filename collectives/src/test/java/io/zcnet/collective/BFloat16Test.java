package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BFloat16Test {

    @Test
    void valuesWithEightSignificantBitsRoundTripExactly() {
        for (float f : new float[] {0f, -0f, 1f, -2f, 255f, 256f, 3.5f, 0x1p100f, Float.POSITIVE_INFINITY,
            Float.NEGATIVE_INFINITY, Float.MIN_NORMAL}) {
            assertEquals(f, BFloat16.toFloat(BFloat16.fromFloat(f)), "value " + f);
        }
        assertEquals((short) 0x3F80, BFloat16.fromFloat(1f));
        assertEquals((short) 0xC000, BFloat16.fromFloat(-2f));
    }

    @Test
    void narrowingRoundsToNearestWithTiesToEven() {
        // 257 lies halfway between 256 and 258: the tie goes to 256, whose last kept bit is even.
        assertEquals(256f, BFloat16.toFloat(BFloat16.fromFloat(257f)));
        // 259 is halfway between 258 and 260: 260 is the even one.
        assertEquals(260f, BFloat16.toFloat(BFloat16.fromFloat(259f)));
        assertEquals(258f, BFloat16.toFloat(BFloat16.fromFloat(258.9f)), "below the half rounds down");
        assertEquals(260f, BFloat16.toFloat(BFloat16.fromFloat(259.1f)), "above the half rounds up");
        assertEquals(Float.POSITIVE_INFINITY, BFloat16.toFloat(BFloat16.fromFloat(Float.MAX_VALUE)),
                "past the largest bfloat16 rounds to infinity");
    }

    @Test
    void aNanStaysANanEvenWhenItsHighFractionBitsAreZero() {
        float nan = Float.intBitsToFloat(0x7F80_0001); // only a low fraction bit set: truncation would give infinity
        assertTrue(Float.isNaN(BFloat16.toFloat(BFloat16.fromFloat(nan))));
        assertTrue(Float.isNaN(BFloat16.toFloat(BFloat16.fromFloat(Float.NaN))));
    }
}
