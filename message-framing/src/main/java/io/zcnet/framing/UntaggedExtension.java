package io.zcnet.framing;

import static io.zcnet.framing.WireLayouts.U32;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

/**
 * Flyweight over the 4-byte extension of untagged frames (SEND_FIRST .. SEND_ONLY_WITH_IMMEDIATE): the
 * <em>receive sequence number</em> (RSN) of the posted receive the message consumes, so every frame of a
 * SEND can be placed on its own, whatever arrived before it (the DDP untagged model, RFC 5041 section 4.2,
 * whose MSN counts the same thing). Big-endian.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                              rsn                              |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * <p>The RSN is the index of the receive-consuming message (every SEND, and a WRITE with immediate) among
 * all of them the queue pair direction has sent, counted from 0, mod 2^32: message {@code k} consumes the
 * {@code k}-th receive the peer posted ({@link FlowControl#nextReceiveSequence()} hands it out). Every frame
 * of one message carries the same RSN. The last frame of a WRITE with immediate carries it at the end of
 * its {@link TaggedExtension}. Not thread-safe: one instance per thread, re-pointed with {@link #wrap}.
 */
public final class UntaggedExtension {

    /** The extension's one field, big-endian. */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(U32.withName("rsn"));

    /** Extension size in bytes. */
    public static final int LENGTH = (int) LAYOUT.byteSize();
    /** Offset of {@code rsn} (u32). */
    public static final long RSN_OFFSET = LAYOUT.byteOffset(groupElement("rsn"));

    private MemorySegment segment;
    private long base;

    /** A flyweight pointing nowhere yet: {@link #wrap} it before use. */
    public UntaggedExtension() {
    }

    /**
     * Points this flyweight at {@code segment} from {@code offset}.
     *
     * @param segment the memory holding the extension
     * @param offset where the extension starts
     * @return this flyweight
     * @throws IllegalArgumentException if fewer than {@link #LENGTH} bytes remain there
     */
    public UntaggedExtension wrap(MemorySegment segment, long offset) {
        WireLayouts.checkFits(segment, offset, LENGTH, "untagged extension");
        this.segment = segment;
        this.base = offset;
        return this;
    }

    /** {@return the RSN, a 32-bit counter}: compare RSNs by their difference, never by sign. */
    public int rsn() {
        return segment.get(U32, base + RSN_OFFSET);
    }

    /**
     * Sets the RSN.
     *
     * @param rsn the receive sequence number of the receive the message consumes
     * @return this flyweight
     */
    public UntaggedExtension rsn(int rsn) {
        segment.set(U32, base + RSN_OFFSET, rsn);
        return this;
    }

    @Override
    public String toString() {
        return segment == null ? "UntaggedExtension[unwrapped]" : "UntaggedExtension[rsn=" + Integer.toUnsignedString(rsn()) + "]";
    }
}
