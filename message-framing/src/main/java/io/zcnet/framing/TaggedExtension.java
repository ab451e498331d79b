package io.zcnet.framing;

import static io.zcnet.framing.WireLayouts.U32;
import static io.zcnet.framing.WireLayouts.U64;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * Flyweight over the extension of tagged frames (RDMA_WRITE_*, RDMA_READ_RESPONSE_*): the destination of
 * <em>this segment's</em> payload, so every segment can be placed on its own in any order (the DDP tagged
 * model, RFC 5041 section 4.1); and on the last frame of a WRITE with immediate (RDMA_WRITE_LAST_WITH_IMMEDIATE,
 * RDMA_WRITE_ONLY_WITH_IMMEDIATE), which consumes a posted receive, the receive sequence number of that
 * receive, as every SEND frame carries it in its {@link UntaggedExtension}. Big-endian; {@code region_offset}
 * is relative to the region's start, never a virtual address.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                             rkey                              |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     region_offset (u64) ...                   |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     ... region_offset                         |  8
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          rsn (last frame of a WRITE with immediate only)      | 12
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>So the extension is {@link #LENGTH} bytes, or {@link #LENGTH_WITH_RSN} on those two opcodes
 * ({@link Opcode#extensionLength} says which). For READ responses {@code rkey} is the sink key the
 * requester named in its read request. Not thread-safe: one instance per thread, re-pointed with
 * {@link #wrap}.
 */
public final class TaggedExtension {

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U32.withName("rkey"),
            U64.withName("region_offset"));
    /** The extension of the last frame of a WRITE with immediate: {@link #LAYOUT}, then the RSN. */
    public static final StructLayout LAYOUT_WITH_RSN = MemoryLayout.structLayout(
            U32.withName("rkey"),
            U64.withName("region_offset"),
            U32.withName("rsn"));

    /** Extension size in bytes. */
    public static final int LENGTH = (int) LAYOUT.byteSize();
    /** Extension size in bytes of the last frame of a WRITE with immediate. */
    public static final int LENGTH_WITH_RSN = (int) LAYOUT_WITH_RSN.byteSize();
    public static final long RKEY_OFFSET = LAYOUT.byteOffset(groupElement("rkey"));
    public static final long REGION_OFFSET_OFFSET = LAYOUT.byteOffset(groupElement("region_offset"));
    public static final long RSN_OFFSET = LAYOUT_WITH_RSN.byteOffset(groupElement("rsn"));

    private MemorySegment segment;
    private long base;

    /**
     * Points this flyweight at {@code segment} from {@code offset}.
     *
     * @throws IllegalArgumentException if fewer than {@link #LENGTH} bytes remain there
     */
    public TaggedExtension wrap(MemorySegment segment, long offset) {
        WireLayouts.checkFits(segment, offset, LENGTH, "tagged extension");
        this.segment = segment;
        this.base = offset;
        return this;
    }

    public int rkey() {
        return segment.get(U32, base + RKEY_OFFSET);
    }

    public TaggedExtension rkey(int rkey) {
        segment.set(U32, base + RKEY_OFFSET, rkey);
        return this;
    }

    /** The raw u64; negative when its top bit is set (which no region can satisfy). */
    public long regionOffset() {
        return segment.get(U64, base + REGION_OFFSET_OFFSET);
    }

    public TaggedExtension regionOffset(long offset) {
        segment.set(U64, base + REGION_OFFSET_OFFSET, offset);
        return this;
    }

    /** The RSN of a {@link #LENGTH_WITH_RSN}-byte extension; the segment must hold those bytes. */
    public int rsn() {
        return segment.get(U32, base + RSN_OFFSET);
    }

    public TaggedExtension rsn(int rsn) {
        segment.set(U32, base + RSN_OFFSET, rsn);
        return this;
    }

    @Override
    public String toString() {
        return segment == null ? "TaggedExtension[unwrapped]"
                : "TaggedExtension[rkey=0x" + Integer.toHexString(rkey()) + " region_offset=" + Long.toUnsignedString(regionOffset()) + "]";
    }
}
