package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Pins the wire layout of docs/wire-format.md's table (section 3), bit for bit, and every flyweight field. */
class FrameLayoutTest {

    @Test
    void baseHeaderOffsetsMatchTheDesignTable() {
        assertEquals(32, FrameHeader.LENGTH);
        assertEquals(0, FrameHeader.FLAGS_OFFSET);
        assertEquals(1, FrameHeader.OPCODE_OFFSET);
        assertEquals(2, FrameHeader.MSN_OFFSET);
        assertEquals(4, FrameHeader.MBO_SEG_OFFSET);
        assertEquals(8, FrameHeader.ICRC_OFFSET);
        assertEquals(12, FrameHeader.TIMESTAMP_OFFSET);
        assertEquals(16, FrameHeader.TIMESTAMP_ECHO_OFFSET);
        assertEquals(20, FrameHeader.IMM_DATA_OFFSET);
        assertEquals(24, FrameHeader.LENGTH_OFFSET);
        assertEquals(28, FrameHeader.EXT_LENGTH_OFFSET);
        assertEquals(30, FrameHeader.SUBFLOW_OFFSET);
    }

    @Test
    void extensionOffsetsMatchTheDesign() {
        assertEquals(4, UntaggedExtension.LENGTH);
        assertEquals(0, UntaggedExtension.RSN_OFFSET);
        assertEquals(12, TaggedExtension.LENGTH);
        assertEquals(16, TaggedExtension.LENGTH_WITH_RSN);
        assertEquals(0, TaggedExtension.RKEY_OFFSET);
        assertEquals(4, TaggedExtension.REGION_OFFSET_OFFSET);
        assertEquals(12, TaggedExtension.RSN_OFFSET);
        assertEquals(28, ReadRequestExtension.LENGTH);
        assertEquals(0, ReadRequestExtension.RKEY_OFFSET);
        assertEquals(4, ReadRequestExtension.REGION_OFFSET_OFFSET);
        assertEquals(12, ReadRequestExtension.LENGTH_OFFSET);
        assertEquals(16, ReadRequestExtension.SINK_RKEY_OFFSET);
        assertEquals(20, ReadRequestExtension.SINK_OFFSET_OFFSET);
    }

    @Test
    void everyHeaderFieldIsBigEndianAtItsOffset() {
        byte[] bytes = new byte[40];
        FrameHeader h = new FrameHeader().wrap(MemorySegment.ofArray(bytes), 3);
        h.version(1).timestampPresent(true).moreSegments(true).rtr(true).rtrAck(true)
                .opcode(0x11).msn(0xBEEF).messageOffsetAndSegment(0xABCDEF, 0x12)
                .icrc(0x01020304).timestamp(0x05060708).timestampEcho(0x090A0B0C).immData(0x0D0E0F10)
                .length(0xFFFFFFFFL).extLength(0x1C).subflow(0xCAFE);
        byte[] expected = {
            0, 0, 0,
            (byte) 0b0111_1100, 0x11, (byte) 0xBE, (byte) 0xEF,
            (byte) 0xAB, (byte) 0xCD, (byte) 0xEF, 0x12,
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
            (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF,
            0, 0x1C, (byte) 0xCA, (byte) 0xFE,
            0, 0, 0, 0, 0
        };
        assertArrayEquals(expected, bytes);
        assertEquals(1, h.version());
        assertTrue(h.timestampPresent() && h.moreSegments() && h.rtr() && h.rtrAck());
        assertEquals(0x11, h.opcode());
        assertEquals(0xBEEF, h.msn());
        assertEquals(0xABCDEF, h.messageOffset());
        assertEquals(0x12, h.segmentNumber());
        assertEquals(0x01020304, h.icrc());
        assertEquals(0x05060708, h.timestamp());
        assertEquals(0x090A0B0C, h.timestampEcho());
        assertEquals(0x0D0E0F10, h.immData());
        assertEquals(0xFFFFFFFFL, h.length());
        assertEquals(0x1C, h.extLength());
        assertEquals(0xCAFE, h.subflow());
        h.moreSegments(false).rtr(false);
        assertFalse(h.moreSegments() || h.rtr());
        assertTrue(h.rtrAck() && h.timestampPresent());
        assertEquals(0b0110_0100, bytes[3] & 0xFF);
    }

    @Test
    void extensionsAreBigEndian() {
        byte[] bytes = new byte[28];
        TaggedExtension t = new TaggedExtension().wrap(MemorySegment.ofArray(bytes), 0)
                .rkey(0x11223344).regionOffset(0x0102030405060708L).rsn(0x9A0B0C0D);
        assertArrayEquals(new byte[] {0x11, 0x22, 0x33, 0x44, 1, 2, 3, 4, 5, 6, 7, 8, (byte) 0x9A, 0x0B, 0x0C, 0x0D},
                java.util.Arrays.copyOf(bytes, 16));
        assertEquals(0x9A0B0C0D, t.rsn());
        byte[] untagged = new byte[5];
        UntaggedExtension u = new UntaggedExtension().wrap(MemorySegment.ofArray(untagged), 1).rsn(0xFEDCBA98);
        assertArrayEquals(new byte[] {0, (byte) 0xFE, (byte) 0xDC, (byte) 0xBA, (byte) 0x98}, untagged);
        assertEquals(0xFEDCBA98, u.rsn());
        ReadRequestExtension r = new ReadRequestExtension().wrap(MemorySegment.ofArray(bytes), 0);
        r.readLength(0xA0B0C0D0L).sinkRkey(0x55667788).sinkOffset(0x1112131415161718L);
        assertEquals(0x11223344, r.rkey());
        assertEquals(0x0102030405060708L, r.regionOffset());
        assertEquals(0xA0B0C0D0L, r.readLength());
        assertEquals(0x55667788, r.sinkRkey());
        assertEquals(0x1112131415161718L, r.sinkOffset());
        assertEquals((byte) 0xA0, bytes[12]);
        assertEquals(0x55, bytes[16]);
        assertEquals(0x18, bytes[27]);
    }

    @Test
    void settersRejectValuesThatDoNotFit() {
        FrameHeader h = new FrameHeader().wrap(MemorySegment.ofArray(new byte[32]), 0);
        assertThrows(IllegalArgumentException.class, () -> h.msn(0x10000));
        assertThrows(IllegalArgumentException.class, () -> h.msn(-1));
        assertThrows(IllegalArgumentException.class, () -> h.messageOffsetAndSegment(1 << 24, 0));
        assertThrows(IllegalArgumentException.class, () -> h.messageOffsetAndSegment(0, 256));
        assertThrows(IllegalArgumentException.class, () -> h.opcode(256));
        assertThrows(IllegalArgumentException.class, () -> h.length(-1));
        assertThrows(IllegalArgumentException.class, () -> h.length(1L << 32));
        assertThrows(IllegalArgumentException.class, () -> h.version(4));
        assertThrows(IllegalArgumentException.class, () -> h.subflow(0x10000));
        assertThrows(IllegalArgumentException.class, () -> h.extLength(-1));
        assertThrows(IllegalArgumentException.class, () -> new FrameHeader().wrap(MemorySegment.ofArray(new byte[31]), 0));
        assertThrows(IllegalArgumentException.class, () -> new FrameHeader().wrap(MemorySegment.ofArray(new byte[40]), 9));
        assertThrows(IllegalArgumentException.class, () -> new TaggedExtension().wrap(MemorySegment.ofArray(new byte[11]), 0));
        assertThrows(IllegalArgumentException.class, () -> new UntaggedExtension().wrap(MemorySegment.ofArray(new byte[4]), 1));
        assertThrows(IllegalArgumentException.class, () -> new ReadRequestExtension().wrap(MemorySegment.ofArray(new byte[28]), 1));
    }

    @Test
    void fillAndStampWriteWhatTheSettersWrite() {
        MemorySegment bySetters = MemorySegment.ofArray(new byte[40]);
        MemorySegment byWords = MemorySegment.ofArray(new byte[40]);
        byWords.fill((byte) 0x5A);
        new FrameHeader().wrap(bySetters, 3).clear().flags(0b0100_0010).opcode(Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE)
                .msn(0xFEDC).messageOffsetAndSegment((1 << 24) - 1, 255).immData(-7).length(0xFFFF_FFFFL).extLength(16)
                .subflow(513).timestampPresent(true).timestamp(-3).timestampEcho(0x1234_5678);
        new FrameHeader().wrap(byWords, 3).fill(0b0100_0010, Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0xFEDC, (1 << 24) - 1,
                255, -7, 0xFFFF_FFFFL, 16).stamp(513, -3, 0x1234_5678);
        assertArrayEquals(bySetters.asSlice(3, 32).toArray(ValueLayout.JAVA_BYTE),
                byWords.asSlice(3, 32).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0x5A, byWords.get(ValueLayout.JAVA_BYTE, 2), "nothing before the header");
        assertEquals(0x5A, byWords.get(ValueLayout.JAVA_BYTE, 35), "nothing after it");
        FrameHeader h = new FrameHeader().wrap(byWords, 0);
        assertThrows(IllegalArgumentException.class, () -> h.fill(256, 0, 0, 0, 0, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> h.fill(0, 0, 0x10000, 0, 0, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> h.fill(0, 0, 0, 1 << 24, 0, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> h.fill(0, 0, 0, 0, 256, 0, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> h.fill(0, 0, 0, 0, 0, 0, 1L << 32, 0));
        assertThrows(IllegalArgumentException.class, () -> h.fill(0, 0, 0, 0, 0, 0, 0, 0x10000));
        assertThrows(IllegalArgumentException.class, () -> h.stamp(0x10000, 0, 0));
    }

    @Test
    void aLoadedHeaderReadsItsCopyUntilASetterOrAWrap() {
        MemorySegment memory = MemorySegment.ofArray(new byte[36]);
        FrameHeader writer = new FrameHeader().wrap(memory, 4).fill(0b0110_0010, Opcode.SEND_ONLY_WITH_IMMEDIATE, 0xBEEF,
                77, 3, 0x0102_0304, 0xF000_0001L, 4).stamp(9, 11, 12).icrc(-5);
        FrameHeader reader = new FrameHeader().wrap(memory, 4).load();
        assertEquals(List.of(writer.flags(), writer.opcode(), writer.msn(), writer.mboSeg(), writer.icrc(), writer.timestamp(),
                        writer.timestampEcho(), writer.immData(), writer.length(), writer.extLength(), writer.subflow()),
                List.of(reader.flags(), reader.opcode(), reader.msn(), reader.mboSeg(), reader.icrc(), reader.timestamp(),
                        reader.timestampEcho(), reader.immData(), reader.length(), reader.extLength(), reader.subflow()));
        writer.msn(1);
        assertEquals(0xBEEF, reader.msn(), "the copy, until loaded again");
        assertEquals(1, reader.load().msn());
        reader.length(5);
        writer.length(6);
        assertEquals(6, reader.length(), "a setter returns the getters to memory");
        reader.load().fill(0, 1, 2, 3, 4, 5, 6, 7);
        writer.msn(8);
        assertEquals(8, reader.msn(), "fill too");
        reader.load().stamp(1, 2, 3);
        writer.subflow(4);
        assertEquals(4, reader.subflow(), "stamp too");
        reader.load();
        writer.opcode(9);
        assertEquals(9, reader.wrap(memory, 4).opcode(), "and a wrap");
    }

    @Test
    void opcodesAreTheIbtaRcValues() {
        String[] names = {"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_WITH_IMMEDIATE", "SEND_ONLY",
            "SEND_ONLY_WITH_IMMEDIATE", "RDMA_WRITE_FIRST", "RDMA_WRITE_MIDDLE", "RDMA_WRITE_LAST",
            "RDMA_WRITE_LAST_WITH_IMMEDIATE", "RDMA_WRITE_ONLY", "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_FIRST", "RDMA_READ_RESPONSE_MIDDLE",
            "RDMA_READ_RESPONSE_LAST", "RDMA_READ_RESPONSE_ONLY", "ACKNOWLEDGE"};
        assertEquals(names.length, Opcode.COUNT);
        for (int op = 0; op < names.length; op++) {
            assertEquals(names[op], Opcode.name(op));
            assertEquals(op, Opcode.valueOf(names[op]));
        }
        assertEquals(0x0C, Opcode.RDMA_READ_REQUEST);
        assertEquals(0x11, Opcode.ACKNOWLEDGE);
        assertFalse(Opcode.isValid(0x12));
        assertFalse(Opcode.isValid(-1));
        assertEquals(-1, Opcode.extensionLength(0xFF));
        assertEquals(-1, Opcode.rsnOffset(0xFF));
        assertFalse(Opcode.isTagged(-1));
        assertEquals("UNKNOWN(0x12)", Opcode.name(0x12));
    }

    @Test
    void opcodePropertiesFollowFirstMiddleLastOnly() {
        for (int op = 0; op < Opcode.COUNT; op++) {
            String n = Opcode.name(op);
            boolean only = n.contains("ONLY") || op == Opcode.RDMA_READ_REQUEST || op == Opcode.ACKNOWLEDGE;
            assertEquals(n.contains("FIRST") || only, Opcode.isFirst(op), n);
            assertEquals(n.contains("LAST") || only, Opcode.isLast(op), n);
            assertEquals(n.contains("IMMEDIATE"), Opcode.hasImmediate(op), n);
            // Frames of messages that consume a posted receive name it (the RSN): every SEND frame, and the
            // last frame of a WRITE with immediate, after its tagged fields.
            boolean tagged = n.startsWith("RDMA_WRITE") || n.startsWith("RDMA_READ_RESPONSE");
            boolean namesReceive = n.startsWith("SEND") || n.startsWith("RDMA_WRITE") && n.contains("IMMEDIATE");
            int ext = (tagged ? 12 : op == Opcode.RDMA_READ_REQUEST ? 28 : 0) + (namesReceive ? 4 : 0);
            assertEquals(ext, Opcode.extensionLength(op), n);
            assertEquals(tagged, Opcode.isTagged(op), n);
            assertEquals(namesReceive ? ext - 4 : -1, Opcode.rsnOffset(op), n);
        }
    }

    @Test
    void segmentOpcodesAreDerivedFromKindAndPosition() {
        assertEquals(Opcode.SEND_FIRST, Opcode.forSegment(Opcode.KIND_SEND, true, false));
        assertEquals(Opcode.SEND_MIDDLE, Opcode.forSegment(Opcode.KIND_SEND_WITH_IMMEDIATE, false, false));
        assertEquals(Opcode.SEND_LAST, Opcode.forSegment(Opcode.KIND_SEND, false, true));
        assertEquals(Opcode.SEND_LAST_WITH_IMMEDIATE, Opcode.forSegment(Opcode.KIND_SEND_WITH_IMMEDIATE, false, true));
        assertEquals(Opcode.SEND_ONLY, Opcode.forSegment(Opcode.KIND_SEND, true, true));
        assertEquals(Opcode.SEND_ONLY_WITH_IMMEDIATE, Opcode.forSegment(Opcode.KIND_SEND_WITH_IMMEDIATE, true, true));
        assertEquals(Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE, Opcode.forSegment(Opcode.KIND_WRITE_WITH_IMMEDIATE, false, true));
        assertEquals(Opcode.RDMA_WRITE_ONLY, Opcode.forSegment(Opcode.KIND_WRITE, true, true));
        assertEquals(Opcode.RDMA_WRITE_MIDDLE, Opcode.forSegment(Opcode.KIND_WRITE, false, false));
        assertEquals(Opcode.RDMA_READ_RESPONSE_MIDDLE, Opcode.forSegment(Opcode.KIND_READ_RESPONSE, false, false));
        assertEquals(Opcode.RDMA_READ_RESPONSE_ONLY, Opcode.forSegment(Opcode.KIND_READ_RESPONSE, true, true));
        assertThrows(IllegalArgumentException.class, () -> Opcode.forSegment(99, true, true));
    }

    @Test
    void everyErrorCodeHasANameAndAStatus() {
        for (int code = 0; code > -FrameError.COUNT; code--) {
            assertFalse(FrameError.name(code).startsWith("UNKNOWN"), "code " + code);
            assertFalse(CompletionStatus.name(FrameError.completionStatus(code)).startsWith("UNKNOWN"));
        }
        assertEquals("UNKNOWN(1)", FrameError.name(1));
        assertEquals(CompletionStatus.LOCAL_LENGTH_ERROR, FrameError.completionStatus(FrameError.LOCAL_LENGTH));
        assertEquals(CompletionStatus.REMOTE_ACCESS_ERROR, FrameError.completionStatus(FrameError.REMOTE_ACCESS));
        assertEquals(CompletionStatus.RNR_ERROR, FrameError.completionStatus(FrameError.RECEIVER_NOT_READY));
        assertEquals(CompletionStatus.PROTOCOL_ERROR, FrameError.completionStatus(FrameError.BAD_OPCODE));
    }
}
