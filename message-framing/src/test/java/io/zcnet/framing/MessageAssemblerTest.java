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

class MessageAssemblerTest {

    private static final int MSS = 256;
    private final FramingConfig config = new FramingConfig(MSS, true, 8);
    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final CompletionQueue cq = new CompletionQueue(64);
    private final FlowControl flow = new FlowControl(config);
    private final MessageAssembler assembler = new MessageAssembler(config, registry, 16, cq, flow);
    private final Segmenter segmenter = new Segmenter(config);
    private final Completion c = new Completion();

    @AfterEach
    void close() {
        arena.close();
    }

    private int offer(byte[] frame) {
        return assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
    }

    /** Registers a fresh buffer of {@code size} bytes and posts all of it. */
    private MemorySegment post(long id, int size) {
        MemorySegment buffer = arena.allocate(size);
        MemoryRegion region = registry.register(buffer, Access.LOCAL_WRITE);
        assertTrue(assembler.postReceive(id, region.localKey(), 0, size));
        return buffer;
    }

    /** The frames of a SEND as message {@code msn} into receive {@code rsn}. */
    private List<byte[]> send(int msn, int rsn, byte[] payload) {
        return TestFrames.all(segmenter.beginSend(msn, rsn, MemorySegment.ofArray(payload), 0, payload.length));
    }

    private static byte[] bytes(MemorySegment s, int length) {
        return s.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE);
    }

    private void assertCompletion(long id, int status, int opcode, int bytes, int imm) {
        assertTrue(cq.poll(c), "expected a completion for " + id);
        assertEquals(id, c.workRequestId(), c.toString());
        assertEquals(CompletionStatus.name(status), CompletionStatus.name(c.status()), c.toString());
        assertEquals(opcode, c.opcode(), c.toString());
        assertEquals(bytes, c.byteCount(), c.toString());
        assertEquals(imm, c.immediate(), c.toString());
    }

    @Test
    void segmentsInAnyOrderCompleteOnceAndInMsnOrder() {
        MemorySegment r0 = post(100, 1024);
        MemorySegment r1 = post(101, 1024);
        byte[] a = TestFrames.pattern(3 * MSS - 5, 1);
        byte[] b = TestFrames.pattern(10, 2);
        List<byte[]> fa = send(0, 0, a);
        List<byte[]> fb = send(1, 1, b);
        assertEquals(MessageAssembler.ACCEPTED, offer(fb.get(0)), "MSN 0 unseen: MSN 1 names its receive");
        assertEquals(MessageAssembler.ACCEPTED, offer(fa.get(2)));
        assertEquals(MessageAssembler.DUPLICATE, offer(fb.get(0)));
        assertTrue(cq.isEmpty(), "MSN 1 is complete but waits for MSN 0");
        assertEquals(MessageAssembler.ACCEPTED, offer(fa.get(0)));
        assertEquals(MessageAssembler.DUPLICATE, offer(fa.get(2)));
        assertTrue(cq.isEmpty());
        assertEquals(MessageAssembler.ACCEPTED, offer(fa.get(1)));
        assertCompletion(100, CompletionStatus.SUCCESS, Opcode.SEND_LAST, a.length, 0);
        assertCompletion(101, CompletionStatus.SUCCESS, Opcode.SEND_ONLY, b.length, 0);
        assertFalse(cq.poll(c));
        assertArrayEquals(a, bytes(r0, a.length));
        assertArrayEquals(b, bytes(r1, b.length));
        for (byte[] f : fa) {
            assertEquals(MessageAssembler.DUPLICATE, offer(f), "completed message: old duplicate");
        }
        assertTrue(cq.isEmpty());
        assertEquals(1, assembler.acknowledgedMsn());
        assertEquals(2, assembler.creditLimit());
        assertEquals(4, assembler.framesAccepted());
    }

    @Test
    void anAcknowledgeRequestIsDueOnceItsMessageIsCompleteAndAnsweredByAnAcknowledgementThatCoversIt() {
        post(1, 1024);
        post(2, 1024);
        List<byte[]> plain = send(0, 0, new byte[3]);
        List<byte[]> asking = TestFrames.all(segmenter.beginSend(1, 1, MemorySegment.ofArray(new byte[2 * MSS]), 0, 2 * MSS)
                .requestAcknowledge(true));
        assertEquals(MessageAssembler.ACCEPTED, offer(plain.get(0)));
        assertFalse(assembler.isAcknowledgeRequested(), "no frame asked");
        assertEquals(MessageAssembler.ACCEPTED, offer(asking.get(1)));
        assertFalse(assembler.isAcknowledgeRequested(), "MSN 1 is not complete: no acknowledgement covers it yet");
        assertEquals(MessageAssembler.ACCEPTED, offer(asking.get(0)));
        assertTrue(assembler.isAcknowledgeRequested());
        assembler.acknowledgeSent(0);
        assertTrue(assembler.isAcknowledgeRequested(), "an acknowledgement of MSN 0 does not answer a request for MSN 1");
        assembler.acknowledgeSent(assembler.acknowledgedMsn());
        assertFalse(assembler.isAcknowledgeRequested());
        assertEquals(MessageAssembler.DUPLICATE, offer(asking.get(1)));
        assertTrue(assembler.isAcknowledgeRequested(), "a duplicate asks again: the first answer may be lost");
    }

    @Test
    void zeroByteAndImmediateMessages() {
        post(1, 16);
        post(2, 16);
        assertEquals(MessageAssembler.ACCEPTED, offer(send(0, 0, new byte[0]).get(0)));
        byte[] frame = TestFrames.all(segmenter.beginSendWithImmediate(1, 1, MemorySegment.ofArray(new byte[3]), 0, 3, 0xCAFE)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, offer(frame));
        assertCompletion(1, CompletionStatus.SUCCESS, Opcode.SEND_ONLY, 0, 0);
        assertCompletion(2, CompletionStatus.SUCCESS, Opcode.SEND_ONLY_WITH_IMMEDIATE, 3, 0xCAFE);
    }

    @Test
    void msnWrapsAtTwoToTheSixteen() {
        int messages = Msn.MODULUS + 20;
        byte[] payload = {1, 2, 3};
        MemorySegment src = MemorySegment.ofArray(payload);
        int frame = FrameHeader.LENGTH + UntaggedExtension.LENGTH + 3;
        MemorySegment out = MemorySegment.ofArray(new byte[frame]);
        int lkey = registry.register(arena.allocate(3), Access.LOCAL_WRITE).localKey();
        for (int m = 0; m < messages; m++) {
            assertTrue(assembler.postReceive(m, lkey, 0, 3));
            segmenter.beginSend(m & 0xFFFF, m, src, 0, 3).next(out, 0);
            MemorySegment.copy(src, 0, out, frame - 3, 3);
            assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(out, 0, frame), "message " + m);
            assertTrue(cq.poll(c));
            assertEquals(m, c.workRequestId());
            assertEquals(m & 0xFFFF, c.msn());
        }
        assertEquals((messages - 1) & 0xFFFF, assembler.acknowledgedMsn());
        // MSN 18 (wrapped) was completed: a duplicate, and so is every MSN up to half the MSN space behind
        // the window start (20); one short of half the space ahead is beyond the window.
        segmenter.beginSend(18, Msn.MODULUS + 18, src, 0, 3).next(out, 0);
        assertEquals(MessageAssembler.DUPLICATE, assembler.onFrame(out, 0, frame));
        segmenter.beginSend((messages - Msn.MODULUS / 2) & 0xFFFF, 0, src, 0, 3).next(out, 0);
        assertEquals(MessageAssembler.DUPLICATE, assembler.onFrame(out, 0, frame), "half the MSN space behind");
        assertFalse(assembler.isInError());
        segmenter.beginSend((messages + Msn.MODULUS / 2 - 1) & 0xFFFF, 0, src, 0, 3).next(out, 0);
        assertEquals(FrameError.MSN_OUT_OF_WINDOW, assembler.onFrame(out, 0, frame), "half the MSN space less one ahead");
        assertTrue(assembler.isInError());
    }

    @Test
    void aCopyThatArrivesAfterTheWindowMovedOnByMoreThanAWindowIsADuplicate() {
        // A resend on one subflow can lag behind the original's subflow by more than the window: the original
        // completed the message, the window moved on, and only then does the old copy arrive.
        byte[] payload = {4, 5, 6};
        MemorySegment r0 = post(0, 3);
        assertEquals(MessageAssembler.ACCEPTED, offer(send(0, 0, payload).get(0)));
        for (int m = 1; m < 5 * config.messageWindow(); m++) {
            post(m, 3);
            assertEquals(MessageAssembler.ACCEPTED, offer(send(m, m, new byte[3]).get(0)), "message " + m);
        }
        byte[] copy = send(0, 0, new byte[] {7, 8, 9}).get(0);
        assertEquals(MessageAssembler.DUPLICATE, offer(copy), "MSN 0, five windows behind");
        assertFalse(assembler.isInError());
        assertArrayEquals(payload, bytes(r0, 3), "the copy wrote nothing");
        assertEquals(5 * config.messageWindow() - 1, assembler.acknowledgedMsn());
    }

    @Test
    void messageLongerThanItsReceiveIsALocalLengthError() {
        MemorySegment big = arena.allocate(1024);
        int lkey = registry.register(big, Access.LOCAL_WRITE).localKey();
        assertTrue(assembler.postReceive(7, lkey, 100, 300), "bytes 100..399 of the region");
        post(8, 1024);
        List<byte[]> frames = send(0, 0, TestFrames.pattern(2 * MSS, 3));
        assertEquals(MessageAssembler.ACCEPTED, offer(frames.get(0)));
        assertEquals(FrameError.LOCAL_LENGTH, offer(frames.get(1)));
        assertCompletion(7, CompletionStatus.LOCAL_LENGTH_ERROR, -1, 0, 0);
        assertCompletion(8, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        for (int i = 0; i < 100; i++) {
            assertEquals(0, big.get(ValueLayout.JAVA_BYTE, i), "guard before the buffer");
        }
        for (int i = 400; i < 1024; i++) {
            assertEquals(0, big.get(ValueLayout.JAVA_BYTE, i), "guard after the buffer");
        }
        assertEquals(FrameError.QUEUE_PAIR_IN_ERROR, offer(frames.get(0)));
        assertTrue(assembler.postReceive(9, lkey, 0, 1024));
        assertCompletion(9, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
    }

    @Test
    void sendWithNothingPostedIsReceiverNotReady() {
        assertEquals(FrameError.RECEIVER_NOT_READY, offer(send(0, 0, new byte[5]).get(0)));
        assertEquals(FrameError.RECEIVER_NOT_READY, assembler.error());
        assertTrue(cq.isEmpty());
    }

    @Test
    void writesArePlacedByKeyAndCheckedForKeyRightsAndBounds() {
        MemorySegment memory = arena.allocate(4096);
        MemoryRegion region = registry.register(memory.asSlice(1024, 2048), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        MemoryRegion readOnly = registry.register(memory.asSlice(3072, 512), Access.LOCAL_WRITE | Access.REMOTE_READ);
        post(5, 64);
        byte[] data = TestFrames.pattern(600, 4);
        List<byte[]> frames = TestFrames.all(segmenter.beginWrite(0, MemorySegment.ofArray(data), 0, data.length,
                region.remoteKey(), 100));
        for (int i = frames.size() - 1; i >= 0; i--) {
            assertEquals(MessageAssembler.ACCEPTED, offer(frames.get(i)));
        }
        assertArrayEquals(data, bytes(region.segment().asSlice(100), data.length));
        assertTrue(cq.isEmpty(), "a WRITE without immediate completes silently");
        byte[] imm = TestFrames.all(segmenter.beginWriteWithImmediate(1, 0, MemorySegment.ofArray(data), 0, 10,
                region.remoteKey(), 0, 31)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, offer(imm));
        assertCompletion(5, CompletionStatus.SUCCESS, Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE, 10, 31);

        assertEquals(FrameError.REMOTE_ACCESS, writeFails(region.remoteKey(), 2048 - 9, 10), "beyond the region");
        assertEquals(FrameError.REMOTE_ACCESS, writeFails(readOnly.remoteKey(), 0, 10), "no REMOTE_WRITE");
        assertEquals(FrameError.REMOTE_ACCESS, writeFails(region.remoteKey() ^ 0x100, 0, 10), "forged key");
        assertEquals(FrameError.REMOTE_ACCESS, writeFails(region.localKey(), 0, 10), "local key used remotely");
        assertEquals(FrameError.REMOTE_ACCESS, writeFails(region.remoteKey(), -1, 10), "offset with the top bit set");
        for (int i = 0; i < 1024; i++) {
            assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, i));
        }
        for (int i = 3072; i < 4096; i++) {
            assertEquals(0, memory.get(ValueLayout.JAVA_BYTE, i));
        }
    }

    private int writeFails(int key, long offset, int length) {
        MessageAssembler fresh = new MessageAssembler(config, registry, 4, new CompletionQueue(8), new FlowControl(config));
        byte[] frame = TestFrames.all(new Segmenter(config).beginWrite(0, MemorySegment.ofArray(new byte[length]), 0, length, key, 0)).get(0);
        new TaggedExtension().wrap(MemorySegment.ofArray(frame), 32).regionOffset(offset);
        MemorySegment f = MemorySegment.ofArray(frame);
        new FrameHeader().wrap(f, 0).icrc(new Icrc().compute(f, 0));
        int r = fresh.onFrame(f, 0, frame.length);
        assertTrue(fresh.isInError());
        return r;
    }

    @Test
    void readRequestsAreValidatedAndQueuedForTheResponder() {
        MemorySegment memory = arena.allocate(1024);
        MemoryRegion source = registry.register(memory, Access.REMOTE_READ);
        byte[] frame = TestFrames.all(segmenter.beginReadRequest(0, source.remoteKey(), 24, 1000, 0x77, 5)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, offer(frame));
        ReadRequest r = new ReadRequest();
        assertTrue(assembler.pollReadRequest(r));
        assertEquals(0, r.msn());
        assertEquals(source.remoteKey(), r.rkey());
        assertEquals(24, r.regionOffset());
        assertEquals(1000, r.length());
        assertEquals(0x77, r.sinkRkey());
        assertEquals(5, r.sinkOffset());
        assertFalse(assembler.pollReadRequest(r));
        byte[] tooLong = TestFrames.all(segmenter.beginReadRequest(1, source.remoteKey(), 25, 1000, 0x77, 5)).get(0);
        assertEquals(FrameError.REMOTE_ACCESS, offer(tooLong));
    }

    @Test
    void readResponsesArePlacedIntoTheExpectedSinkOnly() {
        MemorySegment memory = arena.allocate(2048);
        MemoryRegion sink = registry.register(memory, Access.LOCAL_WRITE);
        assertTrue(assembler.expectReadResponse(55, sink.remoteKey(), 100, 700));
        byte[] data = TestFrames.pattern(700, 5);
        List<byte[]> frames = TestFrames.all(segmenter.beginReadResponse(0, MemorySegment.ofArray(data), 0, 700, sink.remoteKey(), 100));
        assertEquals(3, frames.size());
        assertEquals(MessageAssembler.ACCEPTED, offer(frames.get(1)));
        assertEquals(MessageAssembler.ACCEPTED, offer(frames.get(2)));
        assertEquals(MessageAssembler.ACCEPTED, offer(frames.get(0)));
        assertCompletion(55, CompletionStatus.SUCCESS, Opcode.RDMA_READ_RESPONSE_LAST, 700, 0);
        assertArrayEquals(data, bytes(memory.asSlice(100), 700));
        byte[] unexpected = TestFrames.all(segmenter.beginReadResponse(1, MemorySegment.ofArray(data), 0, 10, sink.remoteKey(), 100)).get(0);
        assertEquals(FrameError.UNEXPECTED_READ_RESPONSE, offer(unexpected));
    }

    @Test
    void icrcMismatchIsAProtocolErrorThatFlushes() {
        post(1, 64);
        post(2, 64);
        byte[] frame = send(0, 0, new byte[10]).get(0);
        frame[40] ^= 1;
        assertEquals(FrameError.ICRC_MISMATCH, offer(frame));
        assertCompletion(1, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
        assertCompletion(2, CompletionStatus.FLUSH_ERROR, -1, 0, 0);
    }

    @Test
    void framesOfOneMessageMustAgree() {
        post(1, 1024);
        List<byte[]> three = send(0, 0, new byte[3 * MSS]);
        List<byte[]> two = send(0, 0, new byte[2 * MSS]);
        assertEquals(MessageAssembler.ACCEPTED, offer(three.get(2)));
        assertEquals(FrameError.INCONSISTENT_MESSAGE, offer(two.get(1)), "a second LAST with another total");
        assertCompletion(1, CompletionStatus.PROTOCOL_ERROR, Opcode.SEND_LAST, 0, 0);
    }

    @Test
    void truncatedFramesChangeNothing() {
        post(1, 64);
        byte[] frame = send(0, 0, new byte[10]).get(0);
        assertEquals(FrameError.TRUNCATED, assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length - 1));
        assertEquals(FrameError.TRUNCATED, assembler.onFrame(MemorySegment.ofArray(frame), 0, 31));
        assertFalse(assembler.isInError());
        assertEquals(MessageAssembler.ACCEPTED, offer(frame));
    }

    @Test
    void acknowledgementsDriveTheSendWindowAndCredits() {
        assertEquals(0, flow.credits());
        assertFalse(flow.canSend(1, true));
        assertEquals(0, flow.claim(3, false));
        byte[] ack = new byte[32];
        FlowControl.writeAcknowledge(new FrameHeader().wrap(MemorySegment.ofArray(ack), 0), 1, 4, false, false);
        MemorySegment f = MemorySegment.ofArray(ack);
        new FrameHeader().wrap(f, 0).icrc(new Icrc().compute(f, 0));
        assertEquals(MessageAssembler.ACCEPTED, offer(ack));
        assertEquals(1, flow.unacknowledged());
        assertEquals(4, flow.credits());
        assertEquals(MessageAssembler.ACCEPTED, offer(ack), "duplicate acknowledgements are idempotent");
        assertEquals(4, flow.credits());
        FlowControl.writeAcknowledge(new FrameHeader().wrap(f, 0), 5, 4, false, false);
        new FrameHeader().wrap(f, 0).icrc(new Icrc().compute(f, 0));
        assertEquals(FrameError.BAD_ACKNOWLEDGE, offer(ack), "MSN 5 was never sent");
    }

    @Test
    void sendWindowHoldsAtMostTheMessageWindow() {
        FlowControl fc = new FlowControl(config);
        assertEquals(0, fc.claim(8, false));
        assertEquals(-1, fc.claim(1, false));
        assertEquals(FrameError.OK, fc.onAcknowledge(0xFFFF, 0), "nothing completed yet");
        assertEquals(8, fc.unacknowledged());
        assertEquals(FrameError.OK, fc.onAcknowledge(7, 0));
        assertEquals(0, fc.unacknowledged());
        assertEquals(FrameError.OK, fc.onAcknowledge(3, 0), "a late, older acknowledgement");
        assertEquals(8, fc.nextMsn());
    }

    @Test
    void anAcknowledgementOvertakenByManyNewerOnesIsStaleNotAnError() {
        // Multipath: an ACKNOWLEDGE queued behind bulk data on a slow subflow arrives after newer ones that
        // moved the window on by far more than a window (review finding: striped READs failed BAD_ACKNOWLEDGE).
        FlowControl fc = new FlowControl(config);
        int window = config.messageWindow();
        for (int round = 0; round < 10; round++) {
            assertEquals(round * window, fc.claim(window, false));
            assertEquals(FrameError.OK, fc.onAcknowledge(Msn.add(fc.nextMsn(), -1), 40 + round));
        }
        assertEquals(0, fc.unacknowledged());
        assertEquals(FrameError.OK, fc.onAcknowledge(2, 3), "an acknowledgement nine windows old");
        assertEquals(0, fc.unacknowledged());
        assertEquals(40 + 9, fc.credits(), "a stale credit limit never lowers the credits");
        assertEquals(FrameError.BAD_ACKNOWLEDGE, fc.onAcknowledge(Msn.add(fc.nextMsn(), 3), 0),
                "ahead of everything sent");
    }

    @Test
    void aSendOf16MiBMinusOneIsOneMessageAndOneCompletion() {
        // Review finding: the segmenter split it into two messages and the receiver completed half a SEND.
        FramingConfig big = new FramingConfig(65536, true, 4);
        CompletionQueue q = new CompletionQueue(4);
        MessageAssembler a = new MessageAssembler(big, registry, 4, q, new FlowControl(big));
        int length = FramingConfig.MAX_MESSAGE_SIZE;
        MemorySegment buffer = arena.allocate(1 << 24);
        assertTrue(a.postReceive(1, registry.register(buffer, Access.LOCAL_WRITE).localKey(), 0, 1 << 24));
        MemorySegment source = arena.allocate(length);
        for (long i = 0; i < length; i += 4096) {
            source.set(ValueLayout.JAVA_BYTE, i, (byte) (i >>> 12));
        }
        source.set(ValueLayout.JAVA_BYTE, length - 1, (byte) 0x5A);
        Segmenter s = new Segmenter(big).beginSend(0, 0, source, 0, length);
        MemorySegment frame = arena.allocate(FrameHeader.LENGTH + UntaggedExtension.LENGTH + 65536);
        for (long i = 0; i < s.frameCount(); i++) {
            int headerBytes = s.writeFrame(i, frame, 0);
            MemorySegment.copy(source, s.payloadOffset(), frame, headerBytes, s.payloadLength());
            assertEquals(MessageAssembler.ACCEPTED, a.onFrame(frame, 0, headerBytes + s.payloadLength()), "frame " + i);
            if (i < s.frameCount() - 1) {
                assertTrue(q.isEmpty(), "no completion before the last frame");
            }
        }
        assertTrue(q.poll(c));
        assertEquals(1, c.workRequestId());
        assertEquals(CompletionStatus.SUCCESS, c.status(), c.toString());
        assertEquals(length, c.byteCount());
        assertEquals(-1, buffer.asSlice(0, length).mismatch(source));
        assertFalse(q.poll(c));
        assertFalse(a.isInError());
    }

    @Test
    void readResponsesNameTheSinkByItsRemoteKeyAndNeedLocalWriteOnly() {
        // Review finding: the requester put its local key on the wire as sink_rkey.
        MemorySegment memory = arena.allocate(1024);
        MemoryRegion sink = registry.register(memory, Access.LOCAL_WRITE);
        assertTrue(assembler.expectReadResponse(1, sink.remoteKey(), 0, 100));
        byte[] data = TestFrames.pattern(100, 9);
        byte[] byLocalKey = TestFrames.all(segmenter.beginReadResponse(0, MemorySegment.ofArray(data), 0, 100,
                sink.localKey(), 0)).get(0);
        assertEquals(FrameError.UNEXPECTED_READ_RESPONSE, offer(byLocalKey), "a local key never names a sink");
        MessageAssembler b = new MessageAssembler(config, registry, 16, cq, flow);
        assertTrue(b.expectReadResponse(2, sink.remoteKey(), 0, 100));
        byte[] byRemoteKey = TestFrames.all(segmenter.beginReadResponse(0, MemorySegment.ofArray(data), 0, 100,
                sink.remoteKey(), 0)).get(0);
        while (cq.poll(c)) {
            assertEquals(1, c.workRequestId(), "only the failed assembler's read is flushed");
        }
        assertEquals(MessageAssembler.ACCEPTED, b.onFrame(MemorySegment.ofArray(byRemoteKey), 0, byRemoteKey.length));
        assertCompletion(2, CompletionStatus.SUCCESS, Opcode.RDMA_READ_RESPONSE_ONLY, 100, 0);
        assertArrayEquals(data, bytes(memory, 100));
        // Posting the read checks the sink as the wire will name it.
        assertThrowsIae(() -> b.expectReadResponse(3, sink.localKey(), 0, 100));
        assertThrowsIae(() -> b.expectReadResponse(3, sink.remoteKey(), 1000, 100));
        MemoryRegion readOnly = registry.register(arena.allocate(64), Access.REMOTE_READ);
        assertThrowsIae(() -> b.expectReadResponse(3, readOnly.remoteKey(), 0, 10));
    }

    private static void assertThrowsIae(Runnable r) {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, r::run);
    }

    @Test
    void aReadRequestsSourceIsCheckedAgainWhenServed() {
        MemoryRegion source = registry.register(arena.allocate(1024), Access.REMOTE_READ);
        byte[] frame = TestFrames.all(segmenter.beginReadRequest(0, source.remoteKey(), 24, 1000, 0x77, 5)).get(0);
        assertEquals(MessageAssembler.ACCEPTED, offer(frame));
        ReadRequest r = new ReadRequest();
        assertTrue(assembler.pollReadRequest(r));
        assertEquals(source, r.sourceRegion(registry));
        registry.deregister(source);
        assertEquals(null, r.sourceRegion(registry), "deregistered after the request arrived");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> r.sourceRegion(null));
    }

    @Test
    void readRequestsBeyondTheQueueAreHeldBackNotFatal() {
        // Review finding: a compliant peer overflowed the READ request queue and killed the queue pair.
        MemoryRegion source = registry.register(arena.allocate(1024), Access.REMOTE_READ);
        int w = config.messageWindow();
        for (int msn = 0; msn < 2 * w; msn++) {
            byte[] f = TestFrames.all(segmenter.beginReadRequest(msn, source.remoteKey(), msn, 10, 0x77, 0)).get(0);
            assertEquals(MessageAssembler.ACCEPTED, offer(f), "request " + msn);
        }
        assertFalse(assembler.isInError());
        assertTrue(assembler.isHeldBack());
        assertEquals(w - 1, assembler.acknowledgedMsn(), "held-back requests are not acknowledged");
        ReadRequest r = new ReadRequest();
        for (int msn = 0; msn < 2 * w; msn++) {
            assertTrue(assembler.pollReadRequest(r), "request " + msn);
            assertEquals(msn, r.msn());
            assertEquals(Math.min(w + msn, 2 * w - 1), assembler.acknowledgedMsn(), "taking one retires one more");
        }
        assertFalse(assembler.pollReadRequest(r));
        assertFalse(assembler.isHeldBack());
    }

    @Test
    void receivesArePostedOnlyWhileEveryCompletionFitsSoAFlushIsNeverLost() {
        // Review finding: posting more receives than the CQ holds made the flush drop completions.
        CompletionQueue q = new CompletionQueue(2);
        MessageAssembler a = new MessageAssembler(config, registry, 16, q, new FlowControl(config));
        MemoryRegion region = registry.register(arena.allocate(4096), Access.LOCAL_WRITE);
        assertTrue(a.postReceive(1, region.localKey(), 0, 1024));
        assertTrue(a.postReceive(2, region.localKey(), 1024, 1024));
        assertFalse(a.postReceive(3, region.localKey(), 2048, 1024), "no completion entry left for a third");
        MemoryRegion sink = registry.register(arena.allocate(64), Access.LOCAL_WRITE);
        assertFalse(a.expectReadResponse(9, sink.remoteKey(), 0, 10), "nor for a read");
        byte[] bad = send(0, 0, new byte[10]).get(0);
        bad[0] = 0;
        assertEquals(FrameError.BAD_VERSION, a.onFrame(MemorySegment.ofArray(bad), 0, bad.length));
        assertTrue(q.poll(c));
        assertEquals(1, c.workRequestId());
        assertTrue(q.poll(c));
        assertEquals(2, c.workRequestId());
        assertFalse(q.poll(c));
    }

    @Test
    void aFullSharedCompletionQueueHoldsCompletionsBackUntilResumed() {
        CompletionQueue q = new CompletionQueue(2);
        MessageAssembler a = new MessageAssembler(config, registry, 16, q, new FlowControl(config));
        MessageAssembler other = new MessageAssembler(config, registry, 16, q, new FlowControl(config));
        MemoryRegion region = registry.register(arena.allocate(4096), Access.LOCAL_WRITE);
        assertTrue(a.postReceive(1, region.localKey(), 0, 1024));
        assertTrue(a.postReceive(2, region.localKey(), 1024, 1024));
        assertTrue(other.postReceive(3, region.localKey(), 2048, 1024));
        byte[] m0 = send(0, 0, new byte[10]).get(0);
        assertEquals(MessageAssembler.ACCEPTED, other.onFrame(MemorySegment.ofArray(m0), 0, m0.length));
        assertEquals(MessageAssembler.ACCEPTED, a.onFrame(MemorySegment.ofArray(m0), 0, m0.length));
        byte[] m1 = send(1, 1, new byte[20]).get(0);
        assertEquals(MessageAssembler.ACCEPTED, a.onFrame(MemorySegment.ofArray(m1), 0, m1.length));
        assertFalse(a.isInError(), "a full queue is back-pressure, not an error");
        assertTrue(a.isHeldBack());
        assertEquals(0, a.acknowledgedMsn(), "MSN 1 is complete but not acknowledged");
        assertTrue(q.poll(c));
        assertEquals(3, c.workRequestId());
        assertTrue(q.poll(c));
        assertEquals(1, c.workRequestId());
        assertEquals(MessageAssembler.ACCEPTED, a.resumeCompletions());
        assertFalse(a.isHeldBack());
        assertEquals(1, a.acknowledgedMsn());
        assertTrue(q.poll(c));
        assertEquals(2, c.workRequestId());
        assertEquals(20, c.byteCount());
    }
}
