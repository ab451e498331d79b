package io.zcnet.qp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zcnet.framing.SgeList;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The send and receive queue entries: the byte layout drawn in {@link QueueEntries}, and a round trip. */
class QueueEntriesTest {

    @Test
    void aSendEntryIsItsFieldsThenItsElementsAsStructIbvSge() {
        try (Arena arena = Arena.ofConfined()) {
            QpConfig defaults = QpConfig.defaults();
            assertEquals(64, QueueEntries.sendEntry(defaults.maxSendSge(), defaults.maxInlineData()),
                    "the default entry");
            MemorySegment m = arena.allocate(QueueEntries.sendEntry(3, 0) + 8);
            WorkRequest wr = new WorkRequest().writeWithImmediate(0x1122334455L, 0x77, 1L << 40, 0xABCD)
                    .sge(0x10, 100, 7).sge(0x20, 0, 0).sge(0x30, 5L << 32, 9).unsignaled();
            QueueEntries.writeSend(m, 8, wr);
            assertEquals(0x1122334455L, m.get(ValueLayout.JAVA_LONG_UNALIGNED, 8));
            assertEquals(WorkRequest.RDMA_WRITE_WITH_IMM, m.get(ValueLayout.JAVA_BYTE, 16));
            assertEquals(0, m.get(ValueLayout.JAVA_BYTE, 17), "unsignaled");
            assertEquals(3, m.get(ValueLayout.JAVA_SHORT_UNALIGNED, 18), "num_sge");
            assertEquals(0xABCD, m.get(ValueLayout.JAVA_INT_UNALIGNED, 20));
            assertEquals(0x77, m.get(ValueLayout.JAVA_INT_UNALIGNED, 24));
            assertEquals(1L << 40, m.get(ValueLayout.JAVA_LONG_UNALIGNED, 32));
            long sge = 8 + 32 + 2 * 16; // the third element: addr (offset), length, lkey
            assertEquals(5L << 32, m.get(ValueLayout.JAVA_LONG_UNALIGNED, sge));
            assertEquals(9, m.get(ValueLayout.JAVA_INT_UNALIGNED, sge + 8));
            assertEquals(0x30, m.get(ValueLayout.JAVA_INT_UNALIGNED, sge + 12));

            WorkRequest read = new WorkRequest();
            SgeList elements = new SgeList(3);
            QueueEntries.readSend(m, 8, read, elements, null, 0);
            assertEquals(0x1122334455L, read.workRequestId);
            assertEquals(WorkRequest.RDMA_WRITE_WITH_IMM, read.opcode);
            assertEquals(false, read.signaled);
            assertEquals(0xABCD, read.immediate);
            assertEquals(0x77, read.rkey);
            assertEquals(1L << 40, read.remoteOffset);
            assertEquals("SgeList[0x10@100+7, 0x20@0+0, 0x30@21474836480+9]", elements.toString());
        }
    }

    @Test
    void anInlineSendEntryHoldsItsBytesWhereTheElementsWouldBeAndReadsThemIntoTheKeptCopy() {
        try (Arena arena = Arena.ofConfined()) {
            assertEquals(32 + 32, QueueEntries.sendEntry(2, 17), "room for two elements holds 17 bytes");
            assertEquals(32 + 48, QueueEntries.sendEntry(2, 33), "33 bytes need 48, in whole elements");
            int size = QueueEntries.sendEntry(1, 100);
            MemorySegment m = arena.allocate(size + 8);
            byte[] bytes = new byte[100];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) (i * 7 + 1);
            }
            WorkRequest wr = new WorkRequest().sendWithImmediate(9, 0x5150).inline(MemorySegment.ofArray(bytes), 0, 100)
                    .signaledLazily();
            QueueEntries.writeSend(m, 8, wr);
            bytes[0] = 0; // the entry holds a copy
            assertEquals(2 | 0x80, m.get(ValueLayout.JAVA_BYTE, 17) & 0xFF, "signaled lazily, inline");
            assertEquals(100, m.get(ValueLayout.JAVA_SHORT_UNALIGNED, 18), "num_sge: the inline bytes");
            assertEquals(1, m.get(ValueLayout.JAVA_BYTE, 8 + 32));
            assertEquals((byte) (99 * 7 + 1), m.get(ValueLayout.JAVA_BYTE, 8 + 32 + 99));

            MemorySegment kept = arena.allocate(300);
            WorkRequest read = new WorkRequest();
            SgeList elements = new SgeList(1);
            QueueEntries.readSend(m, 8, read, elements, kept, 200);
            assertEquals(true, read.inline);
            assertEquals(true, read.signaled);
            assertEquals(true, read.lazy);
            assertEquals(0x5150, read.immediate);
            assertEquals(1, elements.count());
            assertEquals(kept, elements.segment(0));
            assertEquals(200, elements.offset(0));
            assertEquals(100, elements.length(0));
            assertEquals(1, kept.get(ValueLayout.JAVA_BYTE, 200));
            assertEquals((byte) (99 * 7 + 1), kept.get(ValueLayout.JAVA_BYTE, 299));
        }
    }

    @Test
    void aReceiveEntryIsItsIdThenItsElements() {
        try (Arena arena = Arena.ofConfined()) {
            assertEquals(32, QueueEntries.receiveEntry(QpConfig.defaults().maxReceiveSge()), "the default entry");
            MemorySegment m = arena.allocate(QueueEntries.receiveEntry(2));
            QueueEntries.writeReceive(m, 0, new ReceiveRequest().receive(42).sge(0x10, 8, 64).sge(0x11, 0, 1 << 20));
            assertEquals(42, QueueEntries.receiveId(m, 0));
            assertEquals(2, m.get(ValueLayout.JAVA_SHORT_UNALIGNED, 8));
            assertEquals(1 << 20, m.get(ValueLayout.JAVA_INT_UNALIGNED, 16 + 16 + 8));
            SgeList elements = new SgeList(2);
            QueueEntries.readReceive(m, 0, elements);
            assertEquals("SgeList[0x10@8+64, 0x11@0+1048576]", elements.toString());
            QueueEntries.writeReceive(m, 0, 7, 0x12, 3, 4);
            QueueEntries.readReceive(m, 0, elements);
            assertEquals("SgeList[0x12@3+4]", elements.toString(), "the one-element form writes the same layout");
            assertEquals(7, QueueEntries.receiveId(m, 0));
        }
    }

    @Test
    void aCompletionEntryIsItsFieldsAtTheirOffsetsAndReadsBackWhole() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment m = arena.allocate(QueueEntries.COMPLETION_ENTRY + 8);
            int[][] cases = {{WorkCompletion.SUCCESS, WorkCompletion.OP_RECV, 0, 0}, {WorkCompletion.FLUSH_ERROR,
                WorkCompletion.OP_RECV_RDMA_WITH_IMM, Integer.MAX_VALUE, -1}, {WorkCompletion.REMOTE_ACCESS_ERROR,
                WorkCompletion.OP_RDMA_READ, -1, Integer.MIN_VALUE}};
            for (int[] c : cases) {
                boolean withImmediate = c[3] != 0;
                m.fill((byte) 0x5A);
                QueueEntries.writeCompletion(m, 8, 0x00C0FFEE, -2L, c[0], c[1], c[2], withImmediate, c[3]);
                assertEquals(-2L, m.get(ValueLayout.JAVA_LONG_UNALIGNED, 8));
                assertEquals(c[0], m.get(ValueLayout.JAVA_BYTE, 16), "status");
                assertEquals(c[1], m.get(ValueLayout.JAVA_BYTE, 17), "opcode");
                assertEquals(withImmediate ? 1 : 0, m.get(ValueLayout.JAVA_BYTE, 18), "with_imm");
                assertEquals(c[2], m.get(ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 20),
                        "byte_len");
                assertEquals(c[3], m.get(ValueLayout.JAVA_INT_UNALIGNED, 24), "imm_data");
                assertEquals(0x00C0FFEE, m.get(ValueLayout.JAVA_INT_UNALIGNED, 28), "qp_slot");
                assertEquals(0x00C0FFEE, QueueEntries.completionSlot(m, 8));
                assertEquals(0x5A, m.get(ValueLayout.JAVA_BYTE, 7), "nothing before the entry");
                WorkCompletion read = new WorkCompletion();
                QueueEntries.readCompletion(m, 8, read);
                assertEquals(List.of(-2L, c[0], c[1], withImmediate, c[2], c[3]), List.of(read.workRequestId(),
                        read.status(), read.opcode(), read.hasImmediate(), read.byteCount(), read.immediate()));
            }
        }
    }
}
