package io.zcnet.ring;

import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The user_data packing every completion is routed by, and the handler table behind it. */
class UserDataTest {

    @Test
    void everyFieldRoundTripsAtItsExtremes() {
        int[] handlers = {0, 1, 0xABCDE, UserData.MAX_HANDLERS - 1};
        int[] ops = {Op.NOP, Op.WAKEUP, 0xFF};
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

    @Test
    void handlerTableQuarantinesSlotsWithOperationsInFlightAndRejectsUnknownIds() {
        HandlerTable table = new HandlerTable();
        CompletionHandler a = (op, tag, result, flags) -> { };
        CompletionHandler b = (op, tag, result, flags) -> { };
        int idA = table.add(a);
        int idB = table.add(b);
        assertNotEquals(idA, idB);
        assertSame(a, table.get(idA));
        table.remove(idA);
        assertNull(table.get(idA), "a removed handler no longer receives completions");
        assertEquals(idA, table.add(b), "a slot with nothing in flight is reused at once");
        table.remove(idA);
        int idC = table.add(a);
        table.started(idC);
        table.remove(idC);
        assertEquals(1, table.inFlight(idC), "a retired slot still counts its operation");
        int idD = table.add(b);
        assertNotEquals(idC, idD, "a retired slot is not handed out while its operation is in flight");
        table.finished(idC);
        assertEquals(0, table.inFlight(idC));
        assertEquals(idC, table.add(a), "the last completion frees the retired slot");
        assertThrows(IllegalArgumentException.class, () -> table.remove(12345));
        assertThrows(IllegalArgumentException.class, () -> table.add(null));
        assertNull(table.get(1 << 20), "an id never handed out resolves to nothing");
        for (int i = 0; i < 1000; i++) { // growth past the initial capacity keeps earlier entries
            table.add(a);
        }
        assertSame(b, table.get(idB));
    }
}
