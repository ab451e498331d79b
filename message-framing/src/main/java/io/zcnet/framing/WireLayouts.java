package io.zcnet.framing;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Big-endian, unaligned value layouts shared by the flyweights: frames sit at any byte position of a
 * receive stream, and wire format v1 puts every integer in network byte order.
 */
final class WireLayouts {
    static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private WireLayouts() {
    }

    /**
     * What a flyweight's {@code wrap} checks before it trusts {@code offset}: that {@code length} bytes of a
     * {@code what} fit there.
     *
     * @throws IllegalArgumentException if {@code segment} is null or the bytes do not fit
     */
    static void checkFits(MemorySegment segment, long offset, int length, String what) {
        if (segment == null || offset < 0 || offset > segment.byteSize() - length) {
            throw new IllegalArgumentException("a " + length + "-byte " + what + " does not fit at offset " + offset
                    + (segment == null ? " of a null segment" : " of a " + segment.byteSize() + "-byte segment"));
        }
    }
}
