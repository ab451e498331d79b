package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Every rule of the stateless header check, with its exact error code, and the ICRC. */
class FrameValidatorTest {

    private static final int MSS = 1024;
    private final byte[] bytes = new byte[FrameHeader.LENGTH + 28 + MSS];
    private final MemorySegment segment = MemorySegment.ofArray(bytes);
    private final FrameHeader header = new FrameHeader().wrap(segment, 0);

    /** A valid SEND_MIDDLE at segment 3, its extension the RSN. */
    private FrameHeader middle() {
        return header.clear().version(1).moreSegments(true).opcode(Opcode.SEND_MIDDLE).msn(7)
                .messageOffsetAndSegment(3 * MSS, 3).length(MSS).extLength(UntaggedExtension.LENGTH);
    }

    private int check(Consumer<FrameHeader> mutation) {
        middle();
        mutation.accept(header);
        return FrameValidator.validateHeader(header, MSS);
    }

    @Test
    void acceptsWellFormedFrames() {
        assertEquals(FrameError.OK, check(h -> { }));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.SEND_ONLY).moreSegments(false).messageOffsetAndSegment(0, 0).length(0)));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.SEND_ONLY_WITH_IMMEDIATE).moreSegments(false)
                .messageOffsetAndSegment(0, 0).length(MSS).immData(-1)));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.RDMA_WRITE_LAST).moreSegments(false).extLength(12).length(1)));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE).moreSegments(false)
                .extLength(16).length(1).immData(3)));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.RDMA_READ_REQUEST).moreSegments(false).extLength(28)
                .messageOffsetAndSegment(0, 0).length(0)));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.ACKNOWLEDGE).extLength(0).moreSegments(false).rtr(true)
                .messageOffsetAndSegment(0, 0).length(0).immData(5)));
        assertEquals(FrameError.OK, check(h -> h.timestampPresent(true).timestamp(99).timestampEcho(3).subflow(9)));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.RDMA_WRITE_LAST).moreSegments(false).extLength(12).length(1)
                .ackRequest(true)));
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.SEND_ONLY).moreSegments(false).messageOffsetAndSegment(0, 0)
                .length(0).ackRequest(true)));
    }

    @Test
    void rejectsEachViolationWithItsCode() {
        assertEquals(FrameError.BAD_VERSION, check(h -> h.version(0)));
        assertEquals(FrameError.BAD_VERSION, check(h -> h.version(2)));
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.quiet(true)), "quiet on a frame that is no ACKNOWLEDGE");
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.ACKNOWLEDGE).extLength(0).moreSegments(false)
                .messageOffsetAndSegment(0, 0).length(0).quiet(true)), "a quiet ACKNOWLEDGE");
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.opcode(Opcode.ACKNOWLEDGE).extLength(0).moreSegments(false)
                .messageOffsetAndSegment(0, 1).length(0).quiet(true)), "quiet on a NAK");
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.opcode(Opcode.ACKNOWLEDGE).extLength(0).moreSegments(false)
                .messageOffsetAndSegment(0, 0).length(0).rtr(true).quiet(true)), "quiet in the RTR exchange");
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.ackRequest(true)), "an ACK request on a frame that ends no message");
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.opcode(Opcode.ACKNOWLEDGE).extLength(0).moreSegments(false)
                .messageOffsetAndSegment(0, 0).length(0).ackRequest(true)), "an ACK request on an ACKNOWLEDGE");
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.opcode(Opcode.RDMA_READ_REQUEST).moreSegments(false).extLength(28)
                .messageOffsetAndSegment(0, 0).length(0).ackRequest(true)), "an ACK request on a READ request");
        assertEquals(FrameError.BAD_OPCODE, check(h -> h.opcode(0x12)));
        assertEquals(FrameError.BAD_OPCODE, check(h -> h.opcode(0xFF)));
        assertEquals(FrameError.BAD_EXTENSION_LENGTH, check(h -> h.extLength(12)));
        assertEquals(FrameError.BAD_EXTENSION_LENGTH, check(h -> h.extLength(0)), "a SEND frame without its RSN");
        assertEquals(FrameError.BAD_EXTENSION_LENGTH, check(h -> h.opcode(Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE)
                .moreSegments(false).messageOffsetAndSegment(0, 0).extLength(12)), "a WRITE with immediate without its RSN");
        assertEquals(FrameError.BAD_EXTENSION_LENGTH, check(h -> h.opcode(Opcode.RDMA_WRITE_ONLY).moreSegments(false)
                .messageOffsetAndSegment(0, 0).extLength(16)), "an RSN on a WRITE that consumes no receive");
        assertEquals(FrameError.BAD_EXTENSION_LENGTH, check(h -> h.opcode(Opcode.RDMA_WRITE_MIDDLE).extLength(28)));
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.moreSegments(false)));
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.opcode(Opcode.SEND_LAST)));
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.rtr(true)));
        assertEquals(FrameError.BAD_FLAGS, check(h -> h.opcode(Opcode.ACKNOWLEDGE).extLength(0).moreSegments(false)
                .messageOffsetAndSegment(0, 0).length(0).rtr(true).rtrAck(true)));
        assertEquals(FrameError.RESERVED_FIELD, check(h -> h.timestamp(1)));
        assertEquals(FrameError.RESERVED_FIELD, check(h -> h.immData(1)));
        assertEquals(FrameError.RESERVED_FIELD, check(h -> h.opcode(Opcode.ACKNOWLEDGE).extLength(0).moreSegments(false).length(0)));
        assertEquals(FrameError.RESERVED_FIELD, check(h -> h.opcode(Opcode.RDMA_READ_REQUEST).moreSegments(false)
                .extLength(28).messageOffsetAndSegment(0, 0).length(1)));
        assertEquals(FrameError.PAYLOAD_TOO_LONG, check(h -> h.length(MSS + 1)));
        assertEquals(FrameError.PAYLOAD_TOO_LONG, check(h -> h.length(0xFFFFFFFFL)));
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.messageOffsetAndSegment(3 * MSS + 1, 3)));
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.messageOffsetAndSegment(3 * MSS, 4)));
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.length(MSS - 1)));
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.opcode(Opcode.SEND_FIRST)));
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.opcode(Opcode.SEND_ONLY).moreSegments(false)));
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.opcode(Opcode.SEND_LAST).moreSegments(false).length(0)));
    }

    @Test
    void messageLimitIsSixteenMibMinusOneWithoutOverflow() {
        int mss = 1 << 16;
        int lastOffset = (FrameHeader.MAX_MESSAGE_OFFSET / mss) * mss; // 255 segments of 64 KiB
        header.clear().version(1).opcode(Opcode.SEND_LAST).messageOffsetAndSegment(lastOffset, (lastOffset / mss) & 0xFF)
                .length(FrameHeader.MAX_MESSAGE_OFFSET - lastOffset).extLength(UntaggedExtension.LENGTH);
        assertEquals(FrameError.OK, FrameValidator.validateHeader(header, mss), "16 MiB - 1 bytes");
        header.length(FrameHeader.MAX_MESSAGE_OFFSET - lastOffset + 1);
        assertEquals(FrameError.MESSAGE_TOO_LONG, FrameValidator.validateHeader(header, mss), "16 MiB");
        // The largest offset with the largest payload must not wrap around.
        int big = FrameHeader.MAX_MESSAGE_OFFSET;
        header.messageOffsetAndSegment(big, 0).length(big);
        assertEquals(FrameError.MESSAGE_TOO_LONG, FrameValidator.validateHeader(header, big));
    }

    @Test
    void validateFrameNeedsTheWholeFrameAndChecksReadLength() {
        ReadRequestExtension rr = new ReadRequestExtension();
        middle();
        assertEquals(FrameError.TRUNCATED, FrameValidator.validateFrame(segment, 0, 31, MSS, header, rr));
        assertEquals(FrameError.TRUNCATED, FrameValidator.validateFrame(segment, 0, 36 + MSS - 1, MSS, header, rr));
        assertEquals(FrameError.OK, FrameValidator.validateFrame(segment, 0, 36 + MSS, MSS, header, rr));
        header.clear().version(1).opcode(Opcode.RDMA_READ_REQUEST).extLength(28);
        rr.wrap(segment, 32).readLength(FrameHeader.MAX_MESSAGE_OFFSET);
        assertEquals(FrameError.OK, FrameValidator.validateFrame(segment, 0, 60, MSS, header, rr));
        rr.readLength(FrameHeader.MAX_MESSAGE_OFFSET + 1L);
        assertEquals(FrameError.MESSAGE_TOO_LONG, FrameValidator.validateFrame(segment, 0, 60, MSS, header, rr));
        assertEquals(60, FrameValidator.frameLength(segment, 0, 60));
        assertEquals(FrameError.TRUNCATED, FrameValidator.frameLength(segment, 0, 31));
        assertThrows(IllegalArgumentException.class, () -> FrameValidator.validateFrame(segment, 1, bytes.length, MSS, header, rr));
        assertThrows(IllegalArgumentException.class, () -> FrameValidator.validateHeader(header, 63));
    }

    @Test
    void icrcIgnoresExactlyTimestampPresentTheTimestampsAndSubflow() {
        // A resend on another subflow, with or without timestamps, keeps its ICRC; every other bit is covered.
        middle();
        int frameLength = (int) header.frameLength();
        for (int i = 32 + header.extLength(); i < frameLength; i++) {
            bytes[i] = (byte) (i * 7);
        }
        Icrc icrc = new Icrc();
        header.icrc(icrc.compute(segment, 0));
        for (int bit = 0; bit < 8 * frameLength; bit++) {
            int at = bit >>> 3;
            int mask = 1 << (bit & 7);
            boolean ignored = at == FrameHeader.FLAGS_OFFSET && mask == FrameHeader.FLAG_TIMESTAMP_PRESENT
                    || at >= FrameHeader.TIMESTAMP_OFFSET && at < FrameHeader.IMM_DATA_OFFSET
                    || at >= FrameHeader.SUBFLOW_OFFSET && at < FrameHeader.LENGTH;
            bytes[at] ^= (byte) mask;
            assertEquals(ignored, verifies(icrc), "bit " + (bit & 7) + " of byte " + at);
            bytes[at] ^= (byte) mask;
        }
        assertEquals(true, verifies(icrc));
    }

    /** Whether the frame's ICRC holds; false too when a flipped length no longer fits the bytes there. */
    private boolean verifies(Icrc icrc) {
        try {
            return icrc.verify(segment, 0, segment, FrameHeader.LENGTH + header.extLength());
        } catch (IllegalArgumentException frameNoLongerFits) {
            return false;
        }
    }

    @Test
    void icrcIsCrc32cOfTheMaskedFrame() {
        middle().icrc(-1).timestamp(-1).timestampEcho(-1).subflow(0xFFFF).timestampPresent(true);
        byte[] masked = java.util.Arrays.copyOf(bytes, (int) header.frameLength());
        masked[0] &= (byte) ~FrameHeader.FLAG_TIMESTAMP_PRESENT;
        java.util.Arrays.fill(masked, 8, 20, (byte) 0);
        masked[30] = 0;
        masked[31] = 0;
        java.util.zip.CRC32C reference = new java.util.zip.CRC32C();
        reference.update(masked);
        assertEquals((int) reference.getValue(), new Icrc().compute(segment, 0));
    }

    @Test
    void middleAndLastFramesAtOffsetZeroAreBadSegments() {
        // Review finding: a message could complete without its FIRST frame.
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.messageOffsetAndSegment(0, 0)), "MIDDLE at 0");
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.opcode(Opcode.SEND_LAST).moreSegments(false)
                .messageOffsetAndSegment(0, 0).length(10)), "LAST at 0");
        assertEquals(FrameError.BAD_SEGMENT, check(h -> h.opcode(Opcode.RDMA_READ_RESPONSE_LAST).moreSegments(false)
                .extLength(TaggedExtension.LENGTH).messageOffsetAndSegment(0, 0).length(10)), "READ RESPONSE LAST at 0");
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.SEND_LAST).moreSegments(false).length(10)), "LAST at 3");
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.SEND_FIRST).messageOffsetAndSegment(0, 0)), "FIRST at 0");
        assertEquals(FrameError.OK, check(h -> h.opcode(Opcode.SEND_ONLY).moreSegments(false)
                .messageOffsetAndSegment(0, 0).length(0)), "empty ONLY at 0");
    }
}
