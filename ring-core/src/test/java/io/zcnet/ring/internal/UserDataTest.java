package io.zcnet.ring.internal;

import io.zcnet.ring.Op;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/** The user_data packing every completion is routed by. */
class UserDataTest {

    @Test
    void everyFieldRoundTripsAtItsExtremes() {
        int[] handlers = {0, 1, 0xABCDE, UserData.MAX_HANDLERS - 1};
        int[] ops = {Op.NOP, UserData.WAKEUP_OP, 0xFF};
        int[] tags = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 0x8000_0001};
        for (int h : handlers) {
            for (int op : ops) {
                for (int tag : tags) {
                    long packed = UserData.pack(h, op, tag);
                    assertEquals(h, UserData.handler(packed), "handler of " + Long.toHexString(packed));
                    assertEquals(op, UserData.op(packed), "op of " + Long.toHexString(packed));
                    assertEquals(tag, UserData.tag(packed), "tag of " + Long.toHexString(packed));
                }
            }
        }
    }

    @Test
    void randomTriplesRoundTripAndNegativeTagsDoNotBleedIntoOtherFields() {
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 100_000; i++) {
            int h = random.nextInt(UserData.MAX_HANDLERS);
            int op = random.nextInt(256);
            int tag = random.nextInt();
            long packed = UserData.pack(h, op, tag);
            assertEquals(h, UserData.handler(packed));
            assertEquals(op, UserData.op(packed));
            assertEquals(tag, UserData.tag(packed));
        }
    }

    @Test
    void operationsOfDifferentHandlersNeverShareUserData() {
        assertNotEquals(UserData.pack(1, Op.RECV, 7), UserData.pack(2, Op.RECV, 7));
        assertNotEquals(UserData.pack(1, Op.RECV, 7), UserData.pack(1, Op.SEND, 7));
    }
}
