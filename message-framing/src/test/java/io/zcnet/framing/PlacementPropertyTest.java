package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Random messages, segment sizes and arrival orders with duplicates: placed bytes equal sent bytes, each
 * message completes once, completions come in order; garbage and mutated frames never write outside
 * the posted buffers or the registered region.
 */
class PlacementPropertyTest {

    private static final int GUARD = 256;
    private static final byte GUARD_BYTE = (byte) 0xA5;

    @Property(tries = 150)
    void anyArrivalOrderWithDuplicatesPlacesEveryByteAndCompletesInOrder(
            @ForAll @IntRange(min = 64, max = 700) int segmentSize,
            @ForAll @IntRange(min = 1, max = 12) int messageCount,
            @ForAll("seeds") long seed,
            @ForAll boolean icrc,
            @ForAll boolean packed) {
        Random random = new Random(seed);
        FramingConfig config = new FramingConfig(segmentSize, icrc, 16);
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry();
            MemorySegment regionMemory = arena.allocate(messageCount * 4L * segmentSize + 1);
            MemoryRegion region = registry.register(regionMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            CompletionQueue cq = new CompletionQueue(32);
            MessageAssembler assembler = new MessageAssembler(config, registry, 16, cq, new FlowControl(config));
            Segmenter segmenter = new Segmenter(config);

            // Packed, runs of small SENDs share SEND_PACKED frames, which arrive in any order with the rest.
            MixedMessages mix = new MixedMessages(random, messageCount, 4 * segmentSize, region, 0, registry, assembler,
                    segmenter, arena, GUARD, GUARD_BYTE, packed ? Math.min(segmentSize, PackedSends.MAX_LENGTH) : 0);
            List<byte[]> payloads = mix.payloads;
            List<Integer> kinds = mix.kinds;
            List<MemorySegment> receives = mix.receives;
            List<Long> writeOffsets = mix.writeOffsets;
            List<byte[]> frames = mix.frames;
            List<byte[]> arrivals = new ArrayList<>(frames);
            for (int i = random.nextInt(frames.size() + 1); i > 0; i--) {
                arrivals.add(frames.get(random.nextInt(frames.size())));
            }
            for (byte[] resend : mix.resends) {
                if (random.nextBoolean()) {
                    arrivals.add(resend); // a packed SEND sent again in a frame of its own
                }
            }
            Collections.shuffle(arrivals, random);

            for (byte[] frame : arrivals) {
                // Every frame names its place (a SEND's receive by its RSN): none waits for an earlier one.
                int r = assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
                assertTrue(r == MessageAssembler.ACCEPTED || r == MessageAssembler.DUPLICATE,
                        () -> FrameError.name(r) + " " + assembler);
            }

            Completion c = new Completion();
            int receiveIndex = 0;
            for (int m = 0; m < messageCount; m++) {
                byte[] payload = payloads.get(m);
                if (kinds.get(m) != 1) {
                    assertTrue(cq.poll(c), "completion of message " + m);
                    assertEquals(m, c.workRequestId(), "completions in MSN order");
                    assertEquals(CompletionStatus.SUCCESS, c.status());
                    assertEquals(payload.length, c.byteCount());
                    assertEquals(m * 1000, c.immediate());
                    MemorySegment buffer = receives.get(receiveIndex++);
                    if (kinds.get(m) == 0) {
                        assertArrayEquals(payload, buffer.asSlice(GUARD, payload.length).toArray(ValueLayout.JAVA_BYTE));
                    }
                    assertGuards(buffer, payload.length);
                }
                if (kinds.get(m) != 0) {
                    assertArrayEquals(payload, regionMemory.asSlice(writeOffsets.get(m), payload.length).toArray(ValueLayout.JAVA_BYTE));
                }
            }
            assertFalse(cq.poll(c), "no message completes twice");
            assertEquals(messageCount - 1, assembler.acknowledgedMsn());
        }
    }

    /**
     * The header-first path with up to four payload receives in flight at once (as over several
     * subflows), committed in random order, some failing (aborted) and retransmitted, duplicates drained,
     * copies of a segment being received (deferred) kept and offered again through the copy path.
     */
    @Property(tries = 150)
    void directPlacementInAnyOrderWithReceivesInFlightPlacesEveryByteAndCompletesInOrder(
            @ForAll @IntRange(min = 64, max = 700) int segmentSize,
            @ForAll @IntRange(min = 1, max = 12) int messageCount,
            @ForAll("seeds") long seed,
            @ForAll boolean icrc) {
        Random random = new Random(seed);
        FramingConfig config = new FramingConfig(segmentSize, icrc, 16);
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry();
            MemorySegment regionMemory = arena.allocate(messageCount * 4L * segmentSize + 2L * GUARD);
            regionMemory.fill(GUARD_BYTE);
            MemoryRegion region = registry.register(regionMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            CompletionQueue cq = new CompletionQueue(32);
            MessageAssembler assembler = new MessageAssembler(config, registry, 16, cq, new FlowControl(config));
            Segmenter segmenter = new Segmenter(config);
            MemorySegment drains = arena.allocate(4L * (segmentSize + GUARD) + GUARD);
            drains.fill(GUARD_BYTE);
            ArrayDeque<PlacementTarget> idle = new ArrayDeque<>();
            for (int i = 0; i < 4; i++) {
                idle.add(new PlacementTarget(drains.asSlice(GUARD + i * (long) (segmentSize + GUARD), segmentSize)));
            }

            MixedMessages mix = new MixedMessages(random, messageCount, 4 * segmentSize, region, GUARD, registry, assembler,
                    segmenter, arena, GUARD, GUARD_BYTE);
            List<byte[]> payloads = mix.payloads;
            List<Integer> kinds = mix.kinds;
            List<MemorySegment> receives = mix.receives;
            List<Long> writeOffsets = mix.writeOffsets;
            List<byte[]> frames = mix.frames;
            ArrayDeque<byte[]> arrivals = new ArrayDeque<>();
            List<byte[]> shuffled = new ArrayList<>(frames);
            for (int i = random.nextInt(frames.size() + 1); i > 0; i--) {
                shuffled.add(frames.get(random.nextInt(frames.size())));
            }
            Collections.shuffle(shuffled, random);
            arrivals.addAll(shuffled);

            List<PlacementTarget> inFlight = new ArrayList<>();
            List<byte[]> inFlightFrames = new ArrayList<>();
            ArrayDeque<byte[]> deferred = new ArrayDeque<>();
            int steps = 0;
            while (!arrivals.isEmpty() || !inFlight.isEmpty()) {
                assertTrue(++steps < 100_000, "bounded");
                if (!arrivals.isEmpty() && !idle.isEmpty() && (inFlight.isEmpty() || random.nextBoolean())) {
                    byte[] frame = arrivals.poll();
                    PlacementTarget t = idle.poll();
                    int headerBytes = frame.length - (int) new FrameHeader().wrap(MemorySegment.ofArray(frame), 0).length();
                    int r = assembler.beginPlacement(MemorySegment.ofArray(frame), 0, headerBytes, t);
                    assertTrue(r > 0, () -> FrameError.name(r) + " " + assembler);
                    assertEquals(frame.length - headerBytes, t.length(), "the whole payload has a place");
                    if (r == MessageAssembler.ACCEPTED) {
                        inFlight.add(t);
                        inFlightFrames.add(frame);
                        continue;
                    }
                    assertSame(t.drain(), t.segment());
                    MemorySegment.copy(frame, headerBytes, t.segment(), ValueLayout.JAVA_BYTE, t.offset(), t.length());
                    if (r == MessageAssembler.DEFERRED) {
                        deferred.add(frame);
                    }
                    idle.add(t);
                } else {
                    int i = random.nextInt(inFlight.size());
                    PlacementTarget t = inFlight.remove(i);
                    byte[] frame = inFlightFrames.remove(i);
                    int headerBytes = frame.length - t.length();
                    if (random.nextInt(8) == 0) {
                        // The payload receive fails half way: the bytes that came stay, the frame comes again.
                        MemorySegment.copy(frame, headerBytes, t.segment(), ValueLayout.JAVA_BYTE, t.offset(), t.length() / 2);
                        assembler.abort(t);
                        arrivals.add(frame);
                    } else {
                        MemorySegment.copy(frame, headerBytes, t.segment(), ValueLayout.JAVA_BYTE, t.offset(), t.length());
                        int r = assembler.commit(t);
                        assertEquals(MessageAssembler.ACCEPTED, r, () -> FrameError.name(r) + " " + assembler);
                    }
                    assertFalse(t.isPending());
                    idle.add(t);
                    offerAgain(assembler, deferred);
                }
            }
            // No placement is in flight any more: every kept copy is placed now, or is a duplicate.
            offerAgain(assembler, deferred);
            assertTrue(deferred.isEmpty(), "every deferred frame was placed once the placement it waited for ended");

            Completion c = new Completion();
            int receiveIndex = 0;
            for (int m = 0; m < messageCount; m++) {
                byte[] payload = payloads.get(m);
                if (kinds.get(m) != 1) {
                    assertTrue(cq.poll(c), "completion of message " + m);
                    assertEquals(m, c.workRequestId(), "completions in MSN order");
                    assertEquals(CompletionStatus.SUCCESS, c.status());
                    assertEquals(payload.length, c.byteCount());
                    assertEquals(m * 1000, c.immediate());
                    MemorySegment buffer = receives.get(receiveIndex++);
                    if (kinds.get(m) == 0) {
                        assertArrayEquals(payload, buffer.asSlice(GUARD, payload.length).toArray(ValueLayout.JAVA_BYTE));
                    }
                    assertGuards(buffer, payload.length);
                }
                if (kinds.get(m) != 0) {
                    assertArrayEquals(payload, regionMemory.asSlice(writeOffsets.get(m), payload.length).toArray(ValueLayout.JAVA_BYTE));
                }
            }
            assertFalse(cq.poll(c), "no message completes twice");
            assertEquals(messageCount - 1, assembler.acknowledgedMsn());
            assertUntouched(regionMemory, 0, GUARD);
            assertUntouched(regionMemory, mix.regionEnd, GUARD);
            for (int i = 0; i <= 4; i++) {
                assertUntouched(drains, i * (long) (segmentSize + GUARD), GUARD);
            }
        }
    }

    @Property(tries = 300)
    void garbageAndMutatedFramesNeverTouchMemoryOutsideBuffersAndRegions(
            @ForAll("seeds") long seed, @ForAll @IntRange(min = 0, max = 2) int mode) {
        Random random = new Random(seed);
        FramingConfig config = new FramingConfig(128, random.nextBoolean(), 4);
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry();
            MemorySegment regionMemory = arena.allocate(1024 + 2 * GUARD);
            regionMemory.fill(GUARD_BYTE);
            MemoryRegion region = registry.register(regionMemory.asSlice(GUARD, 1024), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            MemorySegment receiveMemory = arena.allocate(300 + 2 * GUARD);
            receiveMemory.fill(GUARD_BYTE);
            MessageAssembler assembler = new MessageAssembler(config, registry, 4, new CompletionQueue(16), new FlowControl(config));
            int receiveKey = registry.register(receiveMemory, Access.LOCAL_WRITE).localKey();
            assembler.postReceive(1, receiveKey, GUARD, 300);
            assembler.expectReadResponse(2, region.remoteKey(), 0, 500);
            Segmenter segmenter = new Segmenter(config);

            for (int i = 0; i < 20; i++) {
                byte[] frame;
                if (mode == 0) {
                    frame = new byte[random.nextInt(200)];
                    random.nextBytes(frame);
                    if (frame.length > 0 && random.nextBoolean()) {
                        frame[0] = (byte) (0x40 | (frame[0] & 0x3C));
                    }
                } else {
                    byte[] payload = TestFrames.pattern(random.nextInt(600), i);
                    MemorySegment src = MemorySegment.ofArray(payload);
                    int msn = random.nextInt(6);
                    switch (random.nextInt(4)) {
                        case 0 -> segmenter.beginSend(msn, random.nextInt(3), src, 0, payload.length);
                        case 1 -> segmenter.beginWrite(msn, src, 0, payload.length, region.remoteKey(), random.nextInt(1200));
                        case 2 -> segmenter.beginReadResponse(msn, src, 0, payload.length, region.remoteKey(), random.nextInt(600));
                        default -> segmenter.beginReadRequest(msn, region.remoteKey(), random.nextInt(1200), payload.length, 9, 0);
                    }
                    List<byte[]> frames = TestFrames.all(segmenter);
                    frame = frames.get(random.nextInt(frames.size()));
                    int flips = mode == 1 ? 1 + random.nextInt(3) : 0;
                    for (int f = 0; f < flips; f++) {
                        frame[random.nextInt(frame.length)] ^= (byte) (1 << random.nextInt(8));
                    }
                }
                int r = assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
                assertTrue(r >= FrameError.COUNT * -1 && r <= MessageAssembler.DEFERRED, "result " + r);
            }
            for (int i = 0; i < GUARD; i++) {
                assertEquals(GUARD_BYTE, regionMemory.get(ValueLayout.JAVA_BYTE, i));
                assertEquals(GUARD_BYTE, regionMemory.get(ValueLayout.JAVA_BYTE, GUARD + 1024 + i));
                assertEquals(GUARD_BYTE, receiveMemory.get(ValueLayout.JAVA_BYTE, i));
                assertEquals(GUARD_BYTE, receiveMemory.get(ValueLayout.JAVA_BYTE, GUARD + 300 + i));
            }
        }
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<Long> seeds() {
        return net.jqwik.api.Arbitraries.longs();
    }

    /** Offers every deferred frame once more, whole, through the copy path. */
    private static void offerAgain(MessageAssembler assembler, ArrayDeque<byte[]> deferred) {
        for (int n = deferred.size(); n > 0; n--) {
            byte[] again = deferred.poll();
            int r = assembler.onFrame(MemorySegment.ofArray(again), 0, again.length);
            assertTrue(r > 0, () -> FrameError.name(r));
            if (r == MessageAssembler.DEFERRED) {
                deferred.add(again);
            }
        }
    }

    private static void assertUntouched(MemorySegment memory, long from, int count) {
        for (int i = 0; i < count; i++) {
            assertEquals(GUARD_BYTE, memory.get(ValueLayout.JAVA_BYTE, from + i), "guard byte at " + (from + i));
        }
    }

    private static void assertGuards(MemorySegment buffer, int length) {
        for (int i = 0; i < GUARD; i++) {
            assertEquals(GUARD_BYTE, buffer.get(ValueLayout.JAVA_BYTE, i), "guard before");
            assertEquals(GUARD_BYTE, buffer.get(ValueLayout.JAVA_BYTE, GUARD + length + i), "guard after");
        }
    }
}
