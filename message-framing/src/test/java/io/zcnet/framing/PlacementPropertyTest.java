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
            @ForAll boolean icrc) {
        Random random = new Random(seed);
        FramingConfig config = new FramingConfig(segmentSize, icrc, 16);
        try (Arena arena = Arena.ofConfined()) {
            MemoryRegistry registry = new MemoryRegistry();
            MemorySegment regionMemory = arena.allocate(messageCount * 4L * segmentSize + 1);
            MemoryRegion region = registry.register(regionMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            CompletionQueue cq = new CompletionQueue(32);
            MessageAssembler assembler = new MessageAssembler(config, registry, 16, cq, new FlowControl(config));
            Segmenter segmenter = new Segmenter(config);

            List<byte[]> payloads = new ArrayList<>();
            List<Integer> kinds = new ArrayList<>();
            List<MemorySegment> receives = new ArrayList<>();
            List<byte[]> frames = new ArrayList<>();
            long regionCursor = 0;
            List<Long> writeOffsets = new ArrayList<>();
            for (int m = 0; m < messageCount; m++) {
                int length = random.nextInt(4 * segmentSize + 1);
                byte[] payload = TestFrames.pattern(length, random.nextInt());
                payloads.add(payload);
                int kind = random.nextInt(3);
                kinds.add(kind);
                MemorySegment src = MemorySegment.ofArray(payload);
                switch (kind) {
                    case 0 -> segmenter.beginSendWithImmediate(m, src, 0, length, m * 1000);
                    case 1 -> segmenter.beginWrite(m, src, 0, length, region.remoteKey(), regionCursor);
                    default -> segmenter.beginWriteWithImmediate(m, src, 0, length, region.remoteKey(), regionCursor, m * 1000);
                }
                writeOffsets.add(regionCursor);
                if (kind != 0) {
                    regionCursor += length;
                }
                if (kind != 1) {
                    MemorySegment buffer = arena.allocate(length + 2L * GUARD);
                    buffer.fill(GUARD_BYTE);
                    receives.add(buffer);
                    assertTrue(assembler.postReceive(m, buffer.asSlice(GUARD, length)));
                }
                frames.addAll(TestFrames.all(segmenter));
            }
            List<byte[]> arrivals = new ArrayList<>(frames);
            for (int i = random.nextInt(frames.size() + 1); i > 0; i--) {
                arrivals.add(frames.get(random.nextInt(frames.size())));
            }
            Collections.shuffle(arrivals, random);

            ArrayDeque<byte[]> deferred = new ArrayDeque<>();
            for (byte[] frame : arrivals) {
                int r = assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
                assertTrue(r > 0, () -> FrameError.name(r) + " " + assembler);
                if (r == MessageAssembler.DEFERRED) {
                    deferred.add(frame);
                } else {
                    for (int n = deferred.size(); n > 0; n--) {
                        byte[] again = deferred.poll();
                        int r2 = assembler.onFrame(MemorySegment.ofArray(again), 0, again.length);
                        assertTrue(r2 > 0, () -> FrameError.name(r2));
                        if (r2 == MessageAssembler.DEFERRED) {
                            deferred.add(again);
                        }
                    }
                }
            }
            assertTrue(deferred.isEmpty(), "every deferred frame was placed once its receive was known");

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

    @Property(tries = 300)
    void garbageAndMutatedFramesNeverTouchMemoryOutsideBuffersAndRegions(
            @ForAll("seeds") long seed, @ForAll @IntRange(min = 0, max = 2) int mode) {
        Random random = new Random(seed);
        FramingConfig config = new FramingConfig(128, random.nextBoolean(), 4);
        try (Arena arena = Arena.ofConfined()) {
            MemoryRegistry registry = new MemoryRegistry();
            MemorySegment regionMemory = arena.allocate(1024 + 2 * GUARD);
            regionMemory.fill(GUARD_BYTE);
            MemoryRegion region = registry.register(regionMemory.asSlice(GUARD, 1024), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            MemorySegment receiveMemory = arena.allocate(300 + 2 * GUARD);
            receiveMemory.fill(GUARD_BYTE);
            MessageAssembler assembler = new MessageAssembler(config, registry, 4, new CompletionQueue(16), new FlowControl(config));
            assembler.postReceive(1, receiveMemory.asSlice(GUARD, 300));
            assembler.expectReadResponse(2, region.localKey(), 0, 500);
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
                        case 0 -> segmenter.beginSend(msn, src, 0, payload.length);
                        case 1 -> segmenter.beginWrite(msn, src, 0, payload.length, region.remoteKey(), random.nextInt(1200));
                        case 2 -> segmenter.beginReadResponse(msn, src, 0, payload.length, region.localKey(), random.nextInt(600));
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

    private static void assertGuards(MemorySegment buffer, int length) {
        for (int i = 0; i < GUARD; i++) {
            assertEquals(GUARD_BYTE, buffer.get(ValueLayout.JAVA_BYTE, i), "guard before");
            assertEquals(GUARD_BYTE, buffer.get(ValueLayout.JAVA_BYTE, GUARD + length + i), "guard after");
        }
    }
}
