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
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Multipath failover at the receiver: a segment whose direct placement dies with its subflow is never
 * lost when another copy of it came in meanwhile, and the work a SEND frame costs does not grow with the
 * window (that bound is {@link BoundedWorkTest}'s).
 */
class FailoverPlacementTest {
    private static final int MSS = 256;

    /**
     * One message striped over subflows that fail at random. Each segment either arrives whole (the copy
     * path) or header-first on subflow A (a direct placement), which may see copies of the same segment
     * arrive on other subflows (kept, as {@code DEFERRED} asks) and then commit or die after a torn write.
     * The caller offers kept copies again after every commit or abort. The sender retransmits only the
     * segments of which no copy survived. The message must complete exactly once, byte-exact.
     */
    @Property(tries = 300)
    void noSegmentIsLostWhenSubflowsFailMidPlacement(@ForAll @IntRange(min = 1, max = 12) int segments,
            @ForAll long seed) {
        Random random = new Random(seed);
        FramingConfig config = new FramingConfig(MSS, random.nextBoolean(), 8);
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry();
            CompletionQueue cq = new CompletionQueue(16);
            MessageAssembler assembler = new MessageAssembler(config, registry, 8, cq, new FlowControl(config));
            int size = (segments - 1) * MSS + 1 + random.nextInt(MSS);
            MemoryRegion region = registry.register(arena.allocate(size), Access.LOCAL_WRITE);
            assertTrue(assembler.postReceive(7, region.localKey(), 0, size));
            byte[] data = TestFrames.pattern(size, (int) seed);
            List<byte[]> frames = TestFrames.all(new Segmenter(config).beginSend(0, 0, MemorySegment.ofArray(data), 0, size));
            PlacementTarget target = new PlacementTarget(arena.allocate(MSS));
            PlacementTarget second = new PlacementTarget(arena.allocate(MSS));
            List<byte[]> kept = new ArrayList<>();
            boolean[] survived = new boolean[frames.size()];
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < frames.size(); i++) {
                order.add(i);
            }
            java.util.Collections.shuffle(order, random);
            for (int i : order) {
                byte[] frame = frames.get(i);
                if (random.nextInt(3) == 0) {
                    survived[i] |= offer(assembler, frame) == MessageAssembler.ACCEPTED;
                    continue;
                }
                assertEquals(MessageAssembler.ACCEPTED, begin(assembler, frame, target), "placement on A");
                int copies = random.nextInt(3);
                for (int c = 0; c < copies; c++) { // retransmissions on other subflows meanwhile
                    int r = random.nextBoolean() ? offer(assembler, frame) : begin(assembler, frame, second);
                    assertEquals(MessageAssembler.DEFERRED, r, "a copy of a segment being received is kept");
                    kept.add(frame);
                }
                if (random.nextInt(3) == 0) { // A dies mid-receive, after a torn write
                    receive(frame, target, true);
                    assembler.abort(target);
                } else {
                    receive(frame, target, false);
                    assertEquals(MessageAssembler.ACCEPTED, assembler.commit(target));
                    survived[i] = true;
                }
                for (byte[] copy : kept) { // the caller offers what it kept once the placement ended
                    int r = offer(assembler, copy);
                    assertTrue(r == MessageAssembler.ACCEPTED || r == MessageAssembler.DUPLICATE, FrameError.name(r));
                    survived[frames.indexOf(copy)] = true;
                }
                kept.clear();
            }
            for (int i = 0; i < frames.size(); i++) {
                if (!survived[i]) { // no copy survived anywhere: the sender's end-to-end retransmission
                    assertFalse(hasCompletion(cq), "completed without segment " + i);
                    assertEquals(MessageAssembler.ACCEPTED, offer(assembler, frames.get(i)));
                }
            }
            Completion c = new Completion();
            assertTrue(cq.poll(c), "the message completes");
            assertEquals(CompletionStatus.SUCCESS, c.status(), c.toString());
            assertEquals(size, c.byteCount());
            assertFalse(cq.poll(c), "exactly once");
            assertArrayEquals(data, region.segment().asSlice(0, size).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    private static int offer(MessageAssembler assembler, byte[] frame) {
        return assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
    }

    private static int begin(MessageAssembler assembler, byte[] frame, PlacementTarget target) {
        MemorySegment f = MemorySegment.ofArray(frame);
        int headerBytes = FrameHeader.LENGTH + (f.get(WireLayouts.U16, FrameHeader.EXT_LENGTH_OFFSET) & 0xFFFF);
        return assembler.beginPlacement(f, 0, headerBytes, target);
    }

    /** The kernel's receive into the target: all of the payload, or (a dying subflow) a torn prefix. */
    private static void receive(byte[] frame, PlacementTarget target, boolean torn) {
        int length = torn ? target.length() / 2 : target.length();
        MemorySegment.copy(frame, frame.length - target.length(), target.segment(), ValueLayout.JAVA_BYTE,
                target.offset(), length);
        if (torn && target.length() > length) {
            target.segment().asSlice(target.offset() + length, 1).fill((byte) ~frame[frame.length - target.length() + length]);
        }
    }

    private static boolean hasCompletion(CompletionQueue cq) {
        return !cq.isEmpty();
    }
}
