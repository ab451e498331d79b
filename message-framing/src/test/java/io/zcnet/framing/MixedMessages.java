package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A random mix of SEND-with-immediate, WRITE and WRITE-with-immediate messages for the property tests, cut
 * into frames: each message's payload and kind, the guarded receive posted for every receive-consuming one
 * (only the range between the guards is posted), and where each WRITE lands in the region.
 */
final class MixedMessages {
    static final int SEND_WITH_IMMEDIATE = 0;
    static final int WRITE = 1;
    static final int WRITE_WITH_IMMEDIATE = 2;

    final List<byte[]> payloads = new ArrayList<>();
    final List<Integer> kinds = new ArrayList<>();
    /** The guarded buffer of each receive-consuming message, in MSN order. */
    final List<MemorySegment> receives = new ArrayList<>();
    /** Region offset of each message (meaningful for the WRITEs). */
    final List<Long> writeOffsets = new ArrayList<>();
    final List<byte[]> frames = new ArrayList<>();
    /** The frame of its own each packed SEND would have had: a resend a sender may make of it. */
    final List<byte[]> resends = new ArrayList<>();
    /** Where the last WRITE ends in the region. */
    final long regionEnd;

    /**
     * Builds {@code messageCount} messages of up to {@code maxLength} bytes; WRITEs fill {@code region} from
     * {@code regionStart}; receives are registered and posted on {@code assembler}, {@code guard} bytes of
     * {@code guardByte} on either side. Immediates are {@code msn * 1000}.
     */
    MixedMessages(Random random, int messageCount, int maxLength, MemoryRegion region, long regionStart,
            MemoryRegistry registry, MessageAssembler assembler, Segmenter segmenter, Arena arena, int guard,
            byte guardByte) {
        this(random, messageCount, maxLength, region, regionStart, registry, assembler, segmenter, arena, guard,
                guardByte, 0);
    }

    /**
     * As above; runs of one-frame SENDs that fit {@code packLimit} payload bytes together (0: none) travel as
     * SEND_PACKED frames, as a queue pair sends them.
     */
    MixedMessages(Random random, int messageCount, int maxLength, MemoryRegion region, long regionStart,
            MemoryRegistry registry, MessageAssembler assembler, Segmenter segmenter, Arena arena, int guard,
            byte guardByte, int packLimit) {
        List<int[]> run = new ArrayList<>(); // {msn, rsn} of each SEND waiting to be packed
        int runBytes = 0;
        long regionCursor = regionStart;
        for (int m = 0; m < messageCount; m++) {
            int kind = random.nextInt(3);
            // With packing, half the SENDs are small enough for several to share a frame.
            int length = packLimit > 0 && kind == SEND_WITH_IMMEDIATE && random.nextBoolean()
                    ? random.nextInt(packLimit / 4 + 1) : random.nextInt(maxLength + 1);
            byte[] payload = TestFrames.pattern(length, random.nextInt());
            payloads.add(payload);
            kinds.add(kind);
            MemorySegment src = MemorySegment.ofArray(payload);
            int rsn = receives.size(); // receive-consuming messages before this one
            switch (kind) {
                case SEND_WITH_IMMEDIATE -> segmenter.beginSendWithImmediate(m, rsn, src, 0, length, m * 1000);
                case WRITE -> segmenter.beginWrite(m, src, 0, length, region.remoteKey(), regionCursor);
                default -> segmenter.beginWriteWithImmediate(m, rsn, src, 0, length, region.remoteKey(), regionCursor, m * 1000);
            }
            writeOffsets.add(regionCursor);
            if (kind != SEND_WITH_IMMEDIATE) {
                regionCursor += length;
            }
            if (kind != WRITE) {
                // The whole guarded buffer is registered: only the posted range may be written.
                MemorySegment buffer = arena.allocate(length + 2L * guard);
                buffer.fill(guardByte);
                receives.add(buffer);
                int lkey = registry.register(buffer, Access.LOCAL_WRITE).localKey();
                assertTrue(assembler.postReceive(m, lkey, guard, length));
            }
            List<byte[]> own = TestFrames.all(segmenter);
            int record = PackedSends.recordBytes(length, true);
            boolean packable = kind == SEND_WITH_IMMEDIATE && own.size() == 1 && record <= packLimit;
            if (!packable || runBytes + record > packLimit) {
                flush(run, segmenter);
                runBytes = 0;
            }
            if (packable) {
                run.add(new int[] {m, rsn});
                runBytes += record;
                resends.add(own.get(0));
            } else {
                frames.addAll(own);
            }
        }
        flush(run, segmenter);
        regionEnd = regionCursor;
    }

    /** The SENDs of {@code run} as one SEND_PACKED frame (one alone as its own frame); empties the run. */
    private void flush(List<int[]> run, Segmenter segmenter) {
        if (run.isEmpty()) {
            return;
        }
        int bytes = 0;
        for (int[] message : run) {
            bytes += PackedSends.recordBytes(payloads.get(message[0]).length, true);
        }
        byte[] frame = new byte[Segmenter.PACKED_HEADER_BYTES + bytes];
        MemorySegment out = MemorySegment.ofArray(frame);
        long at = Segmenter.PACKED_HEADER_BYTES;
        for (int[] message : run) {
            byte[] payload = payloads.get(message[0]);
            at = PackedSends.writeRecord(out, at, MemorySegment.ofArray(payload), 0, payload.length, true, message[0] * 1000);
        }
        segmenter.writePackedHeader(run.get(0)[0], run.get(0)[1], bytes, false, out, 0);
        frames.add(frame);
        run.clear();
    }
}
