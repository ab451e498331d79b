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
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Receives scattered over several pieces (ibv_post_recv(3) with {@code num_sge > 1}): a SEND lands over them
 * in order on both ways in, frames straddling pieces included, and nothing is written outside them.
 */
class ScatteredReceiveTest {

    private static final int MSS = 128;
    private static final byte GUARD = (byte) 0xA5;
    private final FramingConfig config = new FramingConfig(MSS, true, 16);
    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private final CompletionQueue cq = new CompletionQueue(64);
    private final MessageAssembler assembler = new MessageAssembler(config, registry, 16, 6, cq, new FlowControl(config));
    private final Segmenter segmenter = new Segmenter(config);
    private final Completion c = new Completion();
    private final PlacementTarget target = new PlacementTarget(arena.allocate(MSS));
    private final MemoryRegion left = guarded(4096);
    private final MemoryRegion right = guarded(4096);

    @AfterEach
    void close() {
        arena.close();
    }

    private MemoryRegion guarded(int size) {
        MemorySegment memory = arena.allocate(size);
        memory.fill(GUARD);
        return registry.register(memory, Access.LOCAL_WRITE);
    }

    /** Up to six pieces of 0 to 300 bytes, alternating between the two regions, at disjoint places. */
    private SgeList randomPieces(SplittableRandom random) {
        SgeList list = new SgeList(6);
        for (int i = 0, n = 1 + random.nextInt(6); i < n; i++) {
            int length = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(300);
            MemoryRegion region = i % 2 == 0 ? left : right;
            list.add(region.localKey(), (i / 2) * 600L + random.nextInt(200), length);
        }
        return list;
    }

    /** Asserts that the pieces hold {@code payload} in order and every byte of both regions outside them is untouched. */
    private void assertScattered(SgeList pieces, byte[] payload) {
        byte[][] expected = {guard(left), guard(right)};
        int at = 0;
        for (int i = 0; i < pieces.count(); i++) {
            byte[] region = expected[pieces.region(i) == left ? 0 : 1];
            int n = (int) Math.min(pieces.length(i), payload.length - at);
            System.arraycopy(payload, at, region, (int) pieces.offset(i), Math.max(0, n));
            at += Math.max(0, n);
        }
        assertArrayEquals(expected[0], left.segment().toArray(ValueLayout.JAVA_BYTE), "left region, " + pieces);
        assertArrayEquals(expected[1], right.segment().toArray(ValueLayout.JAVA_BYTE), "right region, " + pieces);
    }

    private static byte[] guard(MemoryRegion region) {
        byte[] b = new byte[(int) region.size()];
        java.util.Arrays.fill(b, GUARD);
        return b;
    }

    private void resetRegions() {
        left.segment().fill(GUARD);
        right.segment().fill(GUARD);
    }

    private void assertReceived(long id, int status, int bytes) {
        assertTrue(cq.poll(c), "expected a completion for " + id);
        assertEquals(id, c.workRequestId(), c.toString());
        assertEquals(CompletionStatus.name(status), CompletionStatus.name(c.status()), c.toString());
        assertEquals(bytes, c.byteCount(), c.toString());
    }

    @Test
    void aSendLandsOverThePiecesInOrderOnTheCopyPathInAnyFrameOrder() {
        SplittableRandom random = new SplittableRandom(21);
        Random shuffle = new Random(22);
        for (int msn = 0; msn < 300; msn++) {
            resetRegions();
            SgeList pieces = randomPieces(random);
            int length = (int) (pieces.byteSize() == 0 ? 0 : random.nextLong(pieces.byteSize() + 1));
            byte[] payload = TestFrames.pattern(length, msn);
            assertTrue(assembler.postReceive(msn, pieces));
            List<byte[]> frames = new ArrayList<>(TestFrames.all(segmenter.beginSend(msn & 0xFFFF, msn,
                    MemorySegment.ofArray(payload), 0, length)));
            Collections.shuffle(frames, shuffle);
            for (byte[] frame : frames) {
                assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(TestFrames.heap(frame), 0, frame.length),
                        "frame of message " + msn + " into " + pieces);
            }
            assertReceived(msn, CompletionStatus.SUCCESS, length);
            assertScattered(pieces, payload);
        }
    }

    @Test
    void framesWithinOnePieceArePlacedDirectlyAndFramesAcrossPiecesAreStaged() {
        // Pieces of 100, 0, 200 and 60 bytes: frames [0,128) and [256,384) straddle, [128,256) lies in one.
        SgeList pieces = new SgeList(4).add(left.localKey(), 10, 100).add(right.localKey(), 0, 0)
                .add(right.localKey(), 1000, 200).add(left.localKey(), 3000, 60);
        byte[] payload = TestFrames.pattern(360, 9);
        assertTrue(assembler.postReceive(7, pieces));
        List<byte[]> frames = TestFrames.all(segmenter.beginSend(0, 0, MemorySegment.ofArray(payload), 0, 360));
        assertEquals(3, frames.size());
        boolean[] staged = new boolean[3];
        for (int i : new int[] {2, 1, 0}) {
            byte[] frame = frames.get(i);
            MemorySegment f = TestFrames.heap(frame);
            int headerBytes = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
            assertEquals(MessageAssembler.ACCEPTED, assembler.beginPlacement(f, 0, headerBytes, target));
            staged[i] = target.isStaged();
            if (staged[i]) {
                assertSame(target.drain(), target.segment(), "a straddling payload goes to the drain");
            } else {
                assertSame(right.segment(), target.segment(), "the middle frame lies in the third piece");
                assertEquals(1000 + 128 - 100, target.offset());
            }
            MemorySegment.copy(frame, headerBytes, target.segment(), ValueLayout.JAVA_BYTE, target.offset(), target.length());
            assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
        }
        assertArrayEquals(new boolean[] {true, false, true}, staged);
        assertReceived(7, CompletionStatus.SUCCESS, 360);
        assertScattered(pieces, payload);
    }

    @Test
    void aStagedPlacementAbortedLeavesThePiecesToTheNextCopy() {
        SgeList pieces = new SgeList(2).add(left.localKey(), 0, 50).add(right.localKey(), 0, 50);
        byte[] payload = TestFrames.pattern(100, 4);
        assertTrue(assembler.postReceive(1, pieces));
        byte[] frame = TestFrames.all(segmenter.beginSend(0, 0, MemorySegment.ofArray(payload), 0, 100)).get(0);
        int headerBytes = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
        assertEquals(MessageAssembler.ACCEPTED, assembler.beginPlacement(TestFrames.heap(frame), 0, headerBytes, target));
        assertTrue(target.isStaged());
        target.drain().fill((byte) 0x11); // a payload receive that broke off halfway
        assembler.abort(target);
        assertFalse(target.isStaged());
        assertScattered(pieces, new byte[0]);
        assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(TestFrames.heap(frame), 0, frame.length));
        assertReceived(1, CompletionStatus.SUCCESS, 100);
        assertScattered(pieces, payload);
    }

    @Test
    void aDrainGivenPerPlacementIsKeptWhileAStagedPayloadIsInItAndFreeOtherwise() {
        PlacementTarget lent = new PlacementTarget();
        SgeList pieces = new SgeList(2).add(left.localKey(), 0, 50).add(right.localKey(), 0, 50);
        byte[] payload = TestFrames.pattern(100, 6);
        assertTrue(assembler.postReceive(1, pieces));
        byte[] frame = TestFrames.all(segmenter.beginSend(0, 0, MemorySegment.ofArray(payload), 0, 100)).get(0);
        int headerBytes = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
        MemorySegment headers = TestFrames.heap(frame);
        assertThrows(IllegalArgumentException.class, () -> assembler.beginPlacement(headers, 0, headerBytes, lent),
                "a holder without a drain has nowhere to stage");
        MemorySegment drain = arena.allocate(MSS);
        lent.drain(drain);
        assertEquals(MessageAssembler.ACCEPTED, assembler.beginPlacement(headers, 0, headerBytes, lent));
        assertTrue(lent.isStaged());
        assertThrows(IllegalStateException.class, () -> lent.drain(null), "the staged payload is read from it at commit");
        MemorySegment.copy(frame, headerBytes, drain, ValueLayout.JAVA_BYTE, 0, 100);
        assertEquals(MessageAssembler.ACCEPTED, assembler.commit(lent));
        lent.drain(null);
        assertEquals(null, lent.drain());
        assertReceived(1, CompletionStatus.SUCCESS, 100);
        assertScattered(pieces, payload);
    }

    @Test
    void aSendLongerThanAllThePiecesIsALocalLengthError() {
        SgeList pieces = new SgeList(3).add(left.localKey(), 0, 40).add(right.localKey(), 0, 0).add(right.localKey(), 8, 59);
        assertTrue(assembler.postReceive(3, pieces));
        byte[] frame = TestFrames.all(segmenter.beginSend(0, 0, MemorySegment.ofArray(new byte[100]), 0, 100)).get(0);
        assertEquals(FrameError.LOCAL_LENGTH, assembler.onFrame(TestFrames.heap(frame), 0, frame.length));
        assertReceived(3, CompletionStatus.LOCAL_LENGTH_ERROR, 0);
        assertScattered(pieces, new byte[0]);
    }

    @Test
    void aFrameTouchingADeregisteredPieceIsALocalProtectionError() {
        MemoryRegion gone = guarded(64);
        SgeList pieces = new SgeList(2).add(left.localKey(), 0, 100).add(gone.localKey(), 0, 64);
        assertTrue(assembler.postReceive(5, pieces));
        registry.deregister(gone);
        byte[] payload = TestFrames.pattern(164, 1);
        List<byte[]> frames = TestFrames.all(segmenter.beginSend(0, 0, MemorySegment.ofArray(payload), 0, 164));
        byte[] first = frames.get(0);
        assertEquals(FrameError.LOCAL_PROTECTION, assembler.onFrame(TestFrames.heap(first), 0, first.length),
                "bytes 0..127 reach into the deregistered piece");
        assertReceived(5, CompletionStatus.LOCAL_PROTECTION_ERROR, 0);
    }

    @Test
    void badScatterListsAreRefusedWhenPosted() {
        SgeList none = new SgeList(1);
        assertThrows(IllegalArgumentException.class, () -> assembler.postReceive(1, none));
        SgeList seven = new SgeList(7);
        for (int i = 0; i < 7; i++) {
            seven.add(left.localKey(), i, 1);
        }
        IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class, () -> assembler.postReceive(1, seven));
        assertTrue(tooMany.getMessage().contains("1..6"), tooMany.getMessage());
        SgeList memory = new SgeList(1).add(left.segment(), 0, 8);
        assertThrows(IllegalArgumentException.class, () -> assembler.postReceive(1, memory));
        SgeList secondBad = new SgeList(2).add(left.localKey(), 0, 8).add(left.localKey(), 4090, 8);
        IllegalArgumentException bounds = assertThrows(IllegalArgumentException.class, () -> assembler.postReceive(1, secondBad));
        assertTrue(bounds.getMessage().contains("element 1") && bounds.getMessage().contains("OUT_OF_BOUNDS"), bounds.getMessage());
        assertEquals(0, assembler.postedReceives());
        assertTrue(assembler.postReceive(2, new SgeList(2).add(left.localKey(), 0, 0).add(right.localKey(), 4096, 0)),
                "pieces of 0 bytes, even at a region's end: a receive for 0-byte messages");
    }

    @Test
    void receivesFilledInPlaceLandAsCopiedOnesDo() {
        SplittableRandom random = new SplittableRandom(31);
        for (int msn = 0; msn < 200; msn++) {
            resetRegions();
            SgeList pieces = randomPieces(random);
            if (msn % 2 == 0) {
                assertTrue(assembler.postReceive(msn, pieces));
            } else {
                assembler.claimReceive().add(right.localKey(), 7, 1); // given up: claiming again empties it
                SgeList claimed = assembler.claimReceive();
                assertTrue(claimed != null && claimed.count() == 0, "an empty list to fill");
                for (int i = 0; i < pieces.count(); i++) {
                    claimed.add(pieces.key(i), pieces.offset(i), pieces.length(i));
                }
                assertTrue(assembler.postClaimedReceive(msn));
                pieces.resolve(registry, Access.LOCAL_WRITE); // for assertScattered, which tells regions apart
            }
            int length = (int) (pieces.byteSize() == 0 ? 0 : random.nextLong(pieces.byteSize() + 1));
            byte[] payload = TestFrames.pattern(length, msn);
            for (byte[] frame : TestFrames.all(segmenter.beginSend(msn & 0xFFFF, msn, MemorySegment.ofArray(payload), 0, length))) {
                assertEquals(MessageAssembler.ACCEPTED, assembler.onFrame(TestFrames.heap(frame), 0, frame.length));
            }
            assertReceived(msn, CompletionStatus.SUCCESS, length);
            assertScattered(pieces, payload);
        }
    }

    @Test
    void aReceiveFilledInPlaceIsCheckedAsAPostedListIsAndPostsNothingWhenRefused() {
        IllegalStateException unclaimed = assertThrows(IllegalStateException.class, () -> assembler.postClaimedReceive(1));
        assertTrue(unclaimed.getMessage().contains("no receive claimed"), unclaimed.getMessage());
        assembler.claimReceive().add(left.localKey(), 0, 8).add(left.localKey(), 4090, 8);
        IllegalArgumentException bounds = assertThrows(IllegalArgumentException.class, () -> assembler.postClaimedReceive(1));
        assertTrue(bounds.getMessage().contains("element 1") && bounds.getMessage().contains("OUT_OF_BOUNDS"), bounds.getMessage());
        assertEquals(0, assembler.postedReceives());
        assertThrows(IllegalArgumentException.class, () -> assembler.postClaimedReceive(1), "the claim stays open, the list as it was");
        assertEquals(0, assembler.claimReceive().count(), "claimed again: emptied");
        assertThrows(IllegalArgumentException.class, () -> assembler.postClaimedReceive(1), "no piece");
        assembler.claimReceive().add(left.segment(), 0, 8);
        assertThrows(IllegalArgumentException.class, () -> assembler.postClaimedReceive(1), "memory, not a key");
        assembler.claimReceive().add(right.localKey(), 0, 64);
        assertTrue(assembler.postClaimedReceive(2));
        assertEquals(1, assembler.postedReceives());
        assertThrows(IllegalStateException.class, () -> assembler.postClaimedReceive(3), "posted: the claim is spent");

        for (int id = 3; id <= 17; id++) {
            assembler.claimReceive().add(left.localKey(), 64L * id, 64);
            assertTrue(assembler.postClaimedReceive(id));
        }
        assertEquals(16, assembler.postedReceives());
        assertEquals(null, assembler.claimReceive(), "the receive queue is full");
        assertThrows(IllegalStateException.class, () -> assembler.postClaimedReceive(18));
    }

    @Test
    void aReceiveFilledInPlaceAfterAFailureCompletesWithAFlushError() {
        assembler.claimReceive().add(left.localKey(), 0, 64);
        assertTrue(assembler.postClaimedReceive(1));
        assembler.failTransport();
        assertReceived(1, CompletionStatus.FLUSH_ERROR, 0);
        assembler.claimReceive().add(left.localKey(), 0, 64);
        assertTrue(assembler.postClaimedReceive(2));
        assertReceived(2, CompletionStatus.FLUSH_ERROR, 0);
        assertEquals(0, assembler.postedReceives());
        assertThrows(IllegalStateException.class, () -> assembler.postClaimedReceive(3), "flushed: the claim is spent");
    }
}
