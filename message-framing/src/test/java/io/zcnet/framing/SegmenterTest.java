package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class SegmenterTest {

    private static final int MSS = 256;
    private final FramingConfig config = new FramingConfig(MSS, true, 64);
    private final Segmenter segmenter = new Segmenter(config);
    private final FrameHeader h = new FrameHeader();
    private final TaggedExtension t = new TaggedExtension();
    private final UntaggedExtension u = new UntaggedExtension();
    private final ReadRequestExtension rr = new ReadRequestExtension();
    private final Icrc icrc = new Icrc();

    private void assertValid(byte[] frame) {
        MemorySegment s = MemorySegment.ofArray(frame);
        assertEquals(FrameError.OK, FrameValidator.validateFrame(s, 0, frame.length, MSS, h, rr), h.toString());
        assertEquals(frame.length, h.frameLength());
        assertTrue(icrc.verify(s, 0, s, FrameHeader.LENGTH + h.extLength()), "icrc of " + h);
    }

    @Test
    void zeroByteSendIsOneOnlyFrame() {
        List<byte[]> frames = TestFrames.all(segmenter.beginSend(9, 5, MemorySegment.ofArray(new byte[0]), 0, 0));
        assertEquals(1, frames.size());
        assertValid(frames.get(0));
        assertEquals(Opcode.SEND_ONLY, h.opcode());
        assertEquals(9, h.msn());
        assertEquals(5, u.wrap(MemorySegment.ofArray(frames.get(0)), 32).rsn());
        assertEquals(0, h.length());
        assertFalse(h.moreSegments());
    }

    @Test
    void exactlyOneSegmentIsOneFrameAndOneMoreByteIsTwo() {
        MemorySegment src = MemorySegment.ofArray(TestFrames.pattern(MSS + 1, 1));
        assertEquals(1, segmenter.beginSendWithImmediate(1, 0, src, 0, MSS, 42).frameCount());
        List<byte[]> one = TestFrames.all(segmenter);
        assertValid(one.get(0));
        assertEquals(Opcode.SEND_ONLY_WITH_IMMEDIATE, h.opcode());
        assertEquals(42, h.immData());
        List<byte[]> two = TestFrames.all(segmenter.beginSendWithImmediate(2, 1, src, 0, MSS + 1, 43));
        assertEquals(2, two.size());
        assertValid(two.get(0));
        assertEquals(Opcode.SEND_FIRST, h.opcode());
        assertEquals(0, h.immData(), "immediate only on the last frame");
        assertTrue(h.moreSegments());
        assertValid(two.get(1));
        assertEquals(Opcode.SEND_LAST_WITH_IMMEDIATE, h.opcode());
        assertEquals(MSS, h.messageOffset());
        assertEquals(1, h.segmentNumber());
        assertEquals(1, h.length());
        assertEquals(43, h.immData());
    }

    @Test
    void payloadIsDescribedAsSlicesOfTheSourceInEveryOrder() {
        MemorySegment src = MemorySegment.ofArray(TestFrames.pattern(5 * MSS + 17, 2));
        segmenter.beginSend(3, 0, src, 10, 4 * MSS + 7);
        assertEquals(5, segmenter.frameCount());
        MemorySegment out = MemorySegment.ofArray(new byte[64]);
        for (long i = segmenter.frameCount() - 1; i >= 0; i--) {
            assertEquals(32 + UntaggedExtension.LENGTH, segmenter.writeFrame(i, out, 0));
            assertEquals(10 + i * MSS, segmenter.payloadOffset());
            assertEquals(i == 4 ? 7 : MSS, segmenter.payloadLength());
            h.wrap(out, 0);
            assertEquals(i * MSS, h.messageOffset());
            assertEquals(i == 0 ? Opcode.SEND_FIRST : i == 4 ? Opcode.SEND_LAST : Opcode.SEND_MIDDLE, h.opcode());
        }
    }

    @Test
    void taggedFramesNameTheirOwnDestination() {
        MemorySegment src = MemorySegment.ofArray(TestFrames.pattern(3 * MSS, 3));
        List<byte[]> frames = TestFrames.all(segmenter.beginWriteWithImmediate(100, 0, src, 0, 3 * MSS, 0x1234, 5000, 77));
        assertEquals(3, frames.size());
        for (int i = 0; i < 3; i++) {
            assertValid(frames.get(i));
            t.wrap(MemorySegment.ofArray(frames.get(i)), 32);
            assertEquals(0x1234, t.rkey());
            assertEquals(5000 + i * MSS, t.regionOffset());
        }
        assertEquals(Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE, h.opcode());
        assertEquals(77, h.immData());
    }

    @Test
    void everyFrameOfAMessageThatConsumesAReceiveNamesItByItsRsn() {
        FlowControl flow = new FlowControl(config);
        assertEquals(FrameError.OK, flow.onAcknowledge(0xFFFF, 8), "the peer posted 8 receives");
        MemorySegment src = MemorySegment.ofArray(TestFrames.pattern(3 * MSS, 4));
        // A SEND, a WRITE (no receive), a SEND with immediate: RSNs 0 and 1, read before each claim.
        int sendRsn = flow.nextReceiveSequence();
        List<byte[]> send = TestFrames.all(segmenter.beginSend(flow.claim(1, true), sendRsn, src, 0, 3 * MSS));
        List<byte[]> write = TestFrames.all(segmenter.beginWrite(flow.claim(1, false), src, 0, 2 * MSS, 9, 0));
        int immRsn = flow.nextReceiveSequence();
        List<byte[]> sendImm = TestFrames.all(segmenter.beginSendWithImmediate(flow.claim(1, true), immRsn, src, 0, MSS + 1, 5));
        assertEquals(0, sendRsn);
        assertEquals(1, immRsn);
        assertEquals(2, flow.nextReceiveSequence());
        for (byte[] f : send) {
            assertValid(f);
            assertEquals(UntaggedExtension.LENGTH, h.extLength());
            assertEquals(0, u.wrap(MemorySegment.ofArray(f), 32).rsn(), "every frame of the SEND");
        }
        for (byte[] f : write) {
            assertValid(f);
            assertEquals(TaggedExtension.LENGTH, h.extLength(), "a WRITE without immediate names no receive");
        }
        for (byte[] f : sendImm) {
            assertValid(f);
            assertEquals(1, u.wrap(MemorySegment.ofArray(f), 32).rsn());
        }
        // A WRITE with immediate over two messages: only the last frame of the last one consumes a receive.
        try (Arena arena = Arena.ofShared()) {
            int mss = 1 << 16;
            Segmenter big = new Segmenter(new FramingConfig(mss, true, 64));
            long length = FrameHeader.MAX_MESSAGE_OFFSET + 1L;
            big.beginWriteWithImmediate(7, -3, arena.allocate(length), 0, length, 0x55, 64, 11);
            MemorySegment out = MemorySegment.ofArray(new byte[64]);
            for (long i = 0; i < big.frameCount(); i++) {
                int headerBytes = big.writeFrame(i, out, 0);
                h.wrap(out, 0);
                boolean last = i == big.frameCount() - 1;
                assertEquals(last, Opcode.hasImmediate(h.opcode()), "frame " + i + " " + h);
                assertEquals(32 + (last ? TaggedExtension.LENGTH_WITH_RSN : TaggedExtension.LENGTH), headerBytes, "frame " + i);
                assertEquals(FrameError.OK, FrameValidator.validateHeader(h, mss), "frame " + i);
                if (last) {
                    t.wrap(out, 32);
                    assertEquals(-3, t.rsn());
                    assertEquals(0x55, t.rkey());
                    assertEquals(64 + big.payloadOffset(), t.regionOffset());
                    assertTrue(new Icrc().verify(out, 0, big.source(), big.payloadOffset()));
                }
            }
        }
    }

    @Test
    void writesBeyondOneMessageBecomeSeveralMessages() {
        try (Arena arena = Arena.ofShared()) {
            int mss = 1 << 16;
            Segmenter big = new Segmenter(new FramingConfig(mss, false, 64));
            long length = 40L << 20;
            MemorySegment src = arena.allocate(length);
            big.beginWriteWithImmediate(0xFFFF, 0, src, 0, length, 7, 1000, 99);
            int chunk = new FramingConfig(mss, false, 64).messageChunk();
            assertEquals(FrameHeader.MAX_MESSAGE_OFFSET / mss * mss, chunk);
            assertEquals(3, big.messageCount());
            MemorySegment out = MemorySegment.ofArray(new byte[32 + TaggedExtension.LENGTH_WITH_RSN]);
            long placed = 0;
            int lastMsn = -1;
            int messages = 0;
            while (big.hasNext()) {
                big.next(out, 0);
                h.wrap(out, 0);
                t.wrap(out, 32);
                assertEquals(FrameError.OK, FrameValidator.validateHeader(h, mss));
                assertEquals(1000 + big.payloadOffset(), t.regionOffset());
                if (h.msn() != lastMsn) {
                    messages++;
                    lastMsn = h.msn();
                }
                boolean lastMessage = h.msn() == 1;
                assertEquals(lastMessage && Opcode.isLast(h.opcode()), Opcode.hasImmediate(h.opcode()));
                placed += big.payloadLength();
            }
            assertEquals(length, placed);
            assertEquals(3, messages);
            assertEquals(1, lastMsn, "MSN wraps from 0xFFFF through 0 to 1");
        }
    }

    @Test
    void anAcknowledgeRequestRidesOnTheLastFrameOfTheWorkRequestOnlyAndEveryBeginClearsIt() {
        MemorySegment src = MemorySegment.ofArray(TestFrames.pattern(3 * MSS, 1));
        List<byte[]> frames = TestFrames.all(segmenter.beginWrite(4, src, 0, 3 * MSS - 5, 0x77, 0).requestAcknowledge(true));
        assertEquals(3, frames.size());
        for (int i = 0; i < 3; i++) {
            assertValid(frames.get(i));
            assertEquals(i == 2, h.ackRequest(), "frame " + i);
        }
        assertValid(TestFrames.all(segmenter.beginSend(7, 0, src, 0, 1)).get(0));
        assertFalse(h.ackRequest(), "a new work request starts without the request");
        segmenter.beginReadRequest(5, 11, 100, 10, 22, 200);
        assertThrows(IllegalStateException.class, () -> segmenter.requestAcknowledge(true));
        assertThrows(IllegalStateException.class, () -> new Segmenter(config).requestAcknowledge(true));
    }

    @Test
    void readRequestsAreOneFramePerMessage() {
        segmenter.beginReadRequest(5, 11, 100, 3L * config.messageChunk() + 1, 22, 200);
        List<byte[]> frames = TestFrames.all(segmenter);
        assertEquals(4, frames.size());
        for (int i = 0; i < 4; i++) {
            assertValid(frames.get(i));
            assertEquals(5 + i, h.msn());
            rr.wrap(MemorySegment.ofArray(frames.get(i)), 32);
            assertEquals(100L + (long) i * config.messageChunk(), rr.regionOffset());
            assertEquals(200L + (long) i * config.messageChunk(), rr.sinkOffset());
            assertEquals(i == 3 ? 1 : config.messageChunk(), rr.readLength());
        }
    }

    @Test
    void framesGatheredFromSeveralPiecesAreTheFramesOfTheirConcatenation() {
        SplittableRandom random = new SplittableRandom(11);
        MemorySegment a = MemorySegment.ofArray(TestFrames.pattern(8 * MSS, 5));
        MemorySegment b = MemorySegment.ofArray(TestFrames.pattern(8 * MSS, 6));
        for (int round = 0; round < 100; round++) {
            SgeList list = new SgeList(5);
            for (int i = 0, n = 1 + random.nextInt(5); i < n; i++) {
                int length = random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(2 * MSS);
                list.add(i % 2 == 0 ? a : b, random.nextInt(8 * MSS - length + 1), length);
            }
            MemorySegment whole = MemorySegment.ofArray(SgeListTest.concat(list));
            int length = (int) list.byteSize();
            for (int kind = 0; kind < 5; kind++) {
                List<byte[]> gathered = TestFrames.all(begin(kind, list, null, length));
                List<byte[]> contiguous = TestFrames.all(begin(kind, null, whole, length));
                assertEquals(contiguous.size(), gathered.size());
                for (int f = 0; f < gathered.size(); f++) {
                    assertArrayEquals(contiguous.get(f), gathered.get(f), "kind " + kind + " frame " + f + " of " + list);
                }
            }
        }
    }

    /** Begins a SEND, SEND with immediate, WRITE, WRITE with immediate or READ response from a list or a segment. */
    private Segmenter begin(int kind, SgeList list, MemorySegment whole, int length) {
        return switch (kind) {
            case 0 -> list != null ? segmenter.beginSend(1, 2, list) : segmenter.beginSend(1, 2, whole, 0, length);
            case 1 -> list != null ? segmenter.beginSendWithImmediate(1, 2, list, 3)
                    : segmenter.beginSendWithImmediate(1, 2, whole, 0, length, 3);
            case 2 -> list != null ? segmenter.beginWrite(1, list, 4, 500) : segmenter.beginWrite(1, whole, 0, length, 4, 500);
            case 3 -> list != null ? segmenter.beginWriteWithImmediate(1, 2, list, 4, 500, 3)
                    : segmenter.beginWriteWithImmediate(1, 2, whole, 0, length, 4, 500, 3);
            default -> list != null ? segmenter.beginReadResponse(1, list, 4, 500)
                    : segmenter.beginReadResponse(1, whole, 0, length, 4, 500);
        };
    }

    @Test
    void aFrameSaysWhetherItsPayloadLiesInOnePiece() {
        MemorySegment memory = MemorySegment.ofArray(new byte[4 * MSS]);
        SgeList list = new SgeList(3).add(memory, 0, MSS + 10).add(memory, 2 * MSS, 0).add(memory, 3 * MSS, MSS);
        segmenter.beginSend(0, 0, list);
        MemorySegment out = MemorySegment.ofArray(new byte[64]);
        segmenter.writeFrame(0, out, 0);
        assertTrue(segmenter.isPayloadContiguous());
        assertEquals(0, segmenter.payloadOffset());
        segmenter.writeFrame(1, out, 0);
        assertFalse(segmenter.isPayloadContiguous(), "10 bytes of the first piece, then the third's");
        assertEquals(MSS, segmenter.payloadPosition());
        assertEquals(MSS, segmenter.payloadOffset());
        segmenter.writeFrame(2, out, 0);
        assertTrue(segmenter.isPayloadContiguous());
        assertEquals(3 * MSS + MSS - 10, segmenter.payloadOffset());
        assertEquals(10, segmenter.payloadLength());
        SgeList unresolved = new SgeList(1).add(7, 0, 10);
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginSend(0, 0, unresolved));
    }

    @Test
    void aReadIntoSeveralSinksIsReadPieceByPieceOverConsecutiveRemoteRanges() {
        int chunk = config.messageChunk();
        SgeList sinks = new SgeList(4).add(0x11, 1000, chunk + 5).add(0x22, 0, 0).add(0x33, 7, 3).add(0x44, 50, chunk);
        assertEquals(4, segmenter.readRequestMessages(sinks));
        List<byte[]> frames = TestFrames.all(segmenter.beginReadRequest(9, 0x77, 100, sinks));
        long[][] expected = { // sink key, sink offset, remote offset, length
            {0x11, 1000, 100, chunk},
            {0x11, 1000 + chunk, 100 + chunk, 5},
            {0x33, 7, 100 + chunk + 5, 3},
            {0x44, 50, 100 + chunk + 8, chunk}};
        assertEquals(4, frames.size());
        for (int i = 0; i < 4; i++) {
            assertValid(frames.get(i));
            assertEquals(9 + i, h.msn());
            rr.wrap(MemorySegment.ofArray(frames.get(i)), 32);
            assertEquals(0x77, rr.rkey());
            assertEquals(expected[i][0], rr.sinkRkey(), "message " + i);
            assertEquals(expected[i][1], rr.sinkOffset(), "message " + i);
            assertEquals(expected[i][2], rr.regionOffset(), "message " + i);
            assertEquals(expected[i][3], rr.readLength(), "message " + i);
            segmenter.locateReadMessage(i);
            assertEquals(expected[i][0], segmenter.readSinkKey());
            assertEquals(expected[i][1], segmenter.readSinkOffset());
            assertEquals(expected[i][3], segmenter.readLength());
        }
        SgeList empty = new SgeList(2).add(0x55, 8, 0).add(0x66, 9, 0);
        assertEquals(1, segmenter.beginReadRequest(0, 0x77, 0, empty).frameCount(), "a READ of 0 bytes is one request");
        assertEquals(0x55, segmenter.locateReadMessage(0).readSinkKey());
        assertEquals(0, segmenter.readLength());
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginReadRequest(0, 0x77, 0, new SgeList(1)));
        assertThrows(IllegalArgumentException.class, () -> segmenter.locateReadMessage(1));
    }

    @Test
    void rejectsBadArguments() {
        MemorySegment src = MemorySegment.ofArray(new byte[10]);
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginSend(0, 0, src, 0, 11));
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginSend(0, 0, src, -1, 1));
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginSend(0x10000, 0, src, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginSend(0, 0, null, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginWrite(0, src, 0, 1, 1, Long.MAX_VALUE));
        assertThrows(IllegalArgumentException.class, () -> segmenter.beginSend(0, 0, src, 0, FramingConfig.MAX_MESSAGE_SIZE + 1));
        assertThrows(IllegalStateException.class, () -> new Segmenter(config).next(src, 0));
        segmenter.beginSend(0, 0, src, 0, 10);
        assertThrows(IllegalArgumentException.class, () -> segmenter.writeFrame(1, MemorySegment.ofArray(new byte[36]), 0));
        assertThrows(IllegalArgumentException.class, () -> segmenter.writeFrame(0, MemorySegment.ofArray(new byte[35]), 0),
                "the RSN does not fit");
    }

    @Test
    void sendsReadResponsesAndWritesUpTo16MiBAreOneMessageAtEverySegmentSize() {
        // Review finding: a SEND longer than messageChunk() became two messages (two MSNs), and the receiver
        // completed the first part as a whole SEND.
        int length = FramingConfig.MAX_MESSAGE_SIZE;
        MemorySegment source = MemorySegment.ofArray(new byte[length]);
        MemorySegment scratch = MemorySegment.ofArray(new byte[FrameHeader.LENGTH + TaggedExtension.LENGTH_WITH_RSN]);
        for (int mss : new int[] {64, 1000, 65536, FramingConfig.MAX_MESSAGE_SIZE}) {
            FramingConfig c = new FramingConfig(mss, false, 4);
            Segmenter s = new Segmenter(c);
            long frames = (length + mss - 1) / mss;
            s.beginSend(3, 0, source, 0, length);
            assertEquals(1, s.messageCount(), "SEND, mss " + mss);
            assertEquals(frames, s.frameCount(), "SEND, mss " + mss);
            assertOneMessage(s, scratch, mss, length, 3, Opcode.SEND_FIRST, Opcode.SEND_LAST);
            s.beginSendWithImmediate(4, 1, source, 0, length, 99);
            assertEquals(1, s.messageCount(), "SEND with immediate, mss " + mss);
            assertOneMessage(s, scratch, mss, length, 4, Opcode.SEND_FIRST, Opcode.SEND_LAST_WITH_IMMEDIATE);
            s.beginReadResponse(5, source, 0, length, 0x1234, 0);
            assertEquals(1, s.messageCount(), "READ response, mss " + mss);
            assertOneMessage(s, scratch, mss, length, 5, Opcode.RDMA_READ_RESPONSE_FIRST, Opcode.RDMA_READ_RESPONSE_LAST);
            // A WRITE with immediate of one message: the receiver's completion can report its whole length.
            s.beginWriteWithImmediate(6, 2, source, 0, length, 0x1234, 0, 98);
            assertEquals(1, s.messageCount(), "WRITE with immediate, mss " + mss);
            assertOneMessage(s, scratch, mss, length, 6, Opcode.RDMA_WRITE_FIRST, Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE);
        }
    }

    /** Every frame: the one MSN, consecutive segment-aligned offsets, FIRST first, LAST last, the validator's OK. */
    private void assertOneMessage(Segmenter s, MemorySegment scratch, int mss, int length, int msn, int firstOpcode,
                                  int lastOpcode) {
        long frames = s.frameCount();
        long bytes = 0;
        for (long i = 0; i < frames; i++) {
            s.writeFrame(i, scratch, 0);
            h.wrap(scratch, 0);
            assertEquals(msn, h.msn());
            assertEquals(bytes, h.messageOffset(), "frame " + i);
            assertEquals(FrameError.OK, FrameValidator.validateHeader(h, mss), "frame " + i + " " + h);
            if (i == 0 && frames > 1) {
                assertEquals(firstOpcode, h.opcode());
            }
            if (i == frames - 1 && frames > 1) {
                assertEquals(lastOpcode, h.opcode());
            }
            bytes += s.payloadLength();
        }
        assertEquals(length, bytes);
    }

    @Test
    void aSingleFrameIsWrittenByteForByteAsTheGeneralPathWritesIt() {
        for (boolean withIcrc : new boolean[] {false, true}) {
            Segmenter general = new Segmenter(new FramingConfig(MSS, withIcrc, 64));
            Segmenter single = new Segmenter(new FramingConfig(MSS, withIcrc, 64));
            MemorySegment source = MemorySegment.ofArray(TestFrames.pattern(MSS + 9, 7));
            for (int kind = Opcode.KIND_SEND; kind <= Opcode.KIND_WRITE_WITH_IMMEDIATE; kind++) {
                for (int length : new int[] {0, 1, 64, MSS}) {
                    for (boolean ask : new boolean[] {false, true}) {
                        switch (kind) {
                            case Opcode.KIND_SEND -> general.beginSend(0xFFFF, 77, source, 9, length);
                            case Opcode.KIND_SEND_WITH_IMMEDIATE -> general.beginSendWithImmediate(3, 78, source, 9, length, 0xCAFE);
                            case Opcode.KIND_WRITE -> general.beginWrite(4, source, 9, length, 0x1234, 1L << 40);
                            default -> general.beginWriteWithImmediate(5, 79, source, 9, length, 0x1234, 96, -2);
                        }
                        general.requestAcknowledge(ask);
                        byte[] expected = TestFrames.all(general).get(0);
                        int msn = switch (kind) {
                            case Opcode.KIND_SEND -> 0xFFFF;
                            case Opcode.KIND_SEND_WITH_IMMEDIATE -> 3;
                            case Opcode.KIND_WRITE -> 4;
                            default -> 5;
                        };
                        int rsn = kind == Opcode.KIND_SEND ? 77 : kind == Opcode.KIND_SEND_WITH_IMMEDIATE ? 78 : 79;
                        long regionOffset = kind == Opcode.KIND_WRITE ? 1L << 40 : 96;
                        int imm = kind == Opcode.KIND_SEND_WITH_IMMEDIATE ? 0xCAFE : -2;
                        byte[] written = new byte[Segmenter.singleFrameBytes(kind, length) + 5];
                        MemorySegment out = MemorySegment.ofArray(written);
                        int header = single.writeSingle(kind, msn, rsn, source, 9, length, 0x1234, regionOffset, imm, ask,
                                out, 5);
                        String what = "kind " + kind + ", " + length + " bytes, ack " + ask + ", icrc " + withIcrc;
                        assertEquals(expected.length, header + length, what);
                        assertArrayEquals(expected, Arrays.copyOfRange(written, 5, written.length), what);
                        if (withIcrc) {
                            assertValid(expected); // and so the single frame, byte for byte
                        }
                    }
                }
            }
        }
    }

    @Test
    void aSingleFrameRefusesWhatIsNotOneSendOrWriteFrameInItsSpace() {
        MemorySegment source = MemorySegment.ofArray(new byte[MSS + 1]);
        MemorySegment out = MemorySegment.ofArray(new byte[2 * MSS]);
        assertThrows(IllegalArgumentException.class,
                () -> segmenter.writeSingle(Opcode.KIND_READ_REQUEST, 1, 0, source, 0, 8, 0, 0, 0, false, out, 0));
        assertThrows(IllegalArgumentException.class,
                () -> segmenter.writeSingle(Opcode.KIND_SEND, 1, 0, source, 0, MSS + 1, 0, 0, 0, false, out, 0));
        assertThrows(IllegalArgumentException.class,
                () -> segmenter.writeSingle(Opcode.KIND_SEND, 0x10000, 0, source, 0, 8, 0, 0, 0, false, out, 0));
        assertThrows(IllegalArgumentException.class,
                () -> segmenter.writeSingle(Opcode.KIND_WRITE, 1, 0, source, 0, 8, 0, Long.MAX_VALUE - 4, 0, false, out, 0));
        assertThrows(IllegalArgumentException.class,
                () -> segmenter.writeSingle(Opcode.KIND_SEND, 1, 0, source, 0, MSS, 0, 0, 0, false, out, MSS - 10));
        assertThrows(IndexOutOfBoundsException.class,
                () -> segmenter.writeSingle(Opcode.KIND_SEND, 1, 0, source, MSS, 8, 0, 0, 0, false, out, 0));
    }
}
