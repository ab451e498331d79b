package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import org.junit.jupiter.api.Test;

class ImmediateTest {

    @Test
    void fieldsRoundTripAndWrapAtTheirWidths() {
        int imm = Immediate.of(Schedule.ALL_TO_ALL, 130, (1 << 20) + 5);
        assertEquals(Schedule.ALL_TO_ALL.code, Immediate.schedule(imm));
        assertEquals(2, Immediate.sequence(imm), "the sequence wraps at 128");
        assertEquals(5, Immediate.index(imm), "the index wraps at 2^20");
        assertEquals(0b01100_0000010_00000000000000000101, imm, "bits: schedule 31-27, sequence 26-20, index 19-0");
    }

    @Test
    void everyFieldTellsMessagesApart() {
        int base = Immediate.of(Schedule.ALLREDUCE_RING, 7, 9);
        assertNotEquals(base, Immediate.of(Schedule.ALLREDUCE_HALVING_DOUBLING, 7, 9));
        assertNotEquals(base, Immediate.of(Schedule.ALLREDUCE_RING, 8, 9));
        assertNotEquals(base, Immediate.of(Schedule.ALLREDUCE_RING, 7, 10));
        assertEquals("ring allreduce #7 message 9", Immediate.describe(base));
    }

    @Test
    void theScheduleCodesAreTheWireValuesTheyAlwaysWere() {
        String[] byCode = {null, "BARRIER", "ALLREDUCE_RING", "ALLREDUCE_HALVING_DOUBLING", "REDUCE_SCATTER_RING",
            "ALLGATHER_RING", "ALLGATHER_DIRECT", "BROADCAST_TREE", "BROADCAST_RING", "BROADCAST_DIRECT", "REDUCE_TREE",
            "REDUCE_RING", "ALL_TO_ALL", "ALLREDUCE_FOLDED"};
        assertEquals(byCode.length - 1, Schedule.values().length);
        for (int code = 1; code < byCode.length; code++) {
            assertEquals(code, Schedule.valueOf(byCode[code]).code, byCode[code]);
        }
        assertEquals("schedule 31", Schedule.describe(31));
    }

    @Test
    void onlyTheFoldedAllreduceCarriesAHintWhereTheIndexWouldBe() {
        for (Schedule schedule : Schedule.values()) {
            assertEquals(schedule == Schedule.ALLREDUCE_FOLDED, schedule.carriesHint(), schedule.toString());
        }
        int hinted = Immediate.of(Schedule.ALLREDUCE_FOLDED, 3, Immediate.maxHint());
        assertEquals(Immediate.maxHint(), Immediate.index(hinted));
        assertEquals(Schedule.ALLREDUCE_FOLDED.code, Immediate.schedule(hinted), "the hint stays out of the schedule");
        assertEquals(3, Immediate.sequence(hinted), "and out of the sequence");
        assertEquals("folded recursive-doubling allreduce #3 hint " + Immediate.maxHint(), Immediate.describe(hinted));
    }

    @Test
    void aHelloNamesItsRankAndNothingElseIsAHello() {
        assertEquals(65535, Immediate.helloRank(Immediate.hello(65535)));
        assertEquals(0, Immediate.helloRank(Immediate.hello(0)));
        assertEquals(-1, Immediate.helloRank(Immediate.of(Schedule.BARRIER, 0, 0)));
        assertEquals(-1, Immediate.helloRank(0x5B00_0001));
    }
}
