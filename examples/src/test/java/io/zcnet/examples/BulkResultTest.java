package io.zcnet.examples;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The result line: one token per figure, parsed the way scripts parse it. */
class BulkResultTest {

    @Test
    void aRunThatLostAPathSaysHowManySubflowsAreStillAlive() {
        BulkPlan plan = new BulkPlan(BulkOp.WRITE, 1 << 20, 32, 0, 15_000_000_000L, false);
        BulkResult result = new BulkResult(plan, 4, 3, 1_000_000_000L, 15_000_000_000L,
                new long[] {300_000_000L, 300_000_000L, 300_000_000L, 100_000_000L}, 45, 2_949_120, 0, "uring");
        Map<String, String> r = BulkRunTest.result(result.line());
        assertEquals("4", r.get("subflows"));
        assertEquals("3", r.get("live"));
        assertEquals("[0:30%,1:30%,2:30%,3:10%]", r.get("shares"));
        assertEquals("45/2949120", r.get("resent"));
        assertEquals("0.533", r.get("gbit/s"));
    }
}
