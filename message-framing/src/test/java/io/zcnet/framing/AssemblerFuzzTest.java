package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Coverage-guided fuzzing (Jazzer) of the decoder and the placement engine: a byte stream is cut into
 * frames and fed to a {@link MessageAssembler} whose receive buffers and registered regions sit inside
 * guarded memory. Any exception, an out-of-range result or a changed guard byte is a finding.
 *
 * <p>In the normal test run ({@code JAZZER_FUZZ=0}) it replays only the regression inputs under
 * {@code src/test/resources/io/zcnet/framing/AssemblerFuzzTestInputs/decodeAndPlace/}, so the build is
 * deterministic. The {@code fuzz} Maven profile ({@code mvn -B -Pfuzz -pl message-framing -am verify}) sets
 * {@code JAZZER_FUZZ=1} and fuzzes for {@code maxDuration}; Jazzer writes each new finding into that
 * directory (keep them: they are the regression suite). For a longer run see the module README.
 */
class AssemblerFuzzTest {

    private static final int GUARD = 64;
    private static final byte GUARD_BYTE = (byte) 0x5A;

    @FuzzTest(maxDuration = "25s")
    void decodeAndPlace(FuzzedDataProvider data) {
        int segmentSize = 64 << data.consumeInt(0, 3);
        FramingConfig config = new FramingConfig(segmentSize, data.consumeBoolean(), 1 << data.consumeInt(0, 3));
        // Header first (beginPlacement, then the payload into the target, then commit) or whole frames.
        boolean direct = data.consumeBoolean();
        try (Arena arena = Arena.ofShared()) {
            MemoryRegistry registry = new MemoryRegistry();
            MemorySegment regionMemory = arena.allocate(2048 + 2 * GUARD);
            regionMemory.fill(GUARD_BYTE);
            MemoryRegion region = registry.register(regionMemory.asSlice(GUARD, 2048),
                    Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            MemorySegment receiveMemory = arena.allocate(4 * (512 + GUARD) + GUARD);
            receiveMemory.fill(GUARD_BYTE);
            MessageAssembler assembler = new MessageAssembler(config, registry, 4, new CompletionQueue(16), new FlowControl(config));
            int receiveKey = registry.register(receiveMemory, Access.LOCAL_WRITE).localKey();
            for (int i = 0; i < 4; i++) {
                assembler.postReceive(i, receiveKey, GUARD + i * (512L + GUARD), 512);
            }
            assembler.expectReadResponse(9, region.remoteKey(), 0, 1024);
            MemorySegment drainMemory = arena.allocate(segmentSize + 2 * GUARD);
            drainMemory.fill(GUARD_BYTE);
            PlacementTarget target = new PlacementTarget(drainMemory.asSlice(GUARD, segmentSize));
            // Let the fuzzer name the real keys without guessing 32 random bits.
            byte[] stream = data.consumeRemainingAsBytes();
            MemorySegment s = MemorySegment.ofArray(stream);
            for (int at = 0; at + 4 <= stream.length; at++) {
                int word = s.get(WireLayouts.U32, at);
                if (word == 0x52454D4B) { // "REMK"
                    s.set(WireLayouts.U32, at, region.remoteKey());
                } else if (word == 0x4C4F434B) { // "LOCK"
                    s.set(WireLayouts.U32, at, region.localKey());
                }
            }
            long at = 0;
            for (int frames = 0; frames < 32 && at < stream.length; frames++) {
                long length = FrameValidator.frameLength(s, at, stream.length - at);
                if (length < 0 || length > stream.length - at) {
                    length = stream.length - at;
                }
                int r = direct ? placeDirectly(assembler, target, s, at, length) : assembler.onFrame(s, at, length);
                assertTrue(r > -FrameError.COUNT && r <= MessageAssembler.DEFERRED, "result " + r);
                if (r == FrameError.TRUNCATED) {
                    break;
                }
                at += length;
            }
            for (int i = 0; i < GUARD; i++) {
                assertEquals(GUARD_BYTE, regionMemory.get(ValueLayout.JAVA_BYTE, i));
                assertEquals(GUARD_BYTE, regionMemory.get(ValueLayout.JAVA_BYTE, GUARD + 2048 + i));
            }
            for (int i = 0; i < GUARD; i++) {
                assertEquals(GUARD_BYTE, drainMemory.get(ValueLayout.JAVA_BYTE, i));
                assertEquals(GUARD_BYTE, drainMemory.get(ValueLayout.JAVA_BYTE, GUARD + segmentSize + i));
            }
            for (int b = 0; b <= 4; b++) {
                long guardStart = b * (512L + GUARD);
                for (int i = 0; i < GUARD; i++) {
                    assertEquals(GUARD_BYTE, receiveMemory.get(ValueLayout.JAVA_BYTE, guardStart + i), "guard " + b);
                }
            }
        }
    }

    /**
     * The header-first path on {@code length} bytes at {@code at}: phase 1 on the header and extension,
     * then whatever payload bytes the stream holds into the target (all of them: commit; fewer: the
     * receive failed, abort).
     */
    private static int placeDirectly(MessageAssembler assembler, PlacementTarget target, MemorySegment s, long at, long length) {
        long headerBytes = Math.min(length, FrameHeader.LENGTH + (length >= FrameHeader.LENGTH
                ? s.get(WireLayouts.U16, at + FrameHeader.EXT_LENGTH_OFFSET) & 0xFFFF : 0));
        int r = assembler.beginPlacement(s, at, headerBytes, target);
        if (r <= 0) {
            return r;
        }
        assertTrue(target.length() >= 0 && target.offset() >= 0
                && target.offset() <= target.segment().byteSize() - target.length(), "target inside its segment");
        long payloadBytes = Math.min(target.length(), length - headerBytes);
        MemorySegment.copy(s, at + headerBytes, target.segment(), target.offset(), payloadBytes);
        if (r != MessageAssembler.ACCEPTED) {
            return r;
        }
        if (payloadBytes < target.length()) {
            assembler.abort(target);
            return FrameError.TRUNCATED;
        }
        return assembler.commit(target);
    }
}
