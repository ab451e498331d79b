package io.zcnet.framing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.zip.CRC32C;

import org.junit.jupiter.api.Test;

class IcrcTest {

    /** The ICRC as the wire format defines it, over a plain copy: header (masked) and extension, then the payload. */
    private static int reference(MemorySegment frame, long offset, MemorySegment payload, long payloadOffset, int length) {
        byte[] header = frame.asSlice(offset, payloadOffset - offset).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        header[0] &= (byte) ~FrameHeader.FLAG_TIMESTAMP_PRESENT;
        for (long[] field : new long[][] {{FrameHeader.ICRC_OFFSET, 4}, {FrameHeader.TIMESTAMP_OFFSET, 4},
                {FrameHeader.TIMESTAMP_ECHO_OFFSET, 4}, {FrameHeader.SUBFLOW_OFFSET, 2}}) {
            for (int i = 0; i < field[1]; i++) {
                header[(int) field[0] + i] = 0;
            }
        }
        CRC32C crc = new CRC32C();
        crc.update(header);
        crc.update(payload.asSlice(payloadOffset, length).asByteBuffer());
        return (int) crc.getValue();
    }

    @Test
    void payloadsCopiedOrViewedGiveTheSameCrcAndFramesInManyBuffersAllocateNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined()) {
            // Frames in 64 different buffers, as a receive ring hands them over: more than any view cache holds.
            MemorySegment[] buffers = new MemorySegment[64];
            int[] lengths = {0, 1, 8, 1000, Icrc.COPIED_BYTES, Icrc.COPIED_BYTES + 1, 20_000};
            for (int i = 0; i < buffers.length; i++) {
                buffers[i] = arena.allocate(FrameHeader.LENGTH + UntaggedExtension.LENGTH + 20_000);
                for (long b = 0; b < buffers[i].byteSize(); b++) {
                    buffers[i].set(java.lang.foreign.ValueLayout.JAVA_BYTE, b, (byte) (b * 31 + i));
                }
                new FrameHeader().wrap(buffers[i], 0).clear().version(FrameHeader.VERSION).opcode(Opcode.SEND_ONLY)
                        .length(lengths[i % lengths.length]).extLength(UntaggedExtension.LENGTH).timestampPresent(true)
                        .timestamp(i).subflow(i);
            }
            Icrc icrc = new Icrc();
            long payloadAt = FrameHeader.LENGTH + UntaggedExtension.LENGTH;
            for (int i = 0; i < buffers.length; i++) {
                int length = lengths[i % lengths.length];
                assertEquals(reference(buffers[i], 0, buffers[i], payloadAt, length), icrc.compute(buffers[i], 0),
                        "payload of " + length + " bytes");
            }
            for (int round = 0; round < 3; round++) { // warm-up rounds, then a measured one
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int n = 0; n < 200; n++) {
                    for (int i = 0; i < buffers.length; i++) {
                        if (lengths[i % lengths.length] <= Icrc.COPIED_BYTES) {
                            icrc.compute(buffers[i], 0);
                        }
                    }
                }
                long allocated = threads.getCurrentThreadAllocatedBytes() - before;
                if (round == 2) {
                    assertTrue(allocated < 1024, "ICRCs of small frames in 64 buffers allocated " + allocated + " bytes");
                }
            }
        }
    }
}
