package io.zcnet.ring;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The handler table a completion's user_data indexes. */
class HandlerTableTest {

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
