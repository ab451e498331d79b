package io.zcnet.framing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * The invariant CRC of a frame (docs/wire-format.md, section 13): CRC32C (RFC 3720 appendix B.4, as
 * {@link CRC32C} computes it) over the base header, extension and payload, with {@code icrc},
 * {@code timestamp}, {@code timestamp_echo}, {@code subflow} and the {@code timestamp_present} flag (bit 5 of
 * {@code flags}) taken as zero, so a frame may be resent on any subflow, with fresh timestamps or none, and
 * keep its ICRC. Like the InfiniBand ICRC it covers what the end points care about and leaves out what a hop
 * rewrites.
 *
 * <p>Allocation-free in steady state: the header is masked in a 32-byte scratch array, a payload piece of
 * up to {@link #COPIED_BYTES} is copied into a scratch array too (frames in a receive ring arrive in one
 * buffer of many after another, which no cache of views could hold), and a larger one is fed through
 * cached {@link ByteBuffer} views of the last few segments seen, so a receiver placing into its posted
 * buffers, or a sender gathering from a few regions, allocates nothing. Not thread-safe: one instance per
 * thread, which every segmenter and assembler of that thread may share (a loop shares one among all its queue
 * pairs: the scratch array makes an instance 4 KiB).
 */
public final class Icrc {

    /** Payload segments whose views are kept. */
    private static final int VIEWS = 4;
    /** Payload pieces up to this size are copied, not viewed: the copy costs less than a view's allocation. */
    static final int COPIED_BYTES = 4096;

    private final CRC32C crc = new CRC32C();
    private final byte[] header = new byte[FrameHeader.LENGTH + ReadRequestExtension.LENGTH];
    private final byte[] copied = new byte[COPIED_BYTES];
    private final SgeCursor cursor = new SgeCursor();
    private final MemorySegment[] viewed = new MemorySegment[VIEWS];
    private final ByteBuffer[] views = new ByteBuffer[VIEWS];
    private int nextView;

    /** A calculator with its own scratch state: one per thread. */
    public Icrc() {
    }

    /**
     * {@return the ICRC of the contiguous frame at {@code offset}: header, then {@code ext_length} extension bytes,
     * then {@code length} payload bytes}
     *
     *
     * @param frame the memory holding the frame
     * @param offset where the frame starts
     * @throws IllegalArgumentException if the frame the header describes does not fit in {@code frame}
     */
    public int compute(MemorySegment frame, long offset) {
        if (frame == null || offset < 0 || offset > frame.byteSize() - FrameHeader.LENGTH) {
            throw new IllegalArgumentException("no frame header at offset " + offset);
        }
        int ext = extLength(frame, offset);
        return compute(frame, offset, frame, offset + FrameHeader.LENGTH + ext);
    }

    /**
     * {@return the ICRC of a frame whose header and extension are at {@code headerOffset} of {@code headers} and
     * whose {@code length} payload bytes are at {@code payloadOffset} of {@code payload} (a payload
     * received straight into its destination, or sent from the user's buffer)}
     *
     *
     * @param headers the memory holding the header and extension
     * @param headerOffset where the header starts
     * @param payload the memory holding the payload
     * @param payloadOffset where the payload starts
     * @throws IllegalArgumentException if the header, extension or payload are not all there
     */
    public int compute(MemorySegment headers, long headerOffset, MemorySegment payload, long payloadOffset) {
        if (headers == null || payload == null) {
            throw new IllegalArgumentException("segment is null");
        }
        long length = startHeader(headers, headerOffset);
        if (payloadOffset < 0 || payloadOffset > payload.byteSize() - length) {
            throw new IllegalArgumentException("payload of " + length + " bytes does not fit at offset " + payloadOffset);
        }
        if (length > 0) {
            update(payload, payloadOffset, (int) length);
        }
        return (int) crc.getValue();
    }

    /**
     * {@return the ICRC of a frame whose header and extension are at {@code headerOffset} of {@code headers} and
     * whose {@code length} payload bytes are bytes {@code [position, position + length)} of the message
     * {@code payload} lays over its pieces (a frame gathered from several scatter/gather elements)}
     *
     *
     * @param headers the memory holding the header and extension
     * @param headerOffset where the header starts
     * @param payload the message's pieces
     * @param position where the frame's payload starts in the message
     * @throws IllegalArgumentException if the header or extension are not all there, or the payload lies
     *                                  outside the list
     */
    public int compute(MemorySegment headers, long headerOffset, SgeList payload, long position) {
        if (headers == null || payload == null) {
            throw new IllegalArgumentException("headers or payload is null");
        }
        long length = startHeader(headers, headerOffset);
        cursor.over(payload, position, length);
        while (cursor.next()) {
            update(cursor.segment(), cursor.offset(), (int) cursor.length());
        }
        return (int) crc.getValue();
    }

    /** Validates the header and extension, feeds them masked into the CRC, and returns the payload length. */
    private long startHeader(MemorySegment headers, long headerOffset) {
        if (headerOffset < 0 || headerOffset > headers.byteSize() - FrameHeader.LENGTH) {
            throw new IllegalArgumentException("no frame header at offset " + headerOffset);
        }
        int ext = extLength(headers, headerOffset);
        if (ext > ReadRequestExtension.LENGTH || headerOffset + FrameHeader.LENGTH + ext > headers.byteSize()) {
            throw new IllegalArgumentException("extension of " + ext + " bytes does not fit after the header");
        }
        int masked = FrameHeader.LENGTH + ext;
        MemorySegment.copy(headers, ValueLayout.JAVA_BYTE, headerOffset, header, 0, masked);
        // Whether this copy carries timestamps is the subflow's business, like the timestamps themselves.
        header[(int) FrameHeader.FLAGS_OFFSET] &= (byte) ~FrameHeader.FLAG_TIMESTAMP_PRESENT;
        mask(FrameHeader.ICRC_OFFSET, 4);
        mask(FrameHeader.TIMESTAMP_OFFSET, 4);
        mask(FrameHeader.TIMESTAMP_ECHO_OFFSET, 4);
        mask(FrameHeader.SUBFLOW_OFFSET, 2);
        crc.reset();
        crc.update(header, 0, masked);
        return headers.get(WireLayouts.U32, headerOffset + FrameHeader.LENGTH_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * {@return whether the frame's {@code icrc} field equals the ICRC of its bytes (same contract as {@link #compute})}
     *
     * @param headers the memory holding the header and extension
     * @param headerOffset where the header starts
     * @param payload the memory holding the payload
     * @param payloadOffset where the payload starts
     */
    public boolean verify(MemorySegment headers, long headerOffset, MemorySegment payload, long payloadOffset) {
        int expected = compute(headers, headerOffset, payload, payloadOffset);
        return expected == headers.get(WireLayouts.U32, headerOffset + FrameHeader.ICRC_OFFSET);
    }

    private void mask(long fieldOffset, int size) {
        for (int i = 0; i < size; i++) {
            header[(int) fieldOffset + i] = 0;
        }
    }

    private static int extLength(MemorySegment segment, long headerOffset) {
        return segment.get(WireLayouts.U16, headerOffset + FrameHeader.EXT_LENGTH_OFFSET) & 0xFFFF;
    }

    private void update(MemorySegment payload, long offset, int length) {
        if (length <= COPIED_BYTES) {
            MemorySegment.copy(payload, ValueLayout.JAVA_BYTE, offset, copied, 0, length);
            crc.update(copied, 0, length);
        } else {
            crc.update(slice(payload, offset, length));
        }
    }

    // One view per distinct payload segment, a few kept: a receiver reusing its buffers, or a sender
    // gathering from a handful of regions, hits the cache every time.
    private ByteBuffer slice(MemorySegment payload, long offset, int length) {
        if (payload.byteSize() > Integer.MAX_VALUE) {
            return payload.asSlice(offset, length).asByteBuffer();
        }
        ByteBuffer view = view(payload);
        view.limit((int) offset + length).position((int) offset);
        return view;
    }

    private ByteBuffer view(MemorySegment payload) {
        for (int i = 0; i < VIEWS; i++) {
            if (viewed[i] == payload) {
                return views[i];
            }
        }
        int i = nextView;
        nextView = (i + 1) % VIEWS;
        viewed[i] = payload;
        views[i] = payload.asByteBuffer();
        return views[i];
    }
}
