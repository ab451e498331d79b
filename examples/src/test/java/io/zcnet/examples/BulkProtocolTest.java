package io.zcnet.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bulk control messages: each read back as written, within its size, and anything else refused. */
class BulkProtocolTest {

    @Test
    void everyMessageReadsBackAsWritten() throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(2 * BulkProtocol.LARGE);
            BulkPlan plan = new BulkPlan(BulkOp.READ, 65536, 7, 3_000_001, 0, true);
            int n = BulkProtocol.writeHello(s, 5, plan);
            assertTrue(n <= BulkProtocol.SMALL);
            assertEquals(plan, BulkProtocol.readHello(s, 5, n));

            BulkProtocol.Ready ready = new BulkProtocol.Ready(0x1234_5678, 8, 65536);
            assertEquals(ready, BulkProtocol.readReady(s, 0, BulkProtocol.writeReady(s, 0, ready)));

            BulkProtocol.Done done = new BulkProtocol.Done(46, 3_000_001);
            n = BulkProtocol.writeDone(s, 0, done);
            assertTrue(n <= BulkProtocol.SMALL);
            assertEquals(done, BulkProtocol.readDone(s, 0, n));

            long[] shares = new long[64];
            shares[63] = 99;
            BulkProtocol.Result result = new BulkProtocol.Result(46, 2, 3, 4096, shares);
            n = BulkProtocol.writeResult(s, 0, result);
            assertTrue(n <= BulkProtocol.LARGE);
            BulkProtocol.Result back = BulkProtocol.readResult(s, 0, n);
            assertEquals(result.mismatches(), back.mismatches());
            assertEquals(result.bytesResent(), back.bytesResent());
            assertArrayEquals(shares, back.subflowBytes());
        }
    }

    @Test
    void aRefusalCarriesItsReasonAndOtherBytesAreNoMessage() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(BulkProtocol.LARGE);
            int n = BulkProtocol.writeRefusal(s, 0, "--window must be 1..1024, got 5000");
            IOException refused = assertThrows(IOException.class, () -> BulkProtocol.readReady(s, 0, n));
            assertTrue(refused.getMessage().contains("refused the run: --window must be 1..1024, got 5000"),
                    refused.getMessage());

            s.fill((byte) 0);
            assertThrows(IOException.class, () -> BulkProtocol.readDone(s, 0, 64));
            assertThrows(IllegalArgumentException.class, () -> BulkProtocol.readHello(s, 0, 64));
            BulkProtocol.writeHello(s, 0, new BulkPlan(BulkOp.WRITE, 1, 1, 0, 1, false));
            assertThrows(IllegalArgumentException.class, () -> BulkProtocol.readHello(s, 0, 8), "too short");
        }
    }
}
