package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.AccessStatus;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Scatter/gather lists: where a message byte lies, the spans of a range, key resolution, and the ICRC over pieces. */
class SgeListTest {

    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();

    @AfterEach
    void close() {
        arena.close();
    }

    /** Pieces of 5, 0, 0, 7, 1 and 0 bytes over one heap array, at offsets 100, 3, 40, 9, 60, 0. */
    private static SgeList oddPieces(MemorySegment memory) {
        return new SgeList(8).add(memory, 100, 5).add(memory, 3, 0).add(memory, 40, 0).add(memory, 9, 7)
                .add(memory, 60, 1).add(memory, 0, 0);
    }

    @Test
    void everyByteLiesInTheNonEmptyPieceThatHoldsIt() {
        SgeList list = oddPieces(MemorySegment.ofArray(new byte[128]));
        assertEquals(13, list.byteSize());
        int[] expected = {0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 3, 3, 4};
        for (int position = 0; position < 13; position++) {
            assertEquals(expected[position], list.pieceAt(position), "position " + position);
        }
        assertEquals(5, list.start(1));
        assertEquals(5, list.start(3));
        assertEquals(13, list.start(5));
        assertThrows(IndexOutOfBoundsException.class, () -> list.pieceAt(13));
        assertThrows(IndexOutOfBoundsException.class, () -> list.pieceAt(-1));
        assertEquals(3, list.spans(4, 9), "pieces 0, 3 and 4; the empty ones between count for nothing");
        assertEquals(1, list.spans(5, 7));
        assertEquals(0, list.spans(13, 0));
    }

    @Test
    void aCursorWalksTheSpansOfARangeAndSkipsEmptyPieces() {
        byte[] bytes = TestFrames.pattern(128, 3);
        MemorySegment memory = MemorySegment.ofArray(bytes);
        SgeList list = oddPieces(memory);
        byte[] message = concat(list);
        SgeCursor cursor = new SgeCursor();
        for (int from = 0; from <= 13; from++) {
            for (int length = 0; from + length <= 13; length++) {
                cursor.over(list, from, length);
                ByteArrayOutputStream walked = new ByteArrayOutputStream();
                while (cursor.next()) {
                    assertTrue(cursor.length() > 0);
                    assertSame(memory, cursor.segment());
                    walked.writeBytes(memory.asSlice(cursor.offset(), cursor.length()).toArray(ValueLayout.JAVA_BYTE));
                }
                assertArrayEquals(java.util.Arrays.copyOfRange(message, from, from + length), walked.toByteArray(),
                        from + "+" + length);
                assertFalse(cursor.next(), "a walk stays ended");
            }
        }
        assertThrows(IllegalArgumentException.class, () -> cursor.over(list, 10, 4));
    }

    @Test
    void piecesNamedByKeyResolveToTheirRegionsOrSayWhichWasRefused() {
        MemoryRegion writable = registry.register(arena.allocate(256), Access.LOCAL_WRITE);
        MemoryRegion readOnly = registry.register(arena.allocate(256), Access.REMOTE_READ);
        SgeList list = new SgeList(4).add(writable.localKey(), 10, 20).add(readOnly.localKey(), 0, 0);
        assertNull(list.segment(0), "not memory before it is resolved");
        assertEquals(AccessStatus.OK, list.resolve(registry, 0));
        assertSame(writable, list.region(0));
        assertSame(readOnly.segment(), list.segment(1));
        assertEquals(AccessStatus.NOT_PERMITTED, list.resolve(registry, Access.LOCAL_WRITE), "even a piece of 0 bytes is checked");
        assertEquals(1, list.refused());
        list.clear().add(writable.localKey(), 250, 7);
        assertNull(list.region(0), "a piece named again is not resolved by what the place held before");
        assertNull(list.segment(0));
        assertEquals(AccessStatus.OUT_OF_BOUNDS, list.resolve(registry, Access.LOCAL_WRITE));
        assertNull(list.region(0), "nor by a refused resolution");
        list.clear().add(writable.localKey() + 1, 0, 1);
        assertEquals(AccessStatus.INVALID_KEY, list.resolve(registry, 0));
        assertEquals(0, list.refused());

        SgeList sinks = new SgeList(2).add(writable.localKey(), 1, 2).add(readOnly.localKey(), 3, 4);
        sinks.resolve(registry, 0);
        sinks.nameByRemoteKeys();
        assertEquals(writable.remoteKey(), sinks.key(0));
        assertEquals(readOnly.remoteKey(), sinks.key(1));
        SgeList copy = new SgeList(2).copyFrom(sinks);
        assertEquals(6, copy.byteSize());
        assertSame(readOnly, copy.region(1));
        assertEquals(3, copy.offset(1));
        assertThrows(IllegalArgumentException.class, () -> new SgeList(1).copyFrom(sinks));
    }

    @Test
    void theListsOfATableKeepToTheirOwnPieces() {
        SgeList[] table = SgeList.table(3, 2);
        MemorySegment memory = MemorySegment.ofArray(new byte[64]);
        table[0].add(memory, 0, 4).add(memory, 8, 4);
        table[1].add(memory, 16, 5);
        table[2].add(memory, 32, 6).add(memory, 40, 7);
        assertThrows(IllegalArgumentException.class, () -> table[1].add(memory, 0, 1).add(memory, 0, 1), "two at most");
        assertEquals(8, table[0].byteSize());
        assertEquals(6, table[1].byteSize());
        assertEquals(13, table[2].byteSize());
        assertEquals(40, table[2].offset(1));
        assertEquals(6, table[2].start(1));
        table[1].clear();
        assertEquals(8, table[0].offset(1), "clearing one list leaves its neighbours");
        assertEquals(32, table[2].offset(0));
        assertEquals(1, table[1].copyFrom(table[2]).pieceAt(6));
        assertEquals(40, table[1].offset(1));
    }

    @Test
    void refusesWhatIsNoList() {
        SgeList list = new SgeList(1);
        MemorySegment memory = MemorySegment.ofArray(new byte[8]);
        assertThrows(IllegalArgumentException.class, () -> new SgeList(0));
        assertThrows(IllegalArgumentException.class, () -> list.add(memory, 4, 5));
        assertThrows(IllegalArgumentException.class, () -> list.add(1, -1, 5));
        assertThrows(IllegalArgumentException.class, () -> list.add(null, 0, 0));
        list.add(memory, 0, 8);
        assertThrows(IllegalArgumentException.class, () -> list.add(memory, 0, 0), "full");
        assertTrue(list.clear().add(memory, 0, 0).count() == 1);
    }

    @Test
    void theIcrcOverPiecesIsTheIcrcOverTheirConcatenation() {
        Segmenter segmenter = new Segmenter(new FramingConfig(64, true, 8));
        SplittableRandom random = new SplittableRandom(7);
        MemorySegment a = arena.allocate(4096);
        MemorySegment b = arena.allocate(4096);
        MemorySegment.copy(TestFrames.pattern(4096, 1), 0, a, ValueLayout.JAVA_BYTE, 0, 4096);
        MemorySegment.copy(TestFrames.pattern(4096, 2), 0, b, ValueLayout.JAVA_BYTE, 0, 4096);
        Icrc icrc = new Icrc();
        for (int round = 0; round < 200; round++) {
            SgeList list = new SgeList(6);
            for (int i = 0, n = 1 + random.nextInt(6); i < n; i++) {
                int length = random.nextInt(4) == 0 ? 0 : random.nextInt(100);
                list.add(i % 2 == 0 ? a : b, random.nextInt(4096 - length), length);
            }
            byte[] whole = concat(list);
            MemorySegment header = MemorySegment.ofArray(new byte[64]);
            segmenter.beginWrite(0, list, 5, 0);
            for (long f = 0; f < segmenter.frameCount(); f++) {
                segmenter.writeFrame(f, header, 0);
                MemorySegment contiguous = MemorySegment.ofArray(whole);
                int expected = icrc.compute(header, 0, contiguous, segmenter.payloadPosition());
                assertEquals(expected, icrc.compute(header, 0, list, segmenter.payloadPosition()), list + " frame " + f);
                assertEquals(expected, header.get(WireLayouts.U32, FrameHeader.ICRC_OFFSET), "what the segmenter wrote");
            }
        }
    }

    static byte[] concat(SgeList list) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < list.count(); i++) {
            out.writeBytes(list.segment(i).asSlice(list.offset(i), list.length(i)).toArray(ValueLayout.JAVA_BYTE));
        }
        return out.toByteArray();
    }
}
