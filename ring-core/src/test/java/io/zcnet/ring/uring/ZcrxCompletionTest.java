package io.zcnet.ring.uring;

import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.Errno;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 32-byte zcrx completions written by hand into plain native memory, the way the kernel lays them out
 * (user_data @0, res @8, flags @12, zcrx off @16, pad @24), then read and checked against an area.
 */
class ZcrxCompletionTest {
    private static final long AREA_SIZE = 1 << 20;
    private static final long TOKEN = 5L << 48;

    private Arena arena;
    private MemorySegment cqes;
    private final ZcrxCompletion completion = new ZcrxCompletion();

    @BeforeEach
    void allocate() {
        arena = Arena.ofConfined();
        cqes = arena.allocate(4 * 32, 8);
        cqes.fill((byte) 0x5A); // no field may read as 0 by luck
    }

    @AfterEach
    void free() {
        arena.close();
    }

    /** Writes a CQE at slot {@code index} the way the kernel does. */
    private ZcrxCompletion cqe(int index, long userData, int res, int flags, long off) {
        long at = index * 32L;
        cqes.set(JAVA_LONG, at, userData);
        cqes.set(JAVA_INT, at + 8, res);
        cqes.set(JAVA_INT, at + 12, flags);
        cqes.set(JAVA_LONG, at + 16, off);
        cqes.set(JAVA_LONG, at + 24, 0xDEAD_BEEF_DEAD_BEEFL);
        return completion.wrap(cqes, at);
    }

    @Test
    void aDataCompletionGivesItsOffsetInTheArea() {
        ZcrxCompletion c = cqe(1, 0x1234_5678_9ABCL, 1448, CqeFlags.MORE, TOKEN | 0x3000);
        assertEquals(0x1234_5678_9ABCL, c.userData());
        assertEquals(1448, c.res());
        assertTrue(c.more());
        assertEquals(TOKEN | 0x3000, c.rawOffset());
        assertEquals(0x3000, c.dataOffset(TOKEN, AREA_SIZE));
    }

    @Test
    void slotsAre32BytesApart() {
        cqe(0, 1, 100, CqeFlags.MORE, TOKEN);
        cqe(1, 2, 200, CqeFlags.MORE, TOKEN | 4096);
        cqe(2, 3, 300, 0, TOKEN | 8192);
        long[] offsets = new long[3];
        for (int i = 0; i < 3; i++) {
            completion.wrap(cqes, i * 32L);
            assertEquals(i + 1, completion.userData());
            assertEquals(100 * (i + 1), completion.res());
            offsets[i] = completion.dataOffset(TOKEN, AREA_SIZE);
        }
        assertEquals(0, offsets[0]);
        assertEquals(4096, offsets[1]);
        assertEquals(8192, offsets[2]);
    }

    @Test
    void aRangeEndingExactlyAtTheAreaEndIsInside() {
        assertEquals(AREA_SIZE - 100, cqe(0, 1, 100, CqeFlags.MORE, TOKEN | (AREA_SIZE - 100)).dataOffset(TOKEN, AREA_SIZE));
    }

    @Test
    void aRangeReachingPastTheAreaIsRefused() {
        assertEquals(ZcrxCompletion.OUTSIDE_AREA,
                cqe(0, 1, 101, CqeFlags.MORE, TOKEN | (AREA_SIZE - 100)).dataOffset(TOKEN, AREA_SIZE));
        assertEquals(ZcrxCompletion.OUTSIDE_AREA,
                cqe(0, 1, 1, CqeFlags.MORE, TOKEN | AREA_SIZE).dataOffset(TOKEN, AREA_SIZE));
        // the largest offset the 48 bits can hold, with the largest length: no overflow lets it through
        assertEquals(ZcrxCompletion.OUTSIDE_AREA, cqe(0, 1, Integer.MAX_VALUE, CqeFlags.MORE,
                TOKEN | ((1L << 48) - 1)).dataOffset(TOKEN, AREA_SIZE));
    }

    @Test
    void anotherAreaIdIsRefused() {
        assertEquals(ZcrxCompletion.FOREIGN_AREA, cqe(0, 1, 10, CqeFlags.MORE, (6L << 48) | 0x1000).dataOffset(TOKEN, AREA_SIZE));
        assertEquals(ZcrxCompletion.FOREIGN_AREA, cqe(0, 1, 10, CqeFlags.MORE, 0x1000).dataOffset(TOKEN, AREA_SIZE));
    }

    @Test
    void endOfStreamAndErrorsCarryNoData() {
        ZcrxCompletion eof = cqe(0, 9, 0, 0, TOKEN);
        assertFalse(eof.more());
        assertEquals(ZcrxCompletion.NO_DATA, eof.dataOffset(TOKEN, AREA_SIZE));
        ZcrxCompletion full = cqe(1, 9, -Errno.ENOSPC, 0, TOKEN | 0x1000);
        assertEquals(-Errno.ENOSPC, full.res());
        assertEquals(ZcrxCompletion.NO_DATA, full.dataOffset(TOKEN, AREA_SIZE));
    }

    @Test
    void aCompletionMustLieWhollyInsideTheMemoryItIsReadFrom() {
        assertThrows(IndexOutOfBoundsException.class, () -> completion.wrap(cqes, cqes.byteSize() - 16));
        assertThrows(IndexOutOfBoundsException.class, () -> completion.wrap(cqes, -32));
    }
}
