package io.zcnet.framing;

import static io.zcnet.framing.WireLayouts.U32;
import static io.zcnet.framing.WireLayouts.U64;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * Flyweight over the 28-byte extension of an RDMA_READ_REQUEST frame: the source in the responder's
 * region ({@code rkey}, {@code region_offset}, {@code length}) and the sink in the requester's region
 * ({@code sink_rkey}, {@code sink_offset}) that the READ RESPONSE frames will name in their
 * {@link TaggedExtension}. Big-endian, offsets relative to the region's start (RFC 5040 section 4.4
 * RDMA Read Request header, without the DDP parts our base header already carries).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          rkey (source)                        |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 region_offset (source, u64) ...               |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       ... region_offset                       |  8
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                            length                             | 12
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                           sink_rkey                           | 16
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     sink_offset (u64) ...                     | 20
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       ... sink_offset                         | 24
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>Not thread-safe: one instance per thread, re-pointed with {@link #wrap}.
 */
public final class ReadRequestExtension {

    /** The extension's fields, big-endian, unpadded. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U32.withName("rkey"),
            U64.withName("region_offset"),
            U32.withName("length"),
            U32.withName("sink_rkey"),
            U64.withName("sink_offset"));

    /** Extension size in bytes. */
    public static final int LENGTH = (int) LAYOUT.byteSize();
    /** Offset of {@code rkey} (u32). */
    public static final long RKEY_OFFSET = LAYOUT.byteOffset(groupElement("rkey"));
    /** Offset of {@code region_offset} (u64). */
    public static final long REGION_OFFSET_OFFSET = LAYOUT.byteOffset(groupElement("region_offset"));
    /** Offset of {@code length} (u32). */
    public static final long LENGTH_OFFSET = LAYOUT.byteOffset(groupElement("length"));
    /** Offset of {@code sink_rkey} (u32). */
    public static final long SINK_RKEY_OFFSET = LAYOUT.byteOffset(groupElement("sink_rkey"));
    /** Offset of {@code sink_offset} (u64). */
    public static final long SINK_OFFSET_OFFSET = LAYOUT.byteOffset(groupElement("sink_offset"));

    private MemorySegment segment;
    private long base;

    /** A flyweight pointing nowhere yet: {@link #wrap} it before use. */
    public ReadRequestExtension() {
    }

    /**
     * Points this flyweight at {@code segment} from {@code offset}.
     *
     * @param segment the memory holding the extension
     * @param offset where the extension starts
     * @return this flyweight
     * @throws IllegalArgumentException if fewer than {@link #LENGTH} bytes remain there
     */
    public ReadRequestExtension wrap(MemorySegment segment, long offset) {
        WireLayouts.checkFits(segment, offset, LENGTH, "read request extension");
        this.segment = segment;
        this.base = offset;
        return this;
    }

    /** {@return the responder's region key ({@code rkey})} */
    public int rkey() {
        return segment.get(U32, base + RKEY_OFFSET);
    }

    /**
     * Sets {@code rkey}.
     *
     * @param rkey the responder's region key
     * @return this flyweight
     */
    public ReadRequestExtension rkey(int rkey) {
        segment.set(U32, base + RKEY_OFFSET, rkey);
        return this;
    }

    /** {@return {@code region_offset}, the raw u64}; negative when its top bit is set. */
    public long regionOffset() {
        return segment.get(U64, base + REGION_OFFSET_OFFSET);
    }

    /**
     * Sets {@code region_offset}.
     *
     * @param offset where the read starts in the responder's region
     * @return this flyweight
     */
    public ReadRequestExtension regionOffset(long offset) {
        segment.set(U64, base + REGION_OFFSET_OFFSET, offset);
        return this;
    }

    /** {@return the bytes to read, as an unsigned 32-bit value} */
    public long readLength() {
        return segment.get(U32, base + LENGTH_OFFSET) & 0xFFFF_FFFFL;
    }

    /**
     * Sets {@code length}.
     *
     * @param length bytes to read, 0 to 2^32-1
     * @return this flyweight
     */
    public ReadRequestExtension readLength(long length) {
        if (length < 0 || length > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("read length " + length + " does not fit 32 unsigned bits");
        }
        segment.set(U32, base + LENGTH_OFFSET, (int) length);
        return this;
    }

    /** {@return the requester's sink region key ({@code sink_rkey})} */
    public int sinkRkey() {
        return segment.get(U32, base + SINK_RKEY_OFFSET);
    }

    /**
     * Sets {@code sink_rkey}.
     *
     * @param rkey the requester's sink region's remote key
     * @return this flyweight
     */
    public ReadRequestExtension sinkRkey(int rkey) {
        segment.set(U32, base + SINK_RKEY_OFFSET, rkey);
        return this;
    }

    /** {@return {@code sink_offset}, the raw u64}; negative when its top bit is set. */
    public long sinkOffset() {
        return segment.get(U64, base + SINK_OFFSET_OFFSET);
    }

    /**
     * Sets {@code sink_offset}.
     *
     * @param offset where the response lands in the sink region
     * @return this flyweight
     */
    public ReadRequestExtension sinkOffset(long offset) {
        segment.set(U64, base + SINK_OFFSET_OFFSET, offset);
        return this;
    }

    @Override
    public String toString() {
        return segment == null ? "ReadRequestExtension[unwrapped]"
                : "ReadRequestExtension[rkey=0x" + Integer.toHexString(rkey()) + " region_offset="
                + Long.toUnsignedString(regionOffset()) + " length=" + readLength() + " sink_rkey=0x"
                + Integer.toHexString(sinkRkey()) + " sink_offset=" + Long.toUnsignedString(sinkOffset()) + "]";
    }
}
