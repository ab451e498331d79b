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

    /** The 12-byte extension's fields, big-endian, unpadded. */
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
    /** Offset of {@code rkey} (u32). */
    public static final long RKEY_OFFSET = LAYOUT.byteOffset(groupElement("rkey"));
    /** Offset of {@code region_offset} (u64). */
    public static final long REGION_OFFSET_OFFSET = LAYOUT.byteOffset(groupElement("region_offset"));
    /** Offset of {@code rsn} (u32) in the 16-byte form. */
    public static final long RSN_OFFSET = LAYOUT_WITH_RSN.byteOffset(groupElement("rsn"));

    private MemorySegment segment;
    private long base;

    /** A flyweight pointing nowhere yet: {@link #wrap} it before use. */
    public TaggedExtension() {
    }

    /**
     * Points this flyweight at {@code segment} from {@code offset}.
     *
     * @param segment the memory holding the extension
     * @param offset where the extension starts
     * @return this flyweight
     * @throws IllegalArgumentException if fewer than {@link #LENGTH} bytes remain there
     */
    public TaggedExtension wrap(MemorySegment segment, long offset) {
        WireLayouts.checkFits(segment, offset, LENGTH, "tagged extension");
        this.segment = segment;
        this.base = offset;
        return this;
    }

    /** {@return the destination region's key ({@code rkey})} */
    public int rkey() {
        return segment.get(U32, base + RKEY_OFFSET);
    }

    /**
     * Sets {@code rkey}.
     *
     * @param rkey the destination region's remote key
     * @return this flyweight
     */
    public TaggedExtension rkey(int rkey) {
        segment.set(U32, base + RKEY_OFFSET, rkey);
        return this;
    }

    /** {@return {@code region_offset}, the raw u64}: negative when its top bit is set (which no region can satisfy). */
    public long regionOffset() {
        return segment.get(U64, base + REGION_OFFSET_OFFSET);
    }

    /**
     * Sets {@code region_offset}.
     *
     * @param offset where this segment's payload goes in the region
     * @return this flyweight
     */
    public TaggedExtension regionOffset(long offset) {
        segment.set(U64, base + REGION_OFFSET_OFFSET, offset);
        return this;
    }

    /** {@return the RSN of a {@link #LENGTH_WITH_RSN}-byte extension}; the segment must hold those bytes. */
    public int rsn() {
        return segment.get(U32, base + RSN_OFFSET);
    }

    /**
     * Sets the RSN of a {@link #LENGTH_WITH_RSN}-byte extension.
     *
     * @param rsn the receive sequence number of the receive the message consumes
     * @return this flyweight
     */
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
