package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.framing.SgeList;
import org.junit.jupiter.api.Test;

/** The ledger starts small, doubles when full up to its most, and every entry keeps its row across a growth. */
class SendLedgerTest {

    @Test
    void entriesKeepTheirFieldsAndListsAcrossGrowthUpToTheMost() {
        SendLedger ledger = new SendLedger(64, 2);
        assertEquals(SendLedger.INITIAL_CAPACITY, ledger.capacity());
        SgeList[] lists = new SgeList[64];
        // Retire a few first, so the outstanding entries wrap around the small arrays when they grow.
        for (int n = 0; n < 5; n++) {
            assertTrue(ledger.hasRoom());
            ledger.append(WorkRequest.SEND, 900 + n, true, false, 0, 0, 0, 0, 0);
            ledger.retireHead();
        }
        for (int n = 0; n < 64; n++) {
            assertTrue(ledger.hasRoom(), "room for entry " + n);
            SgeList local = ledger.nextLocal().clear();
            local.add(n + 1, 100L * n, n);
            long seq = ledger.append(WorkRequest.RDMA_WRITE, 1000 + n, n % 2 == 0, false, n, 7, 10L * n, 0, 0);
            int i = ledger.slot(seq);
            ledger.begin(i, n, n + 1, 3L * n, 3);
            lists[n] = ledger.local[i];
        }
        assertEquals(64, ledger.capacity());
        assertFalse(ledger.hasRoom(), "a full ledger at its most has no room");
        for (int n = 0; n < 64; n++) {
            int i = ledger.slot(5 + n);
            assertEquals(1000 + n, ledger.workRequestId[i], "entry " + n);
            assertEquals(n % 2 == 0, ledger.signaled[i]);
            assertEquals(10L * n, ledger.remoteOffset[i]);
            assertEquals(3L * n, ledger.firstFrame[i]);
            assertTrue(ledger.begun[i]);
            assertSame(lists[n], ledger.local[i], "entry " + n + " keeps its own list");
            assertEquals(100L * n, ledger.local[i].offset(0));
            assertEquals(n, ledger.length[i]);
        }
        assertEquals(64, ledger.userEntries);
    }
}
