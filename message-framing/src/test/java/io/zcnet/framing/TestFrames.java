package io.zcnet.framing;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/** Builds contiguous frames (header, extension, payload) with the real {@link Segmenter}. */
final class TestFrames {

    private TestFrames() {
    }

    /** Every frame of the segmenter's current work request, each as its own byte array, its payload gathered. */
    static List<byte[]> all(Segmenter segmenter) {
        List<byte[]> frames = new ArrayList<>();
        MemorySegment scratch = MemorySegment.ofArray(new byte[FrameHeader.LENGTH + ReadRequestExtension.LENGTH]);
        for (long i = 0; i < segmenter.frameCount(); i++) {
            int headerBytes = segmenter.writeFrame(i, scratch, 0);
            int payload = segmenter.payloadLength();
            byte[] frame = new byte[headerBytes + payload];
            MemorySegment.copy(scratch, ValueLayout.JAVA_BYTE, 0, frame, 0, headerBytes);
            SgeCursor spans = new SgeCursor();
            if (payload > 0) {
                spans.over(segmenter.sources(), segmenter.payloadPosition(), payload);
            }
            for (int at = headerBytes; spans.next(); at += (int) spans.length()) {
                MemorySegment.copy(spans.segment(), ValueLayout.JAVA_BYTE, spans.offset(), frame, at, (int) spans.length());
            }
            frames.add(frame);
        }
        return frames;
    }

    /** A native copy of {@code bytes} (payloads and regions must be off-heap for the registry). */
    static MemorySegment nativeCopy(Arena arena, byte[] bytes) {
        MemorySegment s = arena.allocate(Math.max(1, bytes.length));
        MemorySegment.copy(bytes, 0, s, ValueLayout.JAVA_BYTE, 0, bytes.length);
        return s.asSlice(0, bytes.length);
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + seed * 17 + (i >>> 8));
        }
        return b;
    }

    static MemorySegment heap(byte[] frame) {
        return MemorySegment.ofArray(frame);
    }
}
