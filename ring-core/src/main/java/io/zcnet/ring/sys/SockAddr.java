package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * {@code struct sockaddr_in} ({@code netinet/in.h}, 16 bytes) and {@code struct sockaddr_in6}
 * ({@code linux/in6.h}, 28 bytes). The family is in host order; port and IPv4 address are in network
 * (big-endian) order, the IPv6 address is 16 bytes as written, {@code sin6_flowinfo} is network order
 * and {@code sin6_scope_id} host order.
 * <pre>
 * sockaddr_in:  | family u16 | port u16 (BE) | addr u32 (BE) | zero u8[8] |
 * sockaddr_in6: | family u16 | port u16 (BE) | flowinfo u32 | addr u8[16] | scope_id u32 |
 * </pre>
 * Writing and reading are control-path helpers; they may allocate.
 */
public final class SockAddr {
    private SockAddr() {
    }

    private static final ValueLayout.OfShort NET_SHORT = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);

    public static final StructLayout IN = MemoryLayout.structLayout(
            JAVA_SHORT.withName("sin_family"),
            NET_SHORT.withName("sin_port"),
            JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN).withName("sin_addr"),
            MemoryLayout.sequenceLayout(8, JAVA_BYTE).withName("sin_zero"));

    public static final StructLayout IN6 = MemoryLayout.structLayout(
            JAVA_SHORT.withName("sin6_family"),
            NET_SHORT.withName("sin6_port"),
            JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN).withName("sin6_flowinfo"),
            MemoryLayout.sequenceLayout(16, JAVA_BYTE).withName("sin6_addr"),
            JAVA_INT.withName("sin6_scope_id"));

    public static final long IN_SIZE = IN.byteSize();
    public static final long IN_FAMILY = IN.byteOffset(groupElement("sin_family"));
    public static final long IN_PORT = IN.byteOffset(groupElement("sin_port"));
    public static final long IN_ADDR = IN.byteOffset(groupElement("sin_addr"));

    public static final long IN6_SIZE = IN6.byteSize();
    public static final long IN6_FAMILY = IN6.byteOffset(groupElement("sin6_family"));
    public static final long IN6_PORT = IN6.byteOffset(groupElement("sin6_port"));
    public static final long IN6_FLOWINFO = IN6.byteOffset(groupElement("sin6_flowinfo"));
    public static final long IN6_ADDR = IN6.byteOffset(groupElement("sin6_addr"));
    public static final long IN6_SCOPE_ID = IN6.byteOffset(groupElement("sin6_scope_id"));

    /** Room for either family ({@code sizeof(struct sockaddr_in6)}). */
    public static final long MAX_SIZE = IN6_SIZE;

    /** The address family of {@code address}: {@link Linux#AF_INET} or {@link Linux#AF_INET6}. */
    public static int family(InetSocketAddress address) {
        return resolved(address) instanceof Inet6Address ? Linux.AF_INET6 : Linux.AF_INET;
    }

    /**
     * Writes {@code address} at {@code offset} in {@code segment} (which needs {@link #MAX_SIZE} bytes
     * there) and returns the length to pass to the kernel.
     */
    public static int write(MemorySegment segment, long offset, InetSocketAddress address) {
        InetAddress ip = resolved(address);
        int port = address.getPort();
        if (ip instanceof Inet4Address) {
            segment.asSlice(offset, IN_SIZE).fill((byte) 0);
            segment.set(JAVA_SHORT, offset + IN_FAMILY, (short) Linux.AF_INET);
            segment.set(NET_SHORT, offset + IN_PORT, (short) port);
            MemorySegment.copy(ip.getAddress(), 0, segment, JAVA_BYTE, offset + IN_ADDR, 4);
            return (int) IN_SIZE;
        }
        Inet6Address ip6 = (Inet6Address) ip;
        segment.asSlice(offset, IN6_SIZE).fill((byte) 0);
        segment.set(JAVA_SHORT, offset + IN6_FAMILY, (short) Linux.AF_INET6);
        segment.set(NET_SHORT, offset + IN6_PORT, (short) port);
        MemorySegment.copy(ip6.getAddress(), 0, segment, JAVA_BYTE, offset + IN6_ADDR, 16);
        segment.set(JAVA_INT, offset + IN6_SCOPE_ID, ip6.getScopeId());
        return (int) IN6_SIZE;
    }

    /** Reads the socket address at {@code offset} (either family). */
    public static InetSocketAddress read(MemorySegment segment, long offset) {
        int family = segment.get(JAVA_SHORT, offset + IN_FAMILY);
        try {
            if (family == Linux.AF_INET) {
                byte[] ip = segment.asSlice(offset + IN_ADDR, 4).toArray(JAVA_BYTE);
                int port = Short.toUnsignedInt(segment.get(NET_SHORT, offset + IN_PORT));
                return new InetSocketAddress(InetAddress.getByAddress(ip), port);
            }
            if (family == Linux.AF_INET6) {
                byte[] ip = segment.asSlice(offset + IN6_ADDR, 16).toArray(JAVA_BYTE);
                int port = Short.toUnsignedInt(segment.get(NET_SHORT, offset + IN6_PORT));
                int scope = segment.get(JAVA_INT, offset + IN6_SCOPE_ID);
                return new InetSocketAddress(Inet6Address.getByAddress(null, ip, scope), port);
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException("kernel returned a malformed address", e);
        }
        throw new IllegalArgumentException("unsupported address family " + family);
    }

    private static InetAddress resolved(InetSocketAddress address) {
        if (address == null) {
            throw new IllegalArgumentException("address is null");
        }
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("address is unresolved: " + address);
        }
        return address.getAddress();
    }
}
