package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The work a frame costs the receive side is bounded, whatever order frames come in: counted by the
 * assembler's package-private counters, never timed (a unit test never asserts speed).
 */
class BoundedWorkTest {

    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final Completion c = new Completion();

    @AfterEach
    void close() {
        arena.close();
    }

    private static int offer(MessageAssembler assembler, byte[] frame) {
        return assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
    }

    @Test
    void findingTheReceiveOfASendIsAmortisedConstantWorkEvenWithTheLargestWindow() {
        // Review finding (issue 6): the receive a SEND takes was found by walking the window from the oldest
        // incomplete message on every SEND frame, so a window of 2^15 messages held behind an incomplete
        // first one cost 2^15 * 2^15 / 2 steps.
        int window = FramingConfig.MAX_MESSAGE_WINDOW;
        FramingConfig config = new FramingConfig(65536, false, window);
        CompletionQueue cq = new CompletionQueue(2 * window);
        MessageAssembler assembler = new MessageAssembler(config, registry, window, cq, new FlowControl(config));
        int lkey = registry.register(arena.allocate(2 * 65536), Access.LOCAL_WRITE).localKey();
        for (int m = 0; m < window; m++) {
            assertTrue(assembler.postReceive(m, lkey, 0, 2 * 65536));
        }
        Segmenter segmenter = new Segmenter(config);
        List<byte[]> first = TestFrames.all(segmenter.beginSend(0, 0, MemorySegment.ofArray(new byte[65536 + 1]), 0, 65536 + 1));
        assertEquals(MessageAssembler.ACCEPTED, offer(assembler, first.get(0)));
        byte[] one = new byte[1];
        MemorySegment frame = MemorySegment.ofArray(new byte[FrameHeader.LENGTH + UntaggedExtension.LENGTH + 1]);
        for (int m = 1; m < window; m++) {
            segmenter.beginSend(m, m, MemorySegment.ofArray(one), 0, 1).next(frame, 0);
            assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(frame, 0, frame.byteSize()), "message " + m);
        }
        assertTrue(cq.isEmpty(), "every message waits for message 0");
        assertEquals(MessageAssembler.ACCEPTED, offer(assembler, first.get(1)));
        for (int m = 0; m < window; m++) {
            assertTrue(cq.poll(c));
            assertEquals(m, c.workRequestId());
        }
        long frames = window + 1L;
        assertTrue(assembler.resolutionSteps() <= 2 * frames,
                "steps to find receives: " + assembler.resolutionSteps() + " for " + frames + " frames");
    }

    @Test
    void aFrameOfferedAgainWhileStillDeferredCostsNoIcrcPass() {
        // Review finding (issue 6): every frame answered DEFERRED is offered again after later frames, and each
        // offer verified the ICRC over its whole payload again: n deferred frames cost n^2 / 2 passes.
        FramingConfig config = new FramingConfig(1024, true, 64);
        MessageAssembler assembler = new MessageAssembler(config, registry, 64, new CompletionQueue(128), new FlowControl(config));
        MemorySegment region = arena.allocate(64 * 1024);
        int lkey = registry.register(region, Access.LOCAL_WRITE).localKey();
        int rkey = registry.register(arena.allocate(4096), Access.LOCAL_WRITE | Access.REMOTE_WRITE).remoteKey();
        Segmenter segmenter = new Segmenter(config);
        // Message 0 is a WRITE whose last frame, which says whether it takes a receive, comes last.
        List<byte[]> write = TestFrames.all(segmenter.beginWrite(0, MemorySegment.ofArray(new byte[1500]), 0, 1500, rkey, 0));
        assertEquals(MessageAssembler.ACCEPTED, offer(assembler, write.get(0)));
        List<byte[]> deferred = new ArrayList<>();
        int sends = 63;
        long offers = 1;
        for (int m = 1; m <= sends; m++) {
            assertTrue(assembler.postReceive(m, lkey, m * 1024L, 1024));
            byte[] send = TestFrames.all(segmenter.beginSend(m, m - 1, MemorySegment.ofArray(TestFrames.pattern(1024, m)), 0, 1024)).get(0);
            assertEquals(MessageAssembler.DEFERRED, offer(assembler, send));
            offers++;
            // The receive loop offers what it keeps again after every later frame.
            for (byte[] again : deferred) {
                assertEquals(MessageAssembler.DEFERRED, offer(assembler, again));
            }
            deferred.add(send);
        }
        assertTrue(assembler.icrcPasses() <= offers,
                "ICRC passes: " + assembler.icrcPasses() + " for " + offers + " frames offered for the first time");
        assertEquals(MessageAssembler.ACCEPTED, offer(assembler, write.get(1)));
        for (byte[] again : deferred) {
            assertEquals(MessageAssembler.ACCEPTED, offer(assembler, again));
        }
        assertFalse(assembler.isInError());
    }

    @Test
    void aReceiveLoopThatAsksWhetherTheReceiveIsKnownOffersEachDeferredFrameOnce() {
        // The order that made the old contract ("offer it again after later frames") quadratic: k SENDs wait
        // for k WRITEs whose last frames, which say whether they take a receive, come one by one.
        int k = 31;
        FramingConfig config = new FramingConfig(1024, true, 64);
        CompletionQueue cq = new CompletionQueue(64);
        MessageAssembler assembler = new MessageAssembler(config, registry, 32, cq, new FlowControl(config));
        int lkey = registry.register(arena.allocate(k * 128L), Access.LOCAL_WRITE).localKey();
        int rkey = registry.register(arena.allocate(k * 2048L), Access.LOCAL_WRITE | Access.REMOTE_WRITE).remoteKey();
        Segmenter segmenter = new Segmenter(config);
        List<byte[]> firsts = new ArrayList<>();
        List<byte[]> lasts = new ArrayList<>();
        for (int m = 0; m < k; m++) {
            List<byte[]> write = TestFrames.all(segmenter.beginWrite(m, MemorySegment.ofArray(new byte[1500]), 0, 1500,
                    rkey, m * 2048L));
            firsts.add(write.get(0));
            lasts.add(write.get(1));
        }
        List<byte[]> sends = new ArrayList<>();
        for (int m = k; m < 2 * k; m++) {
            assertTrue(assembler.postReceive(m, lkey, (m - k) * 128L, 128));
            sends.add(TestFrames.all(segmenter.beginSend(m, m - k, MemorySegment.ofArray(TestFrames.pattern(100, m)), 0, 100)).get(0));
        }
        ReceiveLoop loop = new ReceiveLoop(assembler);
        firsts.forEach(loop::offer);
        sends.forEach(loop::offer);
        assertEquals(k, loop.kept.size());
        assertTrue(assembler.isReceiveKnown(0), "the oldest message's receive is always known");
        assertFalse(assembler.isReceiveKnown(1), "message 0 is a WRITE whose last frame is still to come");
        lasts.forEach(loop::offer);
        assertTrue(loop.kept.isEmpty());
        assertEquals(3L * k + k, loop.offers, "every frame once, and every deferred one once more");
        for (int m = k; m < 2 * k; m++) {
            assertTrue(cq.poll(c));
            assertEquals(m, c.workRequestId());
            assertEquals(CompletionStatus.SUCCESS, c.status());
        }
        assertTrue(assembler.isReceiveKnown(0), "a completed message");
        assertThrows(IllegalArgumentException.class, () -> assembler.isReceiveKnown(1 << 16));
        assertThrows(IllegalArgumentException.class, () -> assembler.isReceiveKnown(-1));
    }

    /** Keeps DEFERRED frames in MSN order and offers them again only up to the first unknown receive. */
    private static final class ReceiveLoop {
        final MessageAssembler assembler;
        final ArrayDeque<byte[]> kept = new ArrayDeque<>();
        long offers;

        ReceiveLoop(MessageAssembler assembler) {
            this.assembler = assembler;
        }

        void offer(byte[] frame) {
            int r = assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
            offers++;
            assertTrue(r > 0, FrameError.name(r));
            if (r == MessageAssembler.DEFERRED) {
                kept.add(frame); // frames arrive here in MSN order; a real loop would insert in order
                return;
            }
            while (!kept.isEmpty() && assembler.isReceiveKnown(msn(kept.peek()))) {
                byte[] again = kept.poll();
                offers++;
                assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(MemorySegment.ofArray(again), 0, again.length));
            }
        }

        private static int msn(byte[] frame) {
            return new FrameHeader().wrap(MemorySegment.ofArray(frame), 0).msn();
        }
    }
}
