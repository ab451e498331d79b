package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
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

/** The two-phase (header first) placement path and posting receives by local key. */
class DirectPlacementTest {

    private static final int MSS = 256;
    /** Header and extension bytes of a SEND frame. */
    private static final int SEND_HEADER = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
    private final FramingConfig config = new FramingConfig(MSS, true, 8);
    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final CompletionQueue cq = new CompletionQueue(64);
    private final FlowControl flow = new FlowControl(config);
    private final MessageAssembler assembler = new MessageAssembler(config, registry, 16, cq, flow);
    private final Segmenter segmenter = new Segmenter(config);
    private final Completion c = new Completion();
    private final MemorySegment drain = arena.allocate(MSS);
    private final PlacementTarget target = new PlacementTarget(drain);

    @AfterEach
    void close() {
        arena.close();
    }

    private MemoryRegion receiveRegion(int size) {
        return registry.register(arena.allocate(size), Access.LOCAL_WRITE);
    }

    /** The frames of a SEND as message {@code msn} into receive {@code rsn}. */
    private List<byte[]> send(int msn, int rsn, byte[] payload) {
        return TestFrames.all(segmenter.beginSend(msn, rsn, MemorySegment.ofArray(payload), 0, payload.length));
    }

    /** Phase 1 on the frame's header and extension only (no payload bytes given). */
    private int begin(byte[] frame, PlacementTarget t) {
        MemorySegment f = MemorySegment.ofArray(frame);
        int headerBytes = FrameHeader.LENGTH + (f.get(WireLayouts.U16, FrameHeader.EXT_LENGTH_OFFSET) & 0xFFFF);
        return assembler.beginPlacement(f, 0, headerBytes, t);
    }

    /** What the kernel's recv does: the frame's payload into the target. */
    private static void receivePayload(byte[] frame, PlacementTarget t) {
        MemorySegment.copy(frame, frame.length - t.length(), t.segment(), ValueLayout.JAVA_BYTE, t.offset(), t.length());
    }

    private int beginReceiveCommit(byte[] frame) {
        int r = begin(frame, target);
        assertEquals(MessageAssembler.ACCEPTED, r, FrameError.name(r));
        receivePayload(frame, target);
        return assembler.commit(target);
    }

    private void assertCompletion(long id, int status, int opcode, int bytes, int imm) {
        assertTrue(cq.poll(c), "expected a completion for " + id);
        assertEquals(id, c.workRequestId(), c.toString());
        assertEquals(CompletionStatus.name(status), CompletionStatus.name(c.status()), c.toString());
        assertEquals(opcode, c.opcode(), c.toString());
        assertEquals(bytes, c.byteCount(), c.toString());
        assertEquals(imm, c.immediate(), c.toString());
    }

    // ---------------------------------------------------------------- posting by key

    @Test
    void receivesArePostedByLocalKeyAndCheckedAtPostTime() {
        MemoryRegion region = receiveRegion(1024);
        MemoryRegion readOnly = registry.register(arena.allocate(64), Access.REMOTE_READ);
        MemoryRegion gone = receiveRegion(64);
        registry.deregister(gone);
        int key = region.localKey();
        assertTrue(assembler.postReceive(1, key, 1000, 24), "exactly up to the end");
        assertTrue(assembler.postReceive(2, key, 1024, 0), "an empty receive at the end");
        assertRefused("OUT_OF_BOUNDS", () -> assembler.postReceive(3, key, 1000, 25));
        assertRefused("OUT_OF_BOUNDS", () -> assembler.postReceive(3, key, -1, 10));
        assertRefused("OUT_OF_BOUNDS", () -> assembler.postReceive(3, key, 0, -1));
        assertRefused("OUT_OF_BOUNDS", () -> assembler.postReceive(3, key, Long.MAX_VALUE, 2));
        assertRefused("NOT_PERMITTED", () -> assembler.postReceive(3, readOnly.localKey(), 0, 8));
        assertRefused("INVALID_KEY", () -> assembler.postReceive(3, region.remoteKey(), 0, 8));
        assertRefused("INVALID_KEY", () -> assembler.postReceive(3, 0, 0, 8));
        assertRefused("DEREGISTERED", () -> assembler.postReceive(3, gone.localKey(), 0, 8));
        assertEquals(2, assembler.postedReceives(), "refused posts changed nothing");
    }

    private static void assertRefused(String status, org.junit.jupiter.api.function.Executable post) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, post);
        assertTrue(e.getMessage().contains(status), e.getMessage());
    }

    @Test
    void aSendIntoADeregisteredReceiveIsALocalProtectionError() {
        MemoryRegion region = receiveRegion(64);
        assertTrue(assembler.postReceive(4, region.localKey(), 0, 64));
        registry.deregister(region);
        assertEquals(FrameError.LOCAL_PROTECTION, assembler.onFrame(MemorySegment.ofArray(send(0, 0, new byte[5]).get(0)), 0,
                SEND_HEADER + 5));
        assertCompletion(4, CompletionStatus.LOCAL_PROTECTION_ERROR, -1, 0, 0);
        assertEquals(0, region.segment().get(ValueLayout.JAVA_BYTE, 0));
    }

    // ---------------------------------------------------------------- direct placement

    @Test
    void aSendIsPlacedStraightIntoItsReceiveAtEachSegmentsOffset() {
        MemoryRegion region = receiveRegion(2048);
        assertTrue(assembler.postReceive(10, region.localKey(), 300, 1000));
        byte[] data = TestFrames.pattern(3 * MSS + 7, 9);
        List<byte[]> frames = send(0, 0, data);
        for (int i : new int[] {3, 1, 0, 2}) {
            assertEquals(MessageAssembler.ACCEPTED, begin(frames.get(i), target));
            assertSame(region.segment(), target.segment());
            assertEquals(300 + (long) i * MSS, target.offset(), "the posted offset plus the message offset");
            assertEquals(region.segment().address() + target.offset(), target.address());
            assertEquals(i < 3 ? MSS : 7, target.length());
            assertTrue(target.isPending());
            receivePayload(frames.get(i), target);
            assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
            assertFalse(target.isPending());
        }
        assertCompletion(10, CompletionStatus.SUCCESS, Opcode.SEND_LAST, data.length, 0);
        assertArrayEquals(data, region.segment().asSlice(300, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0, region.segment().get(ValueLayout.JAVA_BYTE, 299));
        assertEquals(0, region.segment().get(ValueLayout.JAVA_BYTE, 300 + data.length));
        assertFalse(cq.poll(c));
    }

    @Test
    void nothingCountsUntilCommitAndTheHeaderBufferMayBeReusedMeanwhile() {
        MemoryRegion region = receiveRegion(64);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 64));
        byte[] frame = send(0, 0, TestFrames.pattern(20, 1)).get(0);
        byte[] headers = frame.clone();
        assertEquals(MessageAssembler.ACCEPTED, assembler.beginPlacement(MemorySegment.ofArray(headers), 0, SEND_HEADER, target));
        java.util.Arrays.fill(headers, (byte) 0xFF);
        assertEquals(0, assembler.framesAccepted());
        assertTrue(cq.isEmpty());
        receivePayload(frame, target);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target), "verified against the header copy");
        assertEquals(1, assembler.framesAccepted());
        assertCompletion(1, CompletionStatus.SUCCESS, Opcode.SEND_ONLY, 20, 0);
    }

    @Test
    void aSegmentBeingReceivedIsNotPlacedTwiceAndAnAbortLetsItsRetransmissionIn() {
        MemoryRegion region = receiveRegion(1024);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 1024));
        byte[] data = TestFrames.pattern(2 * MSS, 2);
        List<byte[]> frames = send(0, 0, data);
        PlacementTarget other = new PlacementTarget(arena.allocate(MSS));
        assertEquals(MessageAssembler.ACCEPTED, begin(frames.get(0), target));
        assertEquals(MessageAssembler.DEFERRED, begin(frames.get(0), other), "a retransmission on another subflow");
        assertSame(other.drain(), other.segment(), "its payload goes to the drain");
        assertEquals(0, other.offset());
        assertEquals(MSS, other.length());
        assertFalse(other.isPending());
        assertEquals(MessageAssembler.DEFERRED, assembler.onFrame(MemorySegment.ofArray(frames.get(0)), 0, SEND_HEADER + MSS),
                "the copy path also keeps off a reserved segment");
        assembler.abort(target);
        assertFalse(target.isPending());
        assertEquals(MessageAssembler.ACCEPTED, beginReceiveCommit(frames.get(1)));
        assertTrue(cq.isEmpty(), "segment 0 was given up, the message is not complete");
        assertEquals(MessageAssembler.ACCEPTED, beginReceiveCommit(frames.get(0)), "the retransmission is placed");
        assertCompletion(1, CompletionStatus.SUCCESS, Opcode.SEND_LAST, data.length, 0);
        assertArrayEquals(data, region.segment().asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(MessageAssembler.DUPLICATE, begin(frames.get(1), target), "a completed message");
        assertEquals(1, assembler.duplicates(), "copies of a segment being received are kept, not counted as duplicates");
    }

    @Test
    void aRetransmissionOfASegmentBeingReceivedElsewhereIsKeptSoAFailedReceiveLosesNothing() {
        // Review finding (issue 6): a segment reserved on subflow A and retransmitted on subflow B was answered
        // DUPLICATE, so the caller dropped B's copy; when A's payload receive then failed, the segment was gone
        // for good (the sender had already resent it once, on B).
        MemoryRegion region = receiveRegion(1024);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 1024));
        byte[] data = TestFrames.pattern(2 * MSS, 6);
        List<byte[]> frames = send(0, 0, data);
        byte[] first = frames.get(0);
        assertEquals(MessageAssembler.ACCEPTED, begin(first, target), "subflow A: header in, payload receive posted");
        // Subflow B brings the retransmission, whole. The caller does what the contract says: keeps a DEFERRED
        // frame to offer again, forgets a DUPLICATE.
        List<byte[]> kept = new java.util.ArrayList<>();
        keepIfDeferred(kept, first, assembler.onFrame(MemorySegment.ofArray(first), 0, first.length));
        // Subflow A breaks half way through the payload.
        MemorySegment.copy(first, first.length - MSS, target.segment(), ValueLayout.JAVA_BYTE, target.offset(), MSS / 2);
        assembler.abort(target);
        offerAgain(kept);
        assertEquals(MessageAssembler.ACCEPTED, beginReceiveCommit(frames.get(1)));
        offerAgain(kept);
        assertCompletion(1, CompletionStatus.SUCCESS, Opcode.SEND_LAST, data.length, 0);
        assertArrayEquals(data, region.segment().asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertTrue(kept.isEmpty());
        assertFalse(cq.poll(c));
    }

    @Test
    void aRetransmissionKeptWhileItsSegmentWasReceivedIsADuplicateOnceThatReceiveIsCommitted() {
        MemoryRegion region = receiveRegion(1024);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 1024));
        byte[] data = TestFrames.pattern(MSS + 5, 7);
        List<byte[]> frames = send(0, 0, data);
        byte[] first = frames.get(0);
        PlacementTarget b = new PlacementTarget(arena.allocate(MSS));
        assertEquals(MessageAssembler.ACCEPTED, begin(first, target), "subflow A");
        // This time the retransmission comes header first on subflow B: its payload goes to B's drain.
        int r = begin(first, b);
        assertEquals(MessageAssembler.DEFERRED, r, "another copy is being received: keep this one");
        assertSame(b.drain(), b.segment());
        assertEquals(MSS, b.length());
        assertFalse(b.isPending());
        assertEquals(MessageAssembler.DEFERRED, assembler.onFrame(MemorySegment.ofArray(first), 0, first.length),
                "offered again while A still receives: still kept");
        receivePayload(first, target);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        assertEquals(MessageAssembler.DUPLICATE, assembler.onFrame(MemorySegment.ofArray(first), 0, first.length),
                "A committed: the kept copy is a harmless duplicate");
        assertEquals(MessageAssembler.ACCEPTED, beginReceiveCommit(frames.get(1)));
        assertCompletion(1, CompletionStatus.SUCCESS, Opcode.SEND_LAST, data.length, 0);
        assertArrayEquals(data, region.segment().asSlice(0, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(MessageAssembler.DUPLICATE, assembler.onFrame(MemorySegment.ofArray(first), 0, first.length));
        assertFalse(cq.poll(c), "completed once");
    }

    private static void keepIfDeferred(List<byte[]> kept, byte[] frame, int result) {
        assertTrue(result > 0, FrameError.name(result));
        if (result == MessageAssembler.DEFERRED) {
            kept.add(frame);
        }
    }

    /** What a receive loop does after a commit or abort: offers the frames it keeps, whole. */
    private void offerAgain(List<byte[]> kept) {
        List<byte[]> again = new java.util.ArrayList<>(kept);
        kept.clear();
        for (byte[] frame : again) {
            keepIfDeferred(kept, frame, assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length));
        }
    }

    @Test
    void aSendOvertakingAnEarlierMessageIsReceivedStraightIntoTheReceiveItsRsnNames() {
        MemoryRegion region = receiveRegion(1024);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 512));
        assertTrue(assembler.postReceive(2, region.localKey(), 512, 512));
        byte[] first = send(0, 0, TestFrames.pattern(10, 1)).get(0);
        byte[] second = send(1, 1, TestFrames.pattern(11, 2)).get(0);
        byte[] third = send(2, 2, TestFrames.pattern(12, 3)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, begin(second, target), "MSN 0 unseen: MSN 1 names receive 1");
        assertSame(region.segment(), target.segment());
        assertEquals(512, target.offset());
        assertEquals(11, target.length());
        receivePayload(second, target);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        assertTrue(cq.isEmpty(), "complete, but MSN 0 is not");
        assertEquals(MessageAssembler.ACCEPTED, beginReceiveCommit(first));
        assertCompletion(1, CompletionStatus.SUCCESS, Opcode.SEND_ONLY, 10, 0);
        assertCompletion(2, CompletionStatus.SUCCESS, Opcode.SEND_ONLY, 11, 0);
        assertArrayEquals(TestFrames.pattern(11, 2), region.segment().asSlice(512, 11).toArray(ValueLayout.JAVA_BYTE));
        assertEquals(FrameError.RECEIVER_NOT_READY, begin(third, target), "MSN 2 names a receive never posted");
        assertFalse(target.isPending());
    }

    @Test
    void writesGoStraightIntoTheRegionAfterKeyRightsAndBoundsChecks() {
        MemorySegment memory = arena.allocate(4096);
        MemoryRegion region = registry.register(memory.asSlice(1024, 2048), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        byte[] data = TestFrames.pattern(600, 4);
        List<byte[]> frames = TestFrames.all(segmenter.beginWrite(0, MemorySegment.ofArray(data), 0, data.length,
                region.remoteKey(), 100));
        for (int i = frames.size() - 1; i >= 0; i--) {
            assertEquals(MessageAssembler.ACCEPTED, begin(frames.get(i), target));
            assertSame(region.segment(), target.segment());
            assertEquals(100 + (long) i * MSS, target.offset());
            receivePayload(frames.get(i), target);
            assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        }
        assertArrayEquals(data, region.segment().asSlice(100, data.length).toArray(ValueLayout.JAVA_BYTE));
        assertTrue(cq.isEmpty());

        byte[] beyond = TestFrames.all(segmenter.beginWrite(1, MemorySegment.ofArray(data), 0, 10,
                region.remoteKey(), 2048 - 9)).get(0);
        assertEquals(FrameError.REMOTE_ACCESS, begin(beyond, target));
        assertFalse(target.isPending());
        assertEquals(0, target.length());
        assertTrue(assembler.isInError());
        assertEquals(FrameError.QUEUE_PAIR_IN_ERROR, begin(frames.get(0), target));
        for (int i = 0; i < 1024; i++) {
            assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, i));
            assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, 3072 + i));
        }
    }

    @Test
    void aSendLongerThanItsReceiveIsRefusedBeforeAnyByteIsReceived() {
        MemoryRegion region = receiveRegion(1024);
        assertTrue(assembler.postReceive(7, region.localKey(), 0, 300));
        List<byte[]> frames = send(0, 0, TestFrames.pattern(2 * MSS, 3));
        assertEquals(FrameError.LOCAL_LENGTH, begin(frames.get(1), target));
        assertCompletion(7, CompletionStatus.LOCAL_LENGTH_ERROR, -1, 0, 0);
    }

    @Test
    void theIcrcIsVerifiedAtCommitOverTheReceivedBytes() {
        MemoryRegion region = receiveRegion(64);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 64));
        assertTrue(assembler.postReceive(2, region.localKey(), 0, 64));
        byte[] frame = send(0, 0, TestFrames.pattern(30, 5)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, begin(frame, target));
        receivePayload(frame, target);
        region.segment().set(ValueLayout.JAVA_BYTE, 29, (byte) ~region.segment().get(ValueLayout.JAVA_BYTE, 29));
        assertEquals(FrameError.ICRC_MISMATCH, assembler.commit(target));
        assertCompletion(1, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        assertCompletion(2, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
    }

    @Test
    void commitJudgesTheFrameAgainstFramesCommittedMeanwhile() {
        MemoryRegion region = receiveRegion(1024);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 1024));
        List<byte[]> three = send(0, 0, new byte[3 * MSS]);
        List<byte[]> four = send(0, 0, new byte[4 * MSS]);
        assertEquals(MessageAssembler.ACCEPTED, begin(three.get(2), target));
        // A LAST above the reserved segment does not contradict it yet: only its commit can tell.
        assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(MemorySegment.ofArray(four.get(3)), 0, SEND_HEADER + MSS));
        receivePayload(three.get(2), target);
        assertEquals(FrameError.INCONSISTENT_MESSAGE, assembler.commit(target), "a second LAST with another total");
        assertCompletion(1, CompletionStatus.PROTOCOL_ERROR, Opcode.SEND_LAST, 0, 0);
    }

    @Test
    void aLastFrameBelowAReservedSegmentIsInconsistentAndNothingCompletes() {
        // Review finding: a reserved MIDDLE beyond the real end let the message complete and the payload
        // land afterwards in a receive already handed back.
        MemoryRegion region = receiveRegion(4096);
        assertTrue(assembler.postReceive(7, region.localKey(), 0, 4096));
        byte[] middle2 = send(0, 0, new byte[4 * MSS]).get(2);
        List<byte[]> real = send(0, 0, TestFrames.pattern(2 * MSS - 10, 3));
        assertEquals(MessageAssembler.ACCEPTED, begin(middle2, target));
        assertEquals(1, assembler.pendingPlacements());
        assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(MemorySegment.ofArray(real.get(0)), 0, real.get(0).length));
        assertEquals(FrameError.INCONSISTENT_MESSAGE,
                assembler.onFrame(MemorySegment.ofArray(real.get(1)), 0, real.get(1).length));
        assertFalse(cq.poll(c), "no completion, not even the flush, while the kernel may still write into receive 7");
        receivePayload(middle2, target);
        assertEquals(FrameError.QUEUE_PAIR_IN_ERROR, assembler.commit(target));
        assertEquals(0, assembler.pendingPlacements());
        assertCompletion(7, CompletionStatus.PROTOCOL_ERROR, -1, 0, 0);
        assertFalse(cq.poll(c));
    }

    @Test
    void aStaleReservationNeverOutlivesItsMessageSlot() {
        // Review finding: with a window of 1, a reservation of message 0 survived into message 1's slot and
        // made a real frame of message 1 a "duplicate"; the queue pair then hung.
        FramingConfig one = new FramingConfig(MSS, false, 1);
        CompletionQueue q = new CompletionQueue(16);
        MessageAssembler a = new MessageAssembler(one, registry, 4, q, new FlowControl(one));
        Segmenter s = new Segmenter(one);
        MemoryRegion region = receiveRegion(8192);
        assertTrue(a.postReceive(1, region.localKey(), 0, 4096));
        assertTrue(a.postReceive(2, region.localKey(), 4096, 4096));
        byte[] middle2 = TestFrames.all(s.beginSend(0, 0, MemorySegment.ofArray(new byte[4 * MSS]), 0, 4 * MSS)).get(2);
        byte[] only = TestFrames.all(s.beginSend(0, 0, MemorySegment.ofArray(new byte[MSS]), 0, MSS)).get(0);
        MemorySegment m = MemorySegment.ofArray(middle2);
        assertEquals(MessageAssembler.ACCEPTED, a.beginPlacement(m, 0, SEND_HEADER, target));
        assertEquals(FrameError.INCONSISTENT_MESSAGE, a.onFrame(MemorySegment.ofArray(only), 0, only.length),
                "an ONLY frame below a reserved segment 2");
        a.abort(target);
        assertTrue(q.poll(c));
        assertEquals(1, c.workRequestId());
        assertTrue(q.poll(c));
        assertEquals(2, c.workRequestId());
        // And without the contradiction, a message whose reservation was aborted and then placed completes once.
        MessageAssembler b = new MessageAssembler(one, registry, 4, q, new FlowControl(one));
        assertTrue(b.postReceive(3, region.localKey(), 0, 4096));
        assertTrue(b.postReceive(4, region.localKey(), 4096, 4096));
        List<byte[]> first = TestFrames.all(s.beginSend(0, 0, MemorySegment.ofArray(new byte[2 * MSS]), 0, 2 * MSS));
        assertEquals(MessageAssembler.ACCEPTED, b.beginPlacement(MemorySegment.ofArray(first.get(1)), 0, SEND_HEADER, target));
        b.abort(target);
        assertEquals(MessageAssembler.ACCEPTED, b.onFrame(MemorySegment.ofArray(first.get(0)), 0, first.get(0).length));
        assertEquals(MessageAssembler.ACCEPTED, b.onFrame(MemorySegment.ofArray(first.get(1)), 0, first.get(1).length));
        List<byte[]> next = TestFrames.all(s.beginSend(1, 1, MemorySegment.ofArray(new byte[3 * MSS]), 0, 3 * MSS));
        for (byte[] f : next) {
            assertEquals(MessageAssembler.ACCEPTED, b.onFrame(MemorySegment.ofArray(f), 0, f.length));
        }
        assertTrue(q.poll(c));
        assertEquals(3, c.workRequestId());
        assertEquals(2 * MSS, c.byteCount());
        assertTrue(q.poll(c));
        assertEquals(4, c.workRequestId());
        assertEquals(3 * MSS, c.byteCount());
        assertFalse(q.poll(c));
    }

    @Test
    void theFlushWaitsForPlacementsInFlight() {
        // Review finding: a failure on another subflow flushed a receive the kernel was still writing into.
        MemoryRegion region = receiveRegion(4096);
        assertTrue(assembler.postReceive(7, region.localKey(), 0, 2048));
        assertTrue(assembler.postReceive(8, region.localKey(), 2048, 2048));
        byte[] first = send(0, 0, new byte[2 * MSS]).get(0);
        assertEquals(MessageAssembler.ACCEPTED, begin(first, target));
        byte[] bad = first.clone();
        bad[0] = 0; // bad version, e.g. on another subflow
        assertEquals(FrameError.BAD_VERSION, assembler.onFrame(MemorySegment.ofArray(bad), 0, bad.length));
        assertTrue(assembler.isInError());
        assertEquals(1, assembler.pendingPlacements());
        assertFalse(cq.poll(c), "receive 7 is still being written: no flush yet");
        assertTrue(assembler.postReceive(9, region.localKey(), 0, 64), "posted in ERROR: flushed after 7 and 8");
        assertFalse(cq.poll(c));
        assertEquals(FrameError.QUEUE_PAIR_IN_ERROR, assembler.commit(target));
        assertEquals(0, assembler.pendingPlacements());
        assertCompletion(7, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        assertCompletion(8, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        assertCompletion(9, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        assertTrue(assembler.postReceive(10, region.localKey(), 0, 64));
        assertCompletion(10, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        // abort releases a waiting flush the same way.
        MessageAssembler other = new MessageAssembler(config, registry, 16, cq, flow);
        assertTrue(other.postReceive(11, region.localKey(), 0, 2048));
        PlacementTarget t = new PlacementTarget(arena.allocate(MSS));
        assertEquals(MessageAssembler.ACCEPTED, other.beginPlacement(MemorySegment.ofArray(first), 0, SEND_HEADER, t));
        assertEquals(FrameError.BAD_VERSION, other.onFrame(MemorySegment.ofArray(bad), 0, bad.length));
        assertFalse(cq.poll(c));
        other.abort(t);
        assertCompletion(11, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
    }

    @Test
    void commitIntoMemoryFreedMeanwhileIsAnAccessErrorNotAnException() {
        // Review finding: the ICRC was computed over a closed arena and IllegalStateException escaped.
        Arena user = Arena.ofShared();
        MemoryRegion region = registry.register(user.allocate(4096), Access.LOCAL_WRITE);
        assertTrue(assembler.postReceive(7, region.localKey(), 0, 4096));
        byte[] frame = send(0, 0, TestFrames.pattern(100, 1)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, begin(frame, target));
        user.close();
        assertEquals(FrameError.LOCAL_PROTECTION, assembler.commit(target));
        assertCompletion(7, CompletionStatus.LOCAL_PROTECTION_ERROR, -1, 0, 0);
        // The same for a WRITE into a region whose memory was freed: the peer's access error.
        MessageAssembler a = new MessageAssembler(config, registry, 16, cq, flow);
        Arena user2 = Arena.ofShared();
        MemoryRegion writable = registry.register(user2.allocate(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        byte[] write = TestFrames.all(segmenter.beginWrite(0, MemorySegment.ofArray(new byte[100]), 0, 100,
                writable.remoteKey(), 0)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, a.beginPlacement(MemorySegment.ofArray(write), 0, write.length - 100, target));
        user2.close();
        assertEquals(FrameError.REMOTE_ACCESS, a.commit(target));
    }

    @Test
    void aPlacementPinsItsRegionUntilCommitOrAbort() {
        MemoryRegion region = receiveRegion(4096);
        assertTrue(assembler.postReceive(7, region.localKey(), 0, 4096));
        List<byte[]> frames = send(0, 0, TestFrames.pattern(2 * MSS, 4));
        assertEquals(MessageAssembler.ACCEPTED, begin(frames.get(0), target));
        assertEquals(1, region.pinCount());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> registry.deregister(region));
        assertTrue(e.getMessage().contains("pinned 1 time(s)"), e.getMessage());
        assembler.abort(target);
        assertEquals(0, region.pinCount());
        assertEquals(MessageAssembler.ACCEPTED, begin(frames.get(0), target));
        receivePayload(frames.get(0), target);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        assertEquals(0, region.pinCount());
        MemorySegment write = arena.allocate(1024);
        MemoryRegion writable = registry.register(write, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        byte[] w = TestFrames.all(segmenter.beginWrite(1, MemorySegment.ofArray(new byte[100]), 0, 100,
                writable.remoteKey(), 0)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, begin(w, target));
        assertEquals(1, writable.pinCount());
        assertThrows(IllegalStateException.class, () -> registry.deregister(writable));
        receivePayload(w, target);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        assertEquals(0, writable.pinCount());
        registry.deregister(writable);
    }

    @Test
    void framesWithoutPayloadTakeZeroBytesAndApplyAtCommit() {
        MemorySegment memory = arena.allocate(1024);
        MemoryRegion source = registry.register(memory, Access.REMOTE_READ);
        byte[] request = TestFrames.all(segmenter.beginReadRequest(0, source.remoteKey(), 24, 1000, 0x77, 5)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, begin(request, target));
        assertEquals(0, target.length());
        ReadRequest r = new ReadRequest();
        assertFalse(assembler.pollReadRequest(r), "not before commit");
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        assertTrue(assembler.pollReadRequest(r));
        assertEquals(1000, r.length());

        byte[] ack = new byte[32];
        MemorySegment f = MemorySegment.ofArray(ack);
        FlowControl.writeAcknowledge(new FrameHeader().wrap(f, 0), 0xFFFF, 4, false, false);
        new FrameHeader().wrap(f, 0).icrc(new Icrc().compute(f, 0));
        assertEquals(MessageAssembler.ACCEPTED, begin(ack, target));
        assertEquals(0, flow.credits());
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        assertEquals(4, flow.credits());
    }

    @Test
    void truncatedHeadersChangeNothing() {
        MemoryRegion region = receiveRegion(64);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 64));
        byte[] write = TestFrames.all(segmenter.beginWrite(0, MemorySegment.ofArray(new byte[4]), 0, 4, 1, 0)).get(0);
        assertEquals(FrameError.TRUNCATED, assembler.beginPlacement(MemorySegment.ofArray(write), 0, 31, target));
        assertEquals(FrameError.TRUNCATED, assembler.beginPlacement(MemorySegment.ofArray(write), 0, 32 + 11, target),
                "the extension is part of what phase 1 needs");
        assertFalse(assembler.isInError());
        assertFalse(target.isPending());
    }

    @Test
    void misuseIsRefusedWithAClearException() {
        MemoryRegion region = receiveRegion(64);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 64));
        byte[] frame = send(0, 0, new byte[8]).get(0);
        assertThrows(IllegalStateException.class, () -> assembler.commit(target), "nothing begun");
        assertThrows(IllegalStateException.class, () -> assembler.abort(target), "nothing begun");
        assertEquals(MessageAssembler.ACCEPTED, begin(frame, target));
        assertThrows(IllegalStateException.class, () -> begin(frame, target), "still pending");
        MessageAssembler other = new MessageAssembler(config, registry, 4, new CompletionQueue(8), new FlowControl(config));
        assertThrows(IllegalStateException.class, () -> other.commit(target), "another assembler's placement");
        assertTrue(target.isPending(), "a refused commit leaves the placement alone");
        PlacementTarget small = new PlacementTarget(arena.allocate(MSS - 1));
        assertThrows(IllegalArgumentException.class, () -> begin(frame, small));
        assertThrows(IllegalArgumentException.class, () -> new PlacementTarget(MemorySegment.ofArray(new byte[MSS])));
        assertThrows(IllegalArgumentException.class, () -> new PlacementTarget(null));
        assertThrows(IllegalArgumentException.class,
                () -> assembler.beginPlacement(MemorySegment.ofArray(frame), 0, frame.length + 1, new PlacementTarget(drain)));
        assertThrows(IllegalArgumentException.class, () -> assembler.beginPlacement(null, 0, 0, new PlacementTarget(drain)));
        assertThrows(IllegalArgumentException.class, () -> assembler.commit(null));
        receivePayload(frame, target);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
    }

    @Test
    void aPlacementPendingWhenTheQueuePairFailsCommitsToNothing() {
        MemoryRegion region = receiveRegion(1024);
        assertTrue(assembler.postReceive(1, region.localKey(), 0, 1024));
        List<byte[]> frames = send(0, 0, new byte[2 * MSS]);
        assertEquals(MessageAssembler.ACCEPTED, begin(frames.get(0), target));
        byte[] bad = frames.get(1).clone();
        bad[1] = 0x7F;
        assertEquals(FrameError.BAD_OPCODE, assembler.onFrame(MemorySegment.ofArray(bad), 0, bad.length));
        assertEquals(FrameError.QUEUE_PAIR_IN_ERROR, assembler.commit(target));
        assertFalse(target.isPending());
        assertCompletion(1, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        assertFalse(cq.poll(c));
    }
}
