package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class ImmediateTest {

    @Test
    void fieldsRoundTripAndWrapAtTheirWidths() {
        int imm = Immediate.of(Immediate.ALL_TO_ALL, 130, (1 << 20) + 5);
        assertEquals(Immediate.ALL_TO_ALL, Immediate.schedule(imm));
        assertEquals(2, Immediate.sequence(imm), "the sequence wraps at 128");
        assertEquals(5, Immediate.index(imm), "the index wraps at 2^20");
        assertEquals(0b01100_0000010_00000000000000000101, imm, "bits: schedule 31-27, sequence 26-20, index 19-0");
    }

    @Test
    void everyFieldTellsMessagesApart() {
        int base = Immediate.of(Immediate.ALLREDUCE_RING, 7, 9);
        assertNotEquals(base, Immediate.of(Immediate.ALLREDUCE_HALVING_DOUBLING, 7, 9));
        assertNotEquals(base, Immediate.of(Immediate.ALLREDUCE_RING, 8, 9));
        assertNotEquals(base, Immediate.of(Immediate.ALLREDUCE_RING, 7, 10));
        assertEquals("ring allreduce #7 message 9", Immediate.describe(base));
    }

    @Test
    void onlyTheFoldedAllreduceCarriesAHintWhereTheIndexWouldBe() {
        for (int schedule = Immediate.BARRIER; schedule <= Immediate.ALLREDUCE_FOLDED; schedule++) {
            assertEquals(schedule == Immediate.ALLREDUCE_FOLDED, Immediate.carriesHint(schedule), Immediate.name(schedule));
        }
        int hinted = Immediate.of(Immediate.ALLREDUCE_FOLDED, 3, Immediate.maxHint());
        assertEquals(Immediate.maxHint(), Immediate.index(hinted));
        assertEquals(Immediate.ALLREDUCE_FOLDED, Immediate.schedule(hinted), "the hint stays out of the schedule");
        assertEquals(3, Immediate.sequence(hinted), "and out of the sequence");
        assertEquals("folded recursive-doubling allreduce #3 hint " + Immediate.maxHint(), Immediate.describe(hinted));
    }

    @Test
    void aHelloNamesItsRankAndNothingElseIsAHello() {
        assertEquals(65535, Immediate.helloRank(Immediate.hello(65535)));
        assertEquals(0, Immediate.helloRank(Immediate.hello(0)));
        assertEquals(-1, Immediate.helloRank(Immediate.of(Immediate.BARRIER, 0, 0)));
        assertEquals(-1, Immediate.helloRank(0x5B00_0001));
    }
}
