package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SlicingTest {

    @ParameterizedTest(name = "{0} elements of {1} B over {2} ranks, {3} slots of {5} B, links {4} deep")
    @CsvSource({"0, 4, 3, 2, 8, 4096", "1, 4, 8, 2, 8, 4096", "10, 4, 4, 4, 16, 262144", "3001, 4, 7, 2, 8, 4096",
        "10007, 8, 5, 3, 12, 4096", "8388608, 4, 4, 4, 16, 262144", "1000003, 2, 6, 1, 4, 64",
        "77777, 8, 2, 64, 64, 8388608", "8388608, 4, 4, 4, 4, 262144"})
    void slicesCoverEveryBlockOnceWithinASlotAndWithinTheLinksSlots(long count, int element, int size, int slots,
            int depth, int slotBytes) {
        Slicing s = new Slicing(size);
        s.even(count);
        s.plan(element, slots, depth, slotBytes);
        assertTrue(s.pieces >= 1 && s.pieces <= depth && s.pieces < 2 * depth, "pieces " + s.pieces);
        assertTrue(s.sliceElements * element <= slotBytes, "slice of " + s.sliceElements + " elements");
        for (int b = 0; b < size; b++) {
            long next = s.starts[b];
            for (long loop = 0; loop < s.loops; loop++) {
                for (int i = 0; i < s.pieces; i++) {
                    assertEquals(next, s.first(b, loop, i), "block " + b + " loop " + loop + " piece " + i);
                    next += s.length(b, loop, i);
                }
            }
            assertEquals(s.starts[b + 1], next, "block " + b + " is covered to its end");
            long length = s.starts[b + 1] - s.starts[b];
            assertTrue(length <= count / size + 1 && length >= count / size, "blocks differ by at most one");
        }
    }

    @ParameterizedTest(name = "{0} elements of 4 B over 4 ranks")
    @CsvSource({"256, 1", "65536, 2", "262144, 4", "1048576, 4"})
    void blocksThatFillTheConfiguredSlotsAreCutAsBeforeTheLinksWereDeeper(long count, int pieces) {
        // Up to 4 MiB over four ranks (a block of 1 MiB, four slots of 256 KiB) the deeper ring links change
        // nothing: the same slices, as many at once; small and mid-sized operations send what they sent.
        Slicing shallow = new Slicing(4);
        shallow.even(count);
        shallow.plan(4, 4, 4, 262144);
        Slicing deep = new Slicing(4);
        deep.even(count);
        deep.plan(4, 4, 16, 262144);
        assertEquals(shallow.sliceElements, deep.sliceElements);
        assertEquals(shallow.pieces, deep.pieces);
        assertEquals(pieces, deep.pieces);
        assertEquals(shallow.loops, deep.loops);
    }

    @Test
    void aLargeBlockHasAsManySlicesInFlightAsTheLinksHoldAndFewerLoops() {
        Slicing s = new Slicing(4);
        s.even(16L << 20); // 64 MiB of floats: blocks of 16 MiB, 64 slots' worth each
        s.plan(4, 4, 16, 262144);
        assertEquals(65536, s.sliceElements, "full slots");
        assertEquals(16, s.pieces, "as deep as the links");
        assertEquals(4, s.loops);
    }
}
