package io.zcnet.collective;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

import static io.zcnet.collective.NacaHeader.U16;
import static io.zcnet.collective.NacaHeader.U32;
import static java.lang.foreign.MemoryLayout.PathElement.groupElement;

/**
 * The 16-byte body of a NACA ACCEPT (docs/wire-format.md, section 20.3): what the aggregator granted the job,
 * the same in every rank's ACCEPT, so every rank decides alike which allreduces it may aggregate.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |         slots granted         |        reserved (zero)        |  0
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     chunk bytes granted                       |  4
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     dtypes (bit = code)       |     redops (bit = code)       |  8
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                        reserved (zero)                        | 12
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * A type or reduction is aggregated when bit {@code code} of its field is set ({@link NacaHeader#dataTypeCode},
 * {@link NacaHeader#reductionCode}). Offsets are from the start of the body. Stateless.
 */
final class NacaGrant {

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            U16.withName("slots"),
            U16.withName("reserved0"),
            U32.withName("chunk_bytes"),
            U16.withName("dtypes"),
            U16.withName("redops"),
            U32.withName("reserved1"));
    static final int LENGTH = (int) LAYOUT.byteSize();
    static final long SLOTS = LAYOUT.byteOffset(groupElement("slots"));
    static final long RESERVED0 = LAYOUT.byteOffset(groupElement("reserved0"));
    static final long CHUNK_BYTES = LAYOUT.byteOffset(groupElement("chunk_bytes"));
    static final long DTYPES = LAYOUT.byteOffset(groupElement("dtypes"));
    static final long REDOPS = LAYOUT.byteOffset(groupElement("redops"));
    static final long RESERVED1 = LAYOUT.byteOffset(groupElement("reserved1"));

    /** What was granted, as read and checked. */
    record Granted(int slots, int chunkBytes, int dataTypes, int reductions) {
        boolean takes(DataType type, ReduceOp op) {
            return (dataTypes & 1 << NacaHeader.dataTypeCode(type)) != 0
                    && (reductions & 1 << NacaHeader.reductionCode(op)) != 0;
        }
    }

    private NacaGrant() {
    }

    static void write(MemorySegment m, long body, int slots, int chunkBytes, int dataTypes, int reductions) {
        m.set(U16, body + SLOTS, (short) slots);
        m.set(U16, body + RESERVED0, (short) 0);
        m.set(U32, body + CHUNK_BYTES, chunkBytes);
        m.set(U16, body + DTYPES, (short) dataTypes);
        m.set(U16, body + REDOPS, (short) reductions);
        m.set(U32, body + RESERVED1, 0);
    }

    /**
     * Reads a grant, checking it against what was asked.
     *
     * @throws IllegalArgumentException if it grants more slots or larger chunks than asked, none, or a chunk
     *                                  that is no multiple of 64, or a reserved field is not zero
     */
    static Granted read(MemorySegment m, long body, int askedSlots, int askedChunkBytes) {
        int slots = Short.toUnsignedInt(m.get(U16, body + SLOTS));
        long chunk = Integer.toUnsignedLong(m.get(U32, body + CHUNK_BYTES));
        if (m.get(U16, body + RESERVED0) != 0 || m.get(U32, body + RESERVED1) != 0) {
            throw new IllegalArgumentException("a reserved field of the ACCEPT body is not zero");
        }
        if (slots < 1 || slots > askedSlots || chunk < 64 || chunk > askedChunkBytes || chunk % 64 != 0) {
            throw new IllegalArgumentException("the ACCEPT grants " + slots + " slots of " + chunk + " bytes where "
                    + askedSlots + " of " + askedChunkBytes + " were asked (at least one of 64, a multiple of 64)");
        }
        return new Granted(slots, (int) chunk, Short.toUnsignedInt(m.get(U16, body + DTYPES)),
                Short.toUnsignedInt(m.get(U16, body + REDOPS)));
    }
}
