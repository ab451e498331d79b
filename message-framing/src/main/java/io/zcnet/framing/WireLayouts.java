package io.zcnet.framing;

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
}
