package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

/**
 * The receive sequence number: every receive-consuming frame is placed into the receive its RSN names at
 * once, whatever arrived before it, and completes in MSN order with that receive's work request id; an RSN
 * that names a receive not posted, one already consumed or held by another message, differs within a
 * message or breaks MSN order fails the queue pair, and nothing is written outside the posted receives.
 */
class ReceiveSequenceTest {

    private static final int MSS = 256;
    /** Bytes each receive may hold; receives sit {@link #GUARD} bytes apart in one region. */
    private static final int RECEIVE = 2 * MSS;
    private static final int GUARD = 64;
    private static final byte GUARD_BYTE = (byte) 0xA5;
    private static final int RECEIVES = 4;

    private final FramingConfig config = new FramingConfig(MSS, true, 8);
    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final CompletionQueue cq = new CompletionQueue(16);
    private final MessageAssembler assembler = new MessageAssembler(config, registry, 8, cq, new FlowControl(config));
    private final Segmenter segmenter = new Segmenter(config);
    private final Completion c = new Completion();
    /** Guard, receive 0, guard, receive 1, ... guard: only the receives are posted. */
    private final MemorySegment memory = arena.allocate(RECEIVES * (long) (RECEIVE + GUARD) + GUARD);
    private final MemoryRegion receiveRegion;
    private final MemoryRegion writeRegion = registry.register(arena.allocate(4 * MSS), Access.LOCAL_WRITE | Access.REMOTE_WRITE);

    ReceiveSequenceTest() {
        memory.fill(GUARD_BYTE);
        receiveRegion = registry.register(memory, Access.LOCAL_WRITE);
    }

    @AfterEach
    void close() {
        arena.close();
    }

    /** Posts receives 0 .. {@code count - 1}, work request id {@code 100 + n}. */
    private void post(int count) {
        for (int n = 0; n < count; n++) {
            assertTrue(assembler.postReceive(100 + n, receiveRegion.localKey(), receiveOffset(n), RECEIVE));
        }
    }

    private static long receiveOffset(int n) {
        return GUARD + n * (long) (RECEIVE + GUARD);
    }

    private MemorySegment receive(int n) {
        return memory.asSlice(receiveOffset(n), RECEIVE);
    }

    private int offer(byte[] frame) {
        return assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
    }

    private List<byte[]> send(int msn, int rsn, byte[] payload) {
        return TestFrames.all(segmenter.beginSend(msn, rsn, MemorySegment.ofArray(payload), 0, payload.length));
    }

    private List<byte[]> write(int msn, int length) {
        return TestFrames.all(segmenter.beginWrite(msn, MemorySegment.ofArray(new byte[length]), 0, length,
                writeRegion.remoteKey(), 0));
    }

    private void assertCompletion(long id, int status) {
        assertTrue(cq.poll(c), "expected a completion for " + id);
        assertEquals(id, c.workRequestId(), c.toString());
        assertEquals(CompletionStatus.name(status), CompletionStatus.name(c.status()), c.toString());
    }

    /** Receives 0 .. {@code count - 1} are flushed, in posting order, and nothing else completes. */
    private void assertFlushed(int count) {
        for (int n = 0; n < count; n++) {
            assertCompletion(100 + n, CompletionStatus.FLUSH_ERROR);
        }
        assertFalse(cq.poll(c));
    }

    /** Every byte outside the posted receives is still the guard's; receives from {@code untouched} on too. */
    private void assertNothingWrittenOutside(int untouched) {
        for (long i = 0; i < memory.byteSize(); i++) {
            long inStride = (i - GUARD) % (RECEIVE + GUARD);
            long receive = (i - GUARD) / (RECEIVE + GUARD);
            boolean posted = i >= GUARD && inStride < RECEIVE && receive < RECEIVES;
            if (!posted || receive >= untouched) {
                assertEquals(GUARD_BYTE, memory.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
            }
        }
    }

    private void assertFailed(int error, int result) {
        assertFailed(error, result, "");
    }

    private void assertFailed(int error, int result, String why) {
        assertEquals(FrameError.name(error), FrameError.name(result), why);
        assertEquals(error, assembler.error());
        assertTrue(assembler.isInError());
    }

    // ---------------------------------------------------------------- placement

    @Test
    void aSendOvertakingAWriteIsPlacedAtOnceAndCompletesAfterIt() {
        post(1);
        List<byte[]> write = write(0, 3 * MSS);
        byte[] data = TestFrames.pattern(RECEIVE, 1);
        List<byte[]> sendFrames = send(1, 0, data);
        assertEquals(MessageAssembler.ACCEPTED, offer(write.get(0)));
        for (byte[] f : sendFrames) {
            assertEquals(MessageAssembler.ACCEPTED, offer(f), "placed before the WRITE's last frame says it takes no receive");
        }
        assertArrayEquals(data, receive(0).toArray(ValueLayout.JAVA_BYTE), "the bytes are in the receive already");
        assertTrue(cq.isEmpty(), "complete, but MSN 0 is not");
        assertEquals(MessageAssembler.ACCEPTED, offer(write.get(2)));
        assertEquals(MessageAssembler.ACCEPTED, offer(write.get(1)));
        assertCompletion(100, CompletionStatus.SUCCESS);
        assertEquals(1, c.msn());
        assertEquals(Opcode.SEND_LAST, c.opcode());
        assertFalse(cq.poll(c));
        assertNothingWrittenOutside(1);
    }

    @Test
    void sendAndWriteWithImmediateTakeTheReceivesTheirRsnsName() {
        post(3);
        // MSN 0: WRITE with immediate (receive 0), 1: SEND with immediate (1), 2: WRITE (none), 3: SEND (2).
        MemorySegment source = MemorySegment.ofArray(TestFrames.pattern(2 * MSS, 2));
        List<byte[]> writeImm = TestFrames.all(segmenter.beginWriteWithImmediate(0, 0, source, 0, 2 * MSS,
                writeRegion.remoteKey(), MSS, 7));
        byte[] one = TestFrames.pattern(MSS + 10, 3);
        List<byte[]> sendImm = TestFrames.all(segmenter.beginSendWithImmediate(1, 1, MemorySegment.ofArray(one), 0, one.length, 8));
        List<byte[]> write = write(2, MSS);
        byte[] three = TestFrames.pattern(20, 4);
        List<byte[]> send = send(3, 2, three);
        assertEquals(MessageAssembler.ACCEPTED, offer(send.get(0)));
        assertEquals(MessageAssembler.ACCEPTED, offer(sendImm.get(1)));
        assertEquals(MessageAssembler.ACCEPTED, offer(writeImm.get(1)), "the WRITE's last frame names receive 0");
        assertEquals(MessageAssembler.ACCEPTED, offer(sendImm.get(0)));
        assertEquals(MessageAssembler.ACCEPTED, offer(write.get(0)));
        assertArrayEquals(one, receive(1).asSlice(0, one.length).toArray(ValueLayout.JAVA_BYTE));
        assertArrayEquals(three, receive(2).asSlice(0, three.length).toArray(ValueLayout.JAVA_BYTE));
        assertTrue(cq.isEmpty(), "MSN 0 is incomplete");
        assertEquals(MessageAssembler.ACCEPTED, offer(writeImm.get(0)));
        assertCompletion(100, CompletionStatus.SUCCESS);
        assertEquals(Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE, c.opcode());
        assertEquals(7, c.immediate());
        assertEquals(2 * MSS, c.byteCount());
        assertCompletion(101, CompletionStatus.SUCCESS);
        assertEquals(Opcode.SEND_LAST_WITH_IMMEDIATE, c.opcode());
        assertEquals(8, c.immediate());
        assertCompletion(102, CompletionStatus.SUCCESS);
        assertEquals(3, c.msn());
        assertFalse(cq.poll(c));
        assertEquals(-1, receive(0).mismatch(MemorySegment.ofArray(new byte[RECEIVE]).fill(GUARD_BYTE)),
                "a WRITE with immediate consumes its receive without writing into it");
        assertNothingWrittenOutside(3);
    }

    // ---------------------------------------------------------------- the oldest message in one frame
    // A one-frame SEND that is the next to complete takes a shorter way (no slot bookkeeping): these are the
    // cases where it must not, because the general judgement refuses or defers the frame.

    @Test
    void aOneFrameSendLongerThanTheOldestReceiveIsALocalLengthErrorWritingNothingBeyondIt() {
        assertTrue(assembler.postReceive(100, receiveRegion.localKey(), receiveOffset(0), 10));
        assertFailed(FrameError.LOCAL_LENGTH, offer(send(0, 0, TestFrames.pattern(20, 8)).get(0)));
        assertCompletion(100, CompletionStatus.LOCAL_LENGTH_ERROR);
        assertFalse(cq.poll(c));
        assertNothingWrittenOutside(0);
    }

    @Test
    void theOldestMessageCannotTakeAReceiveALaterMessageHolds() {
        post(2);
        byte[] later = TestFrames.pattern(10, 9);
        assertEquals(MessageAssembler.ACCEPTED, offer(send(1, 0, later).get(0)), "MSN 1 takes receive 0");
        assertFailed(FrameError.BAD_RECEIVE_SEQUENCE, offer(send(0, 0, TestFrames.pattern(10, 10)).get(0)));
        assertFlushed(2);
        assertArrayEquals(later, receive(0).asSlice(0, later.length).toArray(ValueLayout.JAVA_BYTE),
                "MSN 1's bytes, not overwritten");
        assertNothingWrittenOutside(1);
    }

    @Test
    void aOneFrameSendUnderTheMsnOfAWriteBegunIsInconsistent() {
        post(1);
        assertEquals(MessageAssembler.ACCEPTED, offer(write(0, 2 * MSS).get(0)), "MSN 0: a WRITE's first frame");
        assertFailed(FrameError.INCONSISTENT_MESSAGE, offer(send(0, 0, TestFrames.pattern(10, 12)).get(0)));
        assertFlushed(1);
        assertNothingWrittenOutside(0);
    }

    @Test
    void aCopyOfTheOldestMessageWhileItIsBeingReceivedIsDeferredThenADuplicate() {
        post(1);
        byte[] data = TestFrames.pattern(10, 11);
        byte[] frame = send(0, 0, data).get(0);
        PlacementTarget target = new PlacementTarget(arena.allocate(MSS));
        int headerBytes = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
        assertEquals(MessageAssembler.ACCEPTED, assembler.beginPlacement(MemorySegment.ofArray(frame), 0, headerBytes, target));
        assertEquals(MessageAssembler.DEFERRED, offer(frame), "the kernel may still be writing the first copy");
        assertTrue(cq.isEmpty());
        MemorySegment.copy(MemorySegment.ofArray(frame), headerBytes, target.segment(), target.offset(), data.length);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        assertCompletion(100, CompletionStatus.SUCCESS);
        assertEquals(MessageAssembler.DUPLICATE, offer(frame));
        assertFalse(cq.poll(c));
        assertArrayEquals(data, receive(0).asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
    }

    // ---------------------------------------------------------------- violations

    @Test
    void anRsnNamingAReceiveNotPostedYetIsReceiverNotReady() {
        afterMessage0CompletesMessage1NamesAReceiveItMayNotTake(2, FrameError.RECEIVER_NOT_READY);
    }

    /**
     * Posts receives 0 and 1; MSN 0 takes and completes receive 0; MSN 1 then names receive {@code rsn}
     * and must fail the queue pair with {@code error}, flushing receive 1, writing nowhere.
     */
    private void afterMessage0CompletesMessage1NamesAReceiveItMayNotTake(int rsn, int error) {
        post(2);
        assertEquals(MessageAssembler.ACCEPTED, offer(send(0, 0, new byte[10]).get(0)));
        assertCompletion(100, CompletionStatus.SUCCESS);
        assertFailed(error, offer(send(1, rsn, TestFrames.pattern(10, 7)).get(0)));
        assertCompletion(101, CompletionStatus.FLUSH_ERROR);
        assertFalse(cq.poll(c));
        assertEquals(-1, receive(0).asSlice(0, 10).mismatch(MemorySegment.ofArray(new byte[10])),
                "the completed receive is left alone");
        assertNothingWrittenOutside(1);
    }

    @Test
    void aWriteWithImmediateNamingAReceiveNotPostedIsReceiverNotReady() {
        byte[] last = TestFrames.all(segmenter.beginWriteWithImmediate(0, 0, MemorySegment.ofArray(new byte[10]), 0, 10,
                writeRegion.remoteKey(), 0, 1)).get(0);
        assertFailed(FrameError.RECEIVER_NOT_READY, offer(last));
        assertEquals(-1, writeRegion.segment().asSlice(0, 10).mismatch(MemorySegment.ofArray(new byte[10])), "nothing placed");
    }

    @Test
    void twoMessagesNamingOneReceiveAreABadReceiveSequence() {
        post(2);
        List<byte[]> first = send(0, 0, new byte[2 * MSS]);
        assertEquals(MessageAssembler.ACCEPTED, offer(first.get(0)));
        assertFailed(FrameError.BAD_RECEIVE_SEQUENCE, offer(send(1, 0, TestFrames.pattern(10, 5)).get(0)));
        assertFlushed(2);
        assertEquals(0, receive(0).get(ValueLayout.JAVA_BYTE, 0), "message 0's bytes only");
        assertNothingWrittenOutside(1);
    }

    @Test
    void aReceiveHeldByADirectPlacementInFlightCannotBeTakenByAnotherMessage() {
        // Otherwise the other message could complete the receive while the kernel still writes into it.
        post(2);
        PlacementTarget target = new PlacementTarget(arena.allocate(MSS));
        byte[] first = send(0, 0, new byte[2 * MSS]).get(0);
        int headerBytes = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
        assertEquals(MessageAssembler.ACCEPTED, assembler.beginPlacement(MemorySegment.ofArray(first), 0, headerBytes, target));
        assertFailed(FrameError.BAD_RECEIVE_SEQUENCE, offer(send(1, 0, new byte[10]).get(0)));
        assertFalse(cq.poll(c), "the flush waits for the placement in flight");
        assembler.abort(target);
        assertFlushed(2);
        assertNothingWrittenOutside(0);
    }

    @Test
    void anAbortedPlacementLetsItsReceiveGoToTheMessageItBelongsTo() {
        // A header whose RSN was corrupted in flight (the ICRC would have refused it at commit) must not keep
        // the receive it named from the message that really takes it.
        post(2);
        byte[] corrupted = send(1, 0, new byte[10]).get(0);
        PlacementTarget target = new PlacementTarget(arena.allocate(MSS));
        int headerBytes = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
        assertEquals(MessageAssembler.ACCEPTED, assembler.beginPlacement(MemorySegment.ofArray(corrupted), 0, headerBytes, target));
        assembler.abort(target);
        assertEquals(MessageAssembler.ACCEPTED, offer(send(0, 0, new byte[10]).get(0)));
        assertEquals(MessageAssembler.ACCEPTED, offer(send(1, 1, new byte[10]).get(0)));
        assertCompletion(100, CompletionStatus.SUCCESS);
        assertCompletion(101, CompletionStatus.SUCCESS);
        assertFalse(assembler.isInError());
    }

    @Test
    void framesOfOneMessageNamingDifferentReceivesAreInconsistent() {
        post(2);
        byte[] payload = TestFrames.pattern(2 * MSS, 6);
        byte[] first = send(0, 0, payload).get(0);
        byte[] secondNamingReceive1 = send(0, 1, payload).get(1);
        assertEquals(MessageAssembler.ACCEPTED, offer(first));
        assertFailed(FrameError.INCONSISTENT_MESSAGE, offer(secondNamingReceive1));
        assertCompletion(100, CompletionStatus.PROTOCOL_ERROR);
        assertCompletion(101, CompletionStatus.FLUSH_ERROR);
        assertFalse(cq.poll(c));
        assertNothingWrittenOutside(1);
        // A copy of a placed frame naming another receive is no harmless duplicate either.
        MessageAssembler fresh = new MessageAssembler(config, registry, 8, new CompletionQueue(16), new FlowControl(config));
        assertTrue(fresh.postReceive(1, receiveRegion.localKey(), receiveOffset(0), RECEIVE));
        assertTrue(fresh.postReceive(2, receiveRegion.localKey(), receiveOffset(1), RECEIVE));
        assertEquals(MessageAssembler.ACCEPTED, fresh.onFrame(MemorySegment.ofArray(first), 0, first.length));
        byte[] copy = send(0, 1, payload).get(0);
        assertEquals(FrameError.INCONSISTENT_MESSAGE, fresh.onFrame(MemorySegment.ofArray(copy), 0, copy.length));
    }

    @Test
    void aLaterMessageTakingAnEarlierReceiveIsABadReceiveSequence() {
        post(3);
        assertEquals(MessageAssembler.ACCEPTED, offer(write(0, 2 * MSS).get(0)), "MSN 0: a WRITE, incomplete");
        assertEquals(MessageAssembler.ACCEPTED, offer(send(1, 1, new byte[10]).get(0)), "MSN 1 takes receive 1");
        assertFailed(FrameError.BAD_RECEIVE_SEQUENCE, offer(send(2, 0, new byte[10]).get(0)));
        assertFlushed(3);
        assertNothingWrittenOutside(2);
    }

    @Test
    void anEarlierMessageTakingALaterReceiveIsABadReceiveSequence() {
        post(3);
        assertEquals(MessageAssembler.ACCEPTED, offer(send(2, 0, new byte[10]).get(0)), "MSN 2 takes receive 0");
        assertFailed(FrameError.BAD_RECEIVE_SEQUENCE, offer(send(1, 1, new byte[10]).get(0)));
        assertNothingWrittenOutside(1);
    }

    @Test
    void moreReceiveConsumingMessagesBeforeAMessageThanMessagesIsABadReceiveSequence() {
        post(3);
        assertFailed(FrameError.BAD_RECEIVE_SEQUENCE, offer(send(1, 2, new byte[10]).get(0)),
                "MSN 1 cannot be the third receive-consuming message");
        assertNothingWrittenOutside(0);
    }

    @Test
    void anRsnNamingAConsumedReceiveIsABadReceiveSequence() {
        afterMessage0CompletesMessage1NamesAReceiveItMayNotTake(0, FrameError.BAD_RECEIVE_SEQUENCE);
    }

    @Test
    void aReceiveTheRsnsLeaveOutFailsBeforeAnyCompletionCarriesTheWrongOne() {
        // MSN 1 names receive 1 although MSN 0 is a WRITE without immediate: receive 0 is left out, which is
        // known only once MSN 0 is complete. Completing MSN 1 then would hand back receive 0's id.
        post(2);
        List<byte[]> write = write(0, 2 * MSS);
        assertEquals(MessageAssembler.ACCEPTED, offer(send(1, 1, new byte[10]).get(0)));
        assertEquals(MessageAssembler.ACCEPTED, offer(write.get(0)));
        assertFailed(FrameError.BAD_RECEIVE_SEQUENCE, offer(write.get(1)));
        assertCompletion(100, CompletionStatus.FLUSH_ERROR);
        assertCompletion(101, CompletionStatus.PROTOCOL_ERROR);
        assertFalse(cq.poll(c));
        assertNothingWrittenOutside(2);
    }
}
