package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The slot layout as drawn in {@link MessageSlots}' javadoc, and the one place a slot is reset. */
class MessageSlotsTest {

    @Test
    void theSlotIsLaidOutAsDrawn() {
        assertEquals(80, MessageSlots.SIZE);
        assertEquals(0, MessageSlots.KIND);
        assertEquals(1, MessageSlots.CONSUMER);
        assertEquals(2, MessageSlots.COMPLETE);
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
        assertEquals(48, MessageSlots.RECEIVE);
        assertEquals(56, MessageSlots.RESOLVED_RECEIVE);
        assertEquals(64, MessageSlots.READ_OFFSET);
        assertEquals(72, MessageSlots.READ_SINK_OFFSET);
    }

    @Test
    void aRetiredSlotIsBlankForTheMessageAWindowLater() {
        MessageSlots slots = new MessageSlots(2, 64);
        assertBlank(slots, 0);
        assertBlank(slots, 1);
        slots.learn(0, Opcode.RDMA_READ_REQUEST);
        slots.readRequest(0, 1, 2, 3, 4, 5);
        slots.receive(0, 9);
        slots.reserve(0, 200);
        slots.unreserve(0, 200);
        slots.reserve(0, 3);
        slots.place(0, 0);
        slots.last(0, 1, 10, Opcode.RDMA_READ_REQUEST, 0);
        slots.markComplete(0);
        slots.learn(1, Opcode.SEND_ONLY);
        assertEquals(0, slots.receiveFor(1), "message 1 is a SEND after a READ request: the first receive");
        slots.retireOldest();
        assertEquals(1, slots.oldestMsn());
        assertBlank(slots, 0);
        assertFalse(slots.isPlaced(0, 0));
        assertFalse(slots.isReserved(0, 3), "bitmaps are cleared up to the highest segment placed or reserved");
        assertFalse(slots.isReserved(0, 200));
        assertEquals(Opcode.KIND_SEND, slots.kind(1), "the next message keeps what is known of it");
    }

    private static void assertBlank(MessageSlots slots, int slot) {
        assertEquals(0, slots.kind(slot));
        assertEquals(MessageSlots.CONSUMER_UNKNOWN, slots.consumer(slot));
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
        assertTrue(slots.isReceiveKnown(slots.oldestMsn()));
    }
}
