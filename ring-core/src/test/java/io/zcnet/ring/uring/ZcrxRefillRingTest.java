package io.zcnet.ring.uring;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The refill ring on plain memory, with this test playing the kernel: it reads the tail and the entries
 * and moves the head, at the offsets a 6.18 x86-64 kernel returns (head 0, tail 64, rqes 128).
 */
class ZcrxRefillRingTest {
    private static final VarHandle INT = JAVA_INT.varHandle();
    private static final long HEAD = 0;
    private static final long TAIL = 64;
    private static final long RQES = 128;
    private static final long TOKEN = 3L << 48;
    private static final long AREA_SIZE = 64 * 4096;

    private Arena arena;
    private MemorySegment region;

    @BeforeEach
    void allocate() {
        arena = Arena.ofShared();
        region = arena.allocate(2 * 4096, 4096);
    }

    @AfterEach
    void free() {
        arena.close();
    }

    private ZcrxRefillRing ring(int entries) {
        return new ZcrxRefillRing(region, HEAD, TAIL, RQES, entries, TOKEN, AREA_SIZE);
    }

    private long entryOff(int slot) {
        return region.get(JAVA_LONG, RQES + slot * 16L);
    }

    private int entryLen(int slot) {
        return region.get(JAVA_INT, RQES + slot * 16L + 8);
    }

    @Test
    void anEntryCarriesTheAreaTokenAndTheLengthAndIsSeenOnlyWhenPublished() {
        region.fill((byte) 0x77); // __pad must be written as 0, not left as found
        region.set(JAVA_INT, HEAD, 0);
        region.set(JAVA_INT, TAIL, 0);
        ZcrxRefillRing refill = ring(4);
        assertTrue(refill.add(0x5000, 1448));
        assertEquals(TOKEN | 0x5000, entryOff(0));
        assertEquals(1448, entryLen(0));
        assertEquals(0, region.get(JAVA_INT, RQES + 12));
        assertEquals(0, region.get(JAVA_INT, TAIL), "the kernel must not see an entry before publish");
        refill.publish();
        assertEquals(1, region.get(JAVA_INT, TAIL));
    }

    @Test
    void oneStoreOfTheTailPublishesABatch() {
        ZcrxRefillRing refill = ring(8);
        for (int i = 0; i < 3; i++) {
            assertTrue(refill.add(i * 4096L, 100 + i));
        }
        assertEquals(0, region.get(JAVA_INT, TAIL));
        refill.publish();
        assertEquals(3, region.get(JAVA_INT, TAIL));
        assertEquals(3, refill.outstanding());
        for (int i = 0; i < 3; i++) {
            assertEquals(TOKEN | (i * 4096L), entryOff(i));
            assertEquals(100 + i, entryLen(i));
        }
    }

    @Test
    void aFullRingRefusesUntilTheKernelMovesItsHeadAndThenWrapsAround() {
        ZcrxRefillRing refill = ring(4);
        for (int i = 0; i < 4; i++) {
            assertTrue(refill.add(i * 4096L, 1));
        }
        assertFalse(refill.add(0x10000, 1), "a fifth entry would overwrite one the kernel has not read");
        refill.publish();
        region.set(JAVA_INT, HEAD, 2); // the kernel took two
        assertTrue(refill.add(0x10000, 7));
        assertTrue(refill.add(0x11000, 8));
        assertFalse(refill.add(0x12000, 9));
        refill.publish();
        assertEquals(6, region.get(JAVA_INT, TAIL));
        assertEquals(TOKEN | 0x10000, entryOff(0), "entry 4 goes into slot 0");
        assertEquals(TOKEN | 0x11000, entryOff(1));
        assertEquals(TOKEN | 2 * 4096L, entryOff(2), "slots the kernel has not read are untouched");
    }

    @Test
    void nothingOutsideTheAreaCanBeReturned() {
        ZcrxRefillRing refill = ring(4);
        assertThrows(IllegalArgumentException.class, () -> refill.add(AREA_SIZE - 10, 11));
        assertThrows(IllegalArgumentException.class, () -> refill.add(AREA_SIZE, 1));
        assertThrows(IllegalArgumentException.class, () -> refill.add(-1, 1));
        assertThrows(IllegalArgumentException.class, () -> refill.add(0, 0));
        assertThrows(IllegalArgumentException.class, () -> refill.add(Long.MAX_VALUE, Integer.MAX_VALUE));
        assertTrue(refill.add(AREA_SIZE - 10, 10));
    }

    @Test
    void offsetsFromTheKernelMustFitTheRegion() {
        long size = region.byteSize();
        int fits = (int) ((size - RQES) / 16);
        new ZcrxRefillRing(region, HEAD, TAIL, RQES, Integer.highestOneBit(fits), TOKEN, AREA_SIZE);
        assertThrows(IllegalArgumentException.class,
                () -> new ZcrxRefillRing(region, HEAD, TAIL, RQES, Integer.highestOneBit(fits) * 2, TOKEN, AREA_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, size, TAIL, RQES, 4, TOKEN, AREA_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, 2, TAIL, RQES, 4, TOKEN, AREA_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, HEAD, HEAD, RQES, 4, TOKEN, AREA_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, HEAD, RQES + 16, RQES, 4, TOKEN, AREA_SIZE),
                "the tail inside the entries");
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, HEAD, TAIL, RQES + 4, 4, TOKEN, AREA_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, HEAD, TAIL, -16, 4, TOKEN, AREA_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, HEAD, TAIL, RQES, 3, TOKEN, AREA_SIZE));
        assertThrows(IllegalArgumentException.class, () -> new ZcrxRefillRing(region, HEAD, TAIL, RQES, 4, TOKEN | 1, AREA_SIZE));
    }

    /**
     * A consumer thread in the kernel's role reads each entry once the tail (acquire) says it is there and
     * frees its slot with a release store of the head; every entry must arrive whole and in order.
     */
    @Test
    void aConcurrentConsumerSeesEveryEntryWholeAndInOrder() throws Exception {
        int entries = 16;
        int total = 50_000;
        ZcrxRefillRing refill = ring(entries);
        AtomicReference<String> wrong = new AtomicReference<>();
        Thread kernel = Thread.ofPlatform().start(() -> {
            int head = 0;
            while (head < total && wrong.get() == null) {
                int tail = (int) INT.getAcquire(region, TAIL);
                for (; head != tail; head++) {
                    long slot = RQES + (long) (head & (entries - 1)) * 16;
                    long off = region.get(JAVA_LONG, slot);
                    int len = region.get(JAVA_INT, slot + 8);
                    if (off != (TOKEN | (head % 64) * 4096L) || len != 1 + head % 4096) {
                        wrong.set("entry " + head + ": off=0x" + Long.toHexString(off) + " len=" + len);
                        return;
                    }
                }
                INT.setRelease(region, HEAD, head);
                Thread.onSpinWait();
            }
        });
        for (int i = 0; i < total && wrong.get() == null; ) {
            if (refill.add((i % 64) * 4096L, 1 + i % 4096)) {
                i++;
                if ((i & 7) == 0 || i == total) {
                    refill.publish();
                }
            } else {
                refill.publish();
                Thread.onSpinWait();
            }
        }
        kernel.join(30_000);
        assertFalse(kernel.isAlive(), "consumer stuck: " + refill);
        assertNull(wrong.get());
        assertEquals(0, refill.outstanding());
    }
}
