package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SlicingTest {

    @ParameterizedTest(name = "{0} elements of {1} B over {2} ranks, {3} slots of {4} B")
    @CsvSource({"0, 4, 3, 2, 4096", "1, 4, 8, 2, 4096", "10, 4, 4, 4, 262144", "3001, 4, 7, 2, 4096",
        "10007, 8, 5, 3, 4096", "8388608, 4, 4, 4, 262144", "1000003, 2, 6, 1, 64", "77777, 8, 2, 64, 8388608"})
    void slicesCoverEveryBlockOnceWithinASlotAndBelowTwiceTheSlots(long count, int element, int size, int slots,
            int slotBytes) {
        Slicing s = new Slicing(size);
        s.even(count);
        s.plan(element, slots, slotBytes);
        assertTrue(s.pieces >= 1 && s.pieces <= slots && s.pieces < 2 * slots, "pieces " + s.pieces);
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
}
