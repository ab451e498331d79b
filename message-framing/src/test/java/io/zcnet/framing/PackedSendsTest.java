package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * SEND_PACKED frames: each record is placed into the receive its number names and completes as the SEND_ONLY
 * frame it stands for would, in MSN order with the frames around it, once; a malformed packed frame is
 * refused whole before any of it is used, and nothing is ever written outside the posted receives.
 */
class PackedSendsTest {

    private static final int MSS = 256;
    private static final int RECEIVE = 128;
    private static final int GUARD = 32;
    private static final byte GUARD_BYTE = (byte) 0xA5;
    private static final int RECEIVES = 6;

    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final CompletionQueue cq = new CompletionQueue(16);
    private final Completion c = new Completion();
    private final MemorySegment memory = arena.allocate(RECEIVES * (long) (RECEIVE + GUARD) + GUARD);
    private final MemoryRegion receiveRegion;
    private FramingConfig config = new FramingConfig(MSS, true, 8);
    private MessageAssembler assembler = new MessageAssembler(config, registry, 8, cq, new FlowControl(config));
    private Segmenter segmenter = new Segmenter(config);

    PackedSendsTest() {
        memory.fill(GUARD_BYTE);
        receiveRegion = registry.register(memory, Access.LOCAL_WRITE);
    }

    @AfterEach
    void close() {
        arena.close();
    }

    private void useIcrc(boolean on) {
        config = new FramingConfig(MSS, on, 8);
        assembler = new MessageAssembler(config, registry, 8, cq, new FlowControl(config));
        segmenter = new Segmenter(config);
    }

    private void post(int count) {
        for (int n = 0; n < count; n++) {
            assertTrue(assembler.postReceive(100 + n, receiveRegion.localKey(), GUARD + n * (long) (RECEIVE + GUARD), RECEIVE));
        }
    }

    private MemorySegment receive(int n) {
        return memory.asSlice(GUARD + n * (long) (RECEIVE + GUARD), RECEIVE);
    }

    /** One message of a packed frame: its bytes, and its immediate data or null. */
    private record Message(byte[] bytes, Integer imm) {
        static Message of(int length, int seed) {
            return new Message(TestFrames.pattern(length, seed), null);
        }

        static Message withImm(int length, int seed, int imm) {
            return new Message(TestFrames.pattern(length, seed), imm);
        }
    }

    /** A packed frame of {@code messages}, the first MSN {@code msn} taking receive {@code rsn}. */
    private byte[] packed(int msn, int rsn, boolean ask, Message... messages) {
        int payload = 0;
        for (Message m : messages) {
            payload += PackedSends.recordBytes(m.bytes.length, m.imm != null);
        }
        byte[] frame = new byte[Segmenter.PACKED_HEADER_BYTES + payload];
        MemorySegment out = MemorySegment.ofArray(frame);
        long at = Segmenter.PACKED_HEADER_BYTES;
        for (Message m : messages) {
            at = PackedSends.writeRecord(out, at, MemorySegment.ofArray(m.bytes), 0, m.bytes.length, m.imm != null,
                    m.imm == null ? 0 : m.imm);
        }
        assertEquals(Segmenter.PACKED_HEADER_BYTES, segmenter.writePackedHeader(msn, rsn, payload, ask, out, 0));
        return frame;
    }

    private int offer(byte[] frame) {
        return assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
    }

    private void assertCompletion(long id, int opcode, Message m, int msn) {
        assertTrue(cq.poll(c), "expected the completion of receive " + id);
        assertEquals(id, c.workRequestId(), c.toString());
        assertEquals(CompletionStatus.name(CompletionStatus.SUCCESS), CompletionStatus.name(c.status()), c.toString());
        assertEquals(Opcode.name(opcode), Opcode.name(c.opcode()), c.toString());
        assertEquals(m.bytes.length, c.byteCount(), c.toString());
        assertEquals(m.imm == null ? 0 : m.imm, c.immediate(), c.toString());
        assertEquals(msn, c.msn(), c.toString());
        assertArrayEquals(m.bytes, receive((int) id - 100).asSlice(0, m.bytes.length).toArray(ValueLayout.JAVA_BYTE));
    }

    /** Every byte outside receives 0 .. {@code used - 1} is still the guard's. */
    private void assertNothingWrittenOutside(int used) {
        for (long i = 0; i < memory.byteSize(); i++) {
            long inStride = (i - GUARD) % (RECEIVE + GUARD);
            long receive = (i - GUARD) / (RECEIVE + GUARD);
            boolean inUsedReceive = i >= GUARD && inStride < RECEIVE && receive < used;
            if (!inUsedReceive) {
                assertEquals(GUARD_BYTE, memory.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
            }
        }
    }

    private void assertRefused(int error, int result) {
        assertEquals(FrameError.name(error), FrameError.name(result));
        assertEquals(error, assembler.error());
        assertTrue(assembler.isInError());
        for (int n = 0; n < RECEIVES && cq.poll(c); n++) {
            assertEquals(CompletionStatus.name(CompletionStatus.FLUSH_ERROR), CompletionStatus.name(c.status()),
                    "a refused packed frame completes none of its messages: " + c);
        }
        assertNothingWrittenOutside(0);
    }

    // ---------------------------------------------------------------- placement

    @ParameterizedTest(name = "icrc={0}")
    @ValueSource(booleans = {false, true})
    void eachMessageLandsInTheReceiveItsNumberNamesAndCompletesInOrder(boolean icrc) {
        useIcrc(icrc);
        post(4);
        Message a = Message.of(64, 1);
        Message b = Message.withImm(0, 2, 0xCAFEBABE);
        Message d = Message.of(RECEIVE, 3);
        assertEquals(MessageAssembler.ACCEPTED, offer(packed(0, 0, false, a, b, d)));
        assertCompletion(100, Opcode.SEND_ONLY, a, 0);
        assertCompletion(101, Opcode.SEND_ONLY_WITH_IMMEDIATE, b, 1);
        assertCompletion(102, Opcode.SEND_ONLY, d, 2);
        assertFalse(cq.poll(c));
        assertEquals(2, assembler.acknowledgedMsn());
        assertEquals(1, assembler.framesAccepted());
        assertNothingWrittenOutside(3);
    }

    @Test
    void aPackedFrameAheadOfAnEarlierMessageIsPlacedAtOnceAndCompletesAfterIt() {
        post(2);
        MemoryRegion region = registry.register(arena.allocate(2 * MSS), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        byte[] first = TestFrames.pattern(2 * MSS, 9);
        List<byte[]> earlier = TestFrames.all(segmenter.beginWrite(0, MemorySegment.ofArray(first), 0, first.length,
                region.remoteKey(), 0));
        Message a = Message.of(10, 4);
        Message b = Message.withImm(20, 5, 7);
        assertEquals(MessageAssembler.ACCEPTED, offer(packed(1, 0, false, a, b)));
        assertArrayEquals(a.bytes, receive(0).asSlice(0, 10).toArray(ValueLayout.JAVA_BYTE), "placed already");
        assertTrue(cq.isEmpty(), "the WRITE, MSN 0, is not complete");
        for (byte[] f : earlier.reversed()) {
            assertEquals(MessageAssembler.ACCEPTED, offer(f));
        }
        assertArrayEquals(first, region.segment().toArray(ValueLayout.JAVA_BYTE));
        assertCompletion(100, Opcode.SEND_ONLY, a, 1);
        assertCompletion(101, Opcode.SEND_ONLY_WITH_IMMEDIATE, b, 2);
        assertFalse(cq.poll(c));
        assertNothingWrittenOutside(2);
    }

    @Test
    void theSameMessagesAgainPackedOrOneByOneAreDuplicatesAndCompleteOnce() {
        post(3);
        Message a = Message.of(30, 1);
        Message b = Message.of(40, 2);
        byte[] frame = packed(0, 0, false, a, b);
        assertEquals(MessageAssembler.ACCEPTED, offer(frame));
        assertEquals(MessageAssembler.DUPLICATE, offer(frame), "the whole frame again");
        for (byte[] f : TestFrames.all(segmenter.beginSend(1, 1, MemorySegment.ofArray(b.bytes), 0, b.bytes.length))) {
            assertEquals(MessageAssembler.DUPLICATE, offer(f), "message 1 resent in a frame of its own");
        }
        Message d = Message.of(50, 3);
        assertEquals(MessageAssembler.ACCEPTED, offer(packed(1, 1, false, b, d)), "a pack partly new is accepted");
        assertCompletion(100, Opcode.SEND_ONLY, a, 0);
        assertCompletion(101, Opcode.SEND_ONLY, b, 1);
        assertCompletion(102, Opcode.SEND_ONLY, d, 2);
        assertFalse(cq.poll(c), "nothing completed twice");
        assertEquals(2, assembler.duplicates(), "the packed frame again and the SEND_ONLY");
    }

    @Test
    void anAcknowledgementRequestIsForTheLastMessage() {
        post(3);
        assertEquals(MessageAssembler.ACCEPTED, offer(packed(0, 0, true, Message.of(1, 1), Message.of(2, 2))));
        assertTrue(assembler.isAcknowledgeRequested());
        assertEquals(1, assembler.acknowledgedMsn());
        assembler.acknowledgeSent(1);
        assertFalse(assembler.isAcknowledgeRequested());
    }

    @Test
    void aMessageLongerThanItsReceiveFailsThatReceiveAndWritesNothingBeyondIt() {
        post(2);
        Message a = Message.of(16, 1);
        int result = offer(packed(0, 0, false, a, Message.of(RECEIVE + 1, 2)));
        assertEquals(FrameError.name(FrameError.LOCAL_LENGTH), FrameError.name(result));
        assertCompletion(100, Opcode.SEND_ONLY, a, 0);
        assertTrue(cq.poll(c));
        assertEquals(101, c.workRequestId());
        assertEquals(CompletionStatus.name(CompletionStatus.LOCAL_LENGTH_ERROR), CompletionStatus.name(c.status()));
        assertNothingWrittenOutside(1);
    }

    @Test
    void aMessageNamingAReceiveNotPostedIsReceiverNotReady() {
        post(1);
        int result = offer(packed(0, 0, false, Message.of(8, 1), Message.of(8, 2)));
        assertEquals(FrameError.name(FrameError.RECEIVER_NOT_READY), FrameError.name(result));
        assertTrue(assembler.isInError());
    }

    @Test
    void messagesPastTheWindowAreRefused() {
        for (int n = 0; n < 8; n++) {
            // Eight receives (the window), the last two over receive 0's memory: zero-byte messages write nothing.
            assertTrue(assembler.postReceive(100 + n, receiveRegion.localKey(), GUARD + (n % RECEIVES) * (long) (RECEIVE + GUARD),
                    RECEIVE));
        }
        Message[] eight = new Message[8];
        for (int i = 0; i < eight.length; i++) {
            eight[i] = Message.of(0, i);
        }
        // MSN 0 has not arrived, so the window is MSNs 0 .. 7 and the last of MSNs 1 .. 8 is past it.
        int result = offer(packed(1, 1, false, eight));
        assertEquals(FrameError.name(FrameError.MSN_OUT_OF_WINDOW), FrameError.name(result), "a window of 8 messages");
    }

    // ---------------------------------------------------------------- malformed frames, refused whole

    @Test
    void aRecordRunningPastThePayloadIsRefusedBeforeAnyMessageIsPlaced() {
        useIcrc(false);
        post(2);
        byte[] frame = packed(0, 0, false, Message.of(8, 1), Message.of(8, 2));
        // The second record's header says 9 bytes where 8 are left.
        MemorySegment.ofArray(frame).set(WireLayouts.U32, Segmenter.PACKED_HEADER_BYTES + 4 + 8, 9);
        assertRefused(FrameError.INCONSISTENT_MESSAGE, offer(frame));
    }

    @Test
    void aPayloadShorterThanARecordHeaderAtItsEndIsRefused() {
        useIcrc(false);
        post(2);
        byte[] whole = packed(0, 0, false, Message.of(8, 1));
        byte[] frame = new byte[whole.length + 2];
        System.arraycopy(whole, 0, frame, 0, whole.length);
        MemorySegment.ofArray(frame).set(WireLayouts.U32, FrameHeader.LENGTH_OFFSET, whole.length + 2 - Segmenter.PACKED_HEADER_BYTES);
        assertRefused(FrameError.INCONSISTENT_MESSAGE, offer(frame));
    }

    @Test
    void reservedBitsInARecordHeaderAreRefused() {
        useIcrc(false);
        post(2);
        byte[] frame = packed(0, 0, false, Message.of(8, 1), Message.of(8, 2));
        MemorySegment.ofArray(frame).set(ValueLayout.JAVA_BYTE, Segmenter.PACKED_HEADER_BYTES, (byte) 0x01);
        assertRefused(FrameError.RESERVED_BITS, offer(frame));
    }

    @Test
    void aCorruptedRecordFailsTheIcrcAndNothingIsPlaced() {
        post(2);
        byte[] frame = packed(0, 0, false, Message.of(8, 1), Message.of(8, 2));
        frame[frame.length - 1] ^= 1;
        assertRefused(FrameError.ICRC_MISMATCH, offer(frame));
    }

    @Test
    void anEmptyPackedFrameIsABadSegment() {
        useIcrc(false);
        post(1);
        byte[] frame = new byte[Segmenter.PACKED_HEADER_BYTES];
        new FrameHeader().wrap(MemorySegment.ofArray(frame), 0).fill(FrameHeader.VERSION << FrameHeader.VERSION_SHIFT,
                Opcode.SEND_PACKED, 0, 0, 0, 0, 0, UntaggedExtension.LENGTH);
        assertRefused(FrameError.BAD_SEGMENT, offer(frame));
    }

    @Test
    void aPackedFrameLongerThanItsLimitIsRefused() {
        config = new FramingConfig(2 * PackedSends.MAX_LENGTH, false, 8);
        assembler = new MessageAssembler(config, registry, 8, cq, new FlowControl(config));
        segmenter = new Segmenter(config);
        post(1);
        byte[] frame = new byte[Segmenter.PACKED_HEADER_BYTES + PackedSends.MAX_LENGTH + 4];
        MemorySegment out = MemorySegment.ofArray(frame);
        out.set(WireLayouts.U32, Segmenter.PACKED_HEADER_BYTES, PackedSends.MAX_LENGTH);
        new FrameHeader().wrap(out, 0).fill(FrameHeader.VERSION << FrameHeader.VERSION_SHIFT, Opcode.SEND_PACKED, 0, 0, 0,
                0, PackedSends.MAX_LENGTH + 4, UntaggedExtension.LENGTH);
        assertRefused(FrameError.PAYLOAD_TOO_LONG, offer(frame));
        assertThrows(IllegalArgumentException.class,
                () -> segmenter.writePackedHeader(0, 0, PackedSends.MAX_LENGTH + 4, false, out, 0));
    }

    @Test
    void flagsAndFieldsAPackedFrameMayNotCarryAreRefused() {
        useIcrc(false);
        post(1);
        byte[] more = packed(0, 0, false, Message.of(4, 1));
        FrameHeader h = new FrameHeader().wrap(MemorySegment.ofArray(more), 0);
        h.flags(h.flags() | FrameHeader.FLAG_MORE_SEGMENTS);
        assertEquals(FrameError.BAD_FLAGS, FrameValidator.validateHeader(h, MSS));
        byte[] imm = packed(0, 0, false, Message.of(4, 1));
        new FrameHeader().wrap(MemorySegment.ofArray(imm), 0).immData(5);
        assertEquals(FrameError.RESERVED_FIELD, FrameValidator.validateHeader(new FrameHeader().wrap(MemorySegment.ofArray(imm), 0), MSS));
        assertRefused(FrameError.RESERVED_FIELD, offer(imm));
    }

    @Test
    void aPackedFrameIsNeverPlacedDirectly() {
        post(2);
        byte[] frame = packed(0, 0, false, Message.of(8, 1), Message.of(8, 2));
        PlacementTarget target = new PlacementTarget(arena.allocate(MSS));
        int result = assembler.beginPlacement(MemorySegment.ofArray(frame), 0, frame.length, target);
        assertRefused(FrameError.BAD_OPCODE, result);
    }

    @Test
    void validateFrameChecksTheRecords() {
        byte[] frame = packed(0, 0, false, Message.of(8, 1));
        FrameHeader h = new FrameHeader();
        ReadRequestExtension r = new ReadRequestExtension();
        MemorySegment s = MemorySegment.ofArray(frame);
        assertEquals(FrameError.OK, FrameValidator.validateFrame(s, 0, frame.length, MSS, h, r));
        s.set(WireLayouts.U32, Segmenter.PACKED_HEADER_BYTES, 9);
        assertEquals(FrameError.INCONSISTENT_MESSAGE, FrameValidator.validateFrame(s, 0, frame.length, MSS, h, r));
    }

    @Test
    void recordLayout() {
        byte[] frame = new byte[32];
        MemorySegment out = MemorySegment.ofArray(frame);
        long next = PackedSends.writeRecord(out, 0, MemorySegment.ofArray(new byte[] {1, 2, 3}), 0, 3, true, 0x01020304);
        assertEquals(11, next);
        assertArrayEquals(new byte[] {(byte) 0x80, 0, 0, 3, 1, 2, 3, 4, 1, 2, 3}, java.util.Arrays.copyOf(frame, 11));
        assertEquals(1, PackedSends.count(out, 0, 11));
        assertEquals(7, PackedSends.recordBytes(3, false));
        assertThrows(IllegalArgumentException.class, () -> PackedSends.writeRecord(out, 0, out, 0, PackedSends.MAX_LENGTH, false, 0));
    }
}
