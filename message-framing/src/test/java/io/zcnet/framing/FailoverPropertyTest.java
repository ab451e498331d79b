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
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Multipath failover against the receive side: frames striped over three subflows, each subflow with at
 * most one direct placement in flight (header in, payload receive posted), and in a random interleaving
 * the sender retransmits frames on other subflows while their first copy is still being received, and
 * subflows break in the middle of a payload receive (abort). The sender resends a copy lost with a broken
 * subflow only when no later copy of that frame went out on another one: it believes that copy covers it,
 * so a copy the receiver drops is lost for good. Every byte must still arrive, and every message complete
 * exactly once, in MSN order.
 */
class FailoverPropertyTest {

    private static final int SUBFLOWS = 3;
    private static final int GUARD = 64;
    private static final byte GUARD_BYTE = (byte) 0xA5;

    /** One copy of frame {@code frame} put on a subflow; {@code sequence} orders the sender's sends. */
    private record Copy(int frame, long sequence) {
    }

    @Property(tries = 300)
    void subflowsFailingMidPlacementLoseNoByteAndCompleteNothingTwice(
            @ForAll @IntRange(min = 64, max = 512) int segmentSize,
            @ForAll @IntRange(min = 1, max = 8) int messageCount,
            @ForAll @IntRange(min = 0, max = 60) int faults,
            @ForAll("seeds") long seed,
            @ForAll boolean icrc) {
        Random random = new Random(seed);
        FramingConfig config = new FramingConfig(segmentSize, icrc, 16);
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry();
            MemorySegment regionMemory = arena.allocate(messageCount * 3L * segmentSize + 2L * GUARD);
            regionMemory.fill(GUARD_BYTE);
            MemoryRegion region = registry.register(regionMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            CompletionQueue cq = new CompletionQueue(32);
            MessageAssembler assembler = new MessageAssembler(config, registry, 16, cq, new FlowControl(config));
            Segmenter segmenter = new Segmenter(config);

            MixedMessages mix = new MixedMessages(random, messageCount, 3 * segmentSize, region, GUARD, registry, assembler,
                    segmenter, arena, GUARD, GUARD_BYTE);
            List<byte[]> payloads = mix.payloads;
            List<Integer> kinds = mix.kinds;
            List<MemorySegment> receives = mix.receives;
            List<Long> writeOffsets = mix.writeOffsets;
            List<byte[]> frames = mix.frames;

            Sender sender = new Sender(frames.size());
            List<Integer> order = new ArrayList<>();
            for (int f = 0; f < frames.size(); f++) {
                order.add(f);
            }
            Collections.shuffle(order, random);
            for (int f : order) {
                sender.send(f, random.nextInt(SUBFLOWS));
            }
            Receiver receiver = new Receiver(assembler, frames, arena, segmentSize);

            int steps = 0;
            while (sender.hasQueued() || receiver.hasInFlight()) {
                assertTrue(++steps < 100_000, "bounded");
                int s = random.nextInt(SUBFLOWS);
                int action = random.nextInt(8);
                if (action == 0 && faults > 0) {
                    faults--;
                    // The sender resends a frame on another subflow while its earlier copies are still on the
                    // way or being received (a retransmission timeout, or a scheduler's failover).
                    Copy victim = receiver.inFlight[s] != null ? receiver.inFlight[s] : sender.queues.get(s).peek();
                    if (victim != null) {
                        sender.send(victim.frame(), otherThan(random, s));
                    }
                } else if (action == 1 && faults > 0) {
                    faults--;
                    // Subflow s breaks: the payload receive in flight fails half way, the queued copies die with
                    // the connection, and the sender resends what it believes is lost.
                    List<Copy> lost = new ArrayList<>(sender.queues.get(s));
                    sender.queues.get(s).clear();
                    Copy broken = receiver.breakSubflow(s);
                    if (broken != null) {
                        lost.add(broken);
                    }
                    for (Copy c : lost) {
                        if (sender.isLatest(c)) {
                            sender.send(c.frame(), otherThan(random, s));
                        }
                    }
                } else if (receiver.inFlight[s] != null) {
                    receiver.complete(s);
                } else if (!sender.queues.get(s).isEmpty()) {
                    receiver.arrive(s, sender.queues.get(s).poll(), random.nextInt(3) == 0);
                }
            }
            receiver.offerKept();

            assertTrue(receiver.kept.isEmpty(), "every kept frame was placed or found a duplicate");
            assertEquals(0, assembler.pendingPlacements());
            assertFalse(assembler.isInError(), assembler::toString);
            Completion c = new Completion();
            int receiveIndex = 0;
            for (int m = 0; m < messageCount; m++) {
                byte[] payload = payloads.get(m);
                if (kinds.get(m) != 1) {
                    assertTrue(cq.poll(c), "completion of message " + m + ": " + assembler);
                    assertEquals(m, c.workRequestId(), "completions in MSN order");
                    assertEquals(CompletionStatus.SUCCESS, c.status(), c.toString());
                    assertEquals(payload.length, c.byteCount());
                    assertEquals(m * 1000, c.immediate());
                    MemorySegment buffer = receives.get(receiveIndex++);
                    if (kinds.get(m) == 0) {
                        assertArrayEquals(payload, buffer.asSlice(GUARD, payload.length).toArray(ValueLayout.JAVA_BYTE),
                                "bytes of message " + m);
                    }
                    assertUntouched(buffer, 0);
                    assertUntouched(buffer, GUARD + payload.length);
                }
                if (kinds.get(m) != 0) {
                    assertArrayEquals(payload, regionMemory.asSlice(writeOffsets.get(m), payload.length).toArray(ValueLayout.JAVA_BYTE),
                            "bytes of message " + m);
                }
            }
            assertFalse(cq.poll(c), "no message completes twice");
            assertEquals(messageCount - 1, assembler.acknowledgedMsn());
            assertUntouched(regionMemory, 0);
            assertUntouched(regionMemory, mix.regionEnd);
        }
    }

    /** The sending side: one queue of copies per subflow, and which copy of each frame went out last. */
    private static final class Sender {
        final List<ArrayDeque<Copy>> queues = new ArrayList<>();
        final long[] latest;
        long sequence;

        Sender(int frames) {
            for (int s = 0; s < SUBFLOWS; s++) {
                queues.add(new ArrayDeque<>());
            }
            latest = new long[frames];
        }

        void send(int frame, int subflow) {
            Copy copy = new Copy(frame, ++sequence);
            latest[frame] = copy.sequence();
            queues.get(subflow).add(copy);
        }

        boolean isLatest(Copy copy) {
            return latest[copy.frame()] == copy.sequence();
        }

        boolean hasQueued() {
            return queues.stream().anyMatch(q -> !q.isEmpty());
        }
    }

    /**
     * The receive loop: a copy arrives whole ({@code onFrame}) or header first ({@code beginPlacement}, the
     * payload then received into the target); frames answered DEFERRED are kept and offered again after
     * every commit or abort and every accepted frame, DUPLICATE ones are forgotten.
     */
    private static final class Receiver {
        final MessageAssembler assembler;
        final List<byte[]> frames;
        final PlacementTarget[] targets = new PlacementTarget[SUBFLOWS];
        final Copy[] inFlight = new Copy[SUBFLOWS];
        final ArrayDeque<Integer> kept = new ArrayDeque<>();

        Receiver(MessageAssembler assembler, List<byte[]> frames, Arena arena, int segmentSize) {
            this.assembler = assembler;
            this.frames = frames;
            for (int s = 0; s < SUBFLOWS; s++) {
                targets[s] = new PlacementTarget(arena.allocate(segmentSize));
            }
        }

        boolean hasInFlight() {
            for (Copy c : inFlight) {
                if (c != null) {
                    return true;
                }
            }
            return false;
        }

        void arrive(int s, Copy copy, boolean whole) {
            byte[] frame = frames.get(copy.frame());
            if (whole) {
                judged(copy.frame(), assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length));
                return;
            }
            PlacementTarget t = targets[s];
            int headerBytes = headerBytes(frame);
            int r = assembler.beginPlacement(MemorySegment.ofArray(frame), 0, headerBytes, t);
            assertTrue(r > 0, () -> FrameError.name(r) + " " + assembler);
            assertEquals(frame.length - headerBytes, t.length(), "the whole payload has a place");
            if (r == MessageAssembler.ACCEPTED) {
                inFlight[s] = copy;
                return;
            }
            MemorySegment.copy(frame, headerBytes, t.segment(), ValueLayout.JAVA_BYTE, t.offset(), t.length());
            judged(copy.frame(), r);
        }

        void complete(int s) {
            byte[] frame = frames.get(inFlight[s].frame());
            PlacementTarget t = targets[s];
            MemorySegment.copy(frame, headerBytes(frame), t.segment(), ValueLayout.JAVA_BYTE, t.offset(), t.length());
            int r = assembler.commit(t);
            assertEquals(MessageAssembler.ACCEPTED, r, () -> FrameError.name(r) + " " + assembler);
            inFlight[s] = null;
            offerKept();
        }

        /** The payload receive on subflow {@code s} fails half way; returns the copy it was receiving. */
        Copy breakSubflow(int s) {
            Copy broken = inFlight[s];
            if (broken == null) {
                return null;
            }
            byte[] frame = frames.get(broken.frame());
            PlacementTarget t = targets[s];
            MemorySegment.copy(frame, headerBytes(frame), t.segment(), ValueLayout.JAVA_BYTE, t.offset(), t.length() / 2);
            assembler.abort(t);
            assertFalse(t.isPending());
            inFlight[s] = null;
            offerKept();
            return broken;
        }

        private void judged(int frame, int result) {
            assertTrue(result > 0, () -> FrameError.name(result) + " " + assembler);
            if (result == MessageAssembler.DEFERRED) {
                kept.add(frame);
            } else if (result == MessageAssembler.ACCEPTED) {
                offerKept();
            }
        }

        /** Offers the kept frames again, whole, until a pass places none of them. */
        void offerKept() {
            boolean progress = true;
            while (progress && !kept.isEmpty()) {
                progress = false;
                for (int n = kept.size(); n > 0; n--) {
                    int f = kept.poll();
                    byte[] frame = frames.get(f);
                    int r = assembler.onFrame(MemorySegment.ofArray(frame), 0, frame.length);
                    assertTrue(r > 0, () -> FrameError.name(r) + " " + assembler);
                    if (r == MessageAssembler.DEFERRED) {
                        kept.add(f);
                    } else {
                        progress |= r == MessageAssembler.ACCEPTED;
                    }
                }
            }
        }
    }

    private static int headerBytes(byte[] frame) {
        return frame.length - (int) new FrameHeader().wrap(MemorySegment.ofArray(frame), 0).length();
    }

    private static int otherThan(Random random, int subflow) {
        return (subflow + 1 + random.nextInt(SUBFLOWS - 1)) % SUBFLOWS;
    }

    private static void assertUntouched(MemorySegment memory, long from) {
        for (int i = 0; i < GUARD; i++) {
            assertEquals(GUARD_BYTE, memory.get(ValueLayout.JAVA_BYTE, from + i), "guard byte at " + (from + i));
        }
    }

    @Provide
    Arbitrary<Long> seeds() {
        return Arbitraries.longs();
    }
}
