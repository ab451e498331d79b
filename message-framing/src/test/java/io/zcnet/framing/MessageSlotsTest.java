package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The slot layout as drawn in {@link MessageSlots}' javadoc, and the one place a slot is reset. */
class MessageSlotsTest {

    @Test
    void theSlotIsLaidOutAsDrawn() {
        assertEquals(72, MessageSlots.SIZE);
        assertEquals(0, MessageSlots.KIND);
        assertEquals(1, MessageSlots.COMPLETE);
        assertEquals(4, MessageSlots.SEGMENTS_PLACED);
        assertEquals(8, MessageSlots.SEGMENTS_EXPECTED);
        assertEquals(12, MessageSlots.HIGHEST_SEGMENT);
        assertEquals(16, MessageSlots.RESERVATIONS);
        assertEquals(20, MessageSlots.TOTAL_LENGTH);
        assertEquals(24, MessageSlots.IMMEDIATE);
        assertEquals(28, MessageSlots.FINAL_OPCODE);
        assertEquals(32, MessageSlots.READ_RKEY);
        assertEquals(36, MessageSlots.READ_LENGTH);
        assertEquals(40, MessageSlots.READ_SINK_RKEY);
        assertEquals(44, MessageSlots.RECEIVE_FRAMES);
        assertEquals(48, MessageSlots.RECEIVE);
        assertEquals(56, MessageSlots.READ_OFFSET);
        assertEquals(64, MessageSlots.READ_SINK_OFFSET);
    }

    @Test
    void theBitmapsGrowForALaterSegmentAndEveryMessageKeepsItsBits() {
        MessageSlots slots = new MessageSlots(8, 64, 16); // 64-byte segments: a message may have thousands
        slots.place(2, 5);
        slots.reserve(2, 63);
        slots.place(5, 1);
        slots.place(3, 70); // past the first word of every message: the bitmaps grow
        slots.place(3, 1000);
        slots.reserve(7, 4000);
        for (int[] set : new int[][] {{2, 5}, {5, 1}, {3, 70}, {3, 1000}}) {
            assertTrue(slots.isPlaced(set[0], set[1]), "slot " + set[0] + " segment " + set[1]);
        }
        assertTrue(slots.isReserved(2, 63), "a bit set before the growth");
        assertTrue(slots.isReserved(7, 4000));
        assertFalse(slots.isPlaced(2, 70), "nothing set where another message's bits were");
        assertFalse(slots.isPlaced(3, 5));
        assertFalse(slots.isPlaced(4, 1000));
        assertFalse(slots.isReserved(3, 63));
        assertThrows(IllegalArgumentException.class, () -> slots.place(0, FramingConfig.maxSegmentsPerMessage(64) + 64),
                "a segment past the longest message");
    }

    @Test
    void aRetiredSlotIsBlankForTheMessageAWindowLater() {
        MessageSlots slots = new MessageSlots(2, 64, 16);
        assertBlank(slots, 0);
        assertBlank(slots, 1);
        slots.kind(0, Opcode.KIND_READ_REQUEST);
        slots.readRequest(0, 1, 2, 3, 4, 5);
        slots.holdReceive(0, 9);
        slots.reserve(0, 200);
        slots.unreserve(0, 200);
        slots.reserve(0, 3);
        slots.place(0, 0);
        slots.last(0, 1, 10, Opcode.RDMA_READ_REQUEST, 0);
        slots.markComplete(0);
        slots.kind(1, Opcode.KIND_SEND);
        slots.holdReceive(1, 10);
        assertEquals(0, slots.holderOf(9));
        slots.retireOldest();
        assertEquals(1, slots.oldestMsn());
        assertBlank(slots, 0);
        assertEquals(-1, slots.holderOf(9), "a retired message holds no receive");
        assertEquals(1, slots.holderOf(10));
        assertFalse(slots.isPlaced(0, 0));
        assertFalse(slots.isReserved(0, 3), "bitmaps are cleared up to the highest segment placed or reserved");
        assertFalse(slots.isReserved(0, 200));
        assertEquals(Opcode.KIND_SEND, slots.kind(1), "the next message keeps what is known of it");
    }

    @Test
    void aMessageHoldsItsReceiveWhileAFrameNamingItIsPlacedOrInFlight() {
        MessageSlots slots = new MessageSlots(4, 64, 8);
        assertEquals(-1, slots.holderOf(0));
        assertEquals(-1, slots.holderOf(-1));
        slots.holdReceive(2, 5); // a direct placement of message 2 in flight
        slots.holdReceive(2, 5); // and a frame of it placed
        assertEquals(2, slots.holderOf(5));
        assertEquals(-1, slots.holderOf(5 + 8), "the same entry of the inverse map, another receive");
        slots.releaseReceive(2);
        assertEquals(5, slots.receive(2), "a placed frame still names it");
        slots.releaseReceive(2);
        assertEquals(-1, slots.receive(2));
        assertEquals(-1, slots.holderOf(5), "let go once no frame names it");
        slots.holdReceive(3, 5);
        assertEquals(3, slots.holderOf(5));
    }

    private static void assertBlank(MessageSlots slots, int slot) {
        assertEquals(0, slots.kind(slot));
        assertEquals(0, slots.receiveFrames(slot));
        assertFalse(slots.isComplete(slot));
        assertEquals(0, slots.segmentsPlaced(slot));
        assertEquals(-1, slots.segmentsExpected(slot));
        assertEquals(-1, slots.highestSegment(slot));
        assertEquals(0, slots.reservations(slot));
        assertEquals(-1, slots.totalLength(slot));
        assertEquals(0, slots.immediate(slot));
        assertEquals(-1, slots.finalOpcode(slot));
        assertEquals(-1, slots.receive(slot));
        assertEquals(0, slots.readRkey(slot));
        assertEquals(0, slots.readOffset(slot));
        assertEquals(0, slots.readLength(slot));
        assertEquals(0, slots.readSinkRkey(slot));
        assertEquals(0, slots.readSinkOffset(slot));
    }
}
