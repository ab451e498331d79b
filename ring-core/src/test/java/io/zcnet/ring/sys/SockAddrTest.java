package io.zcnet.ring.sys;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class SockAddrTest {

    @Test
    void ipv4InNetworkOrder() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(SockAddr.MAX_SIZE);
            InetSocketAddress a = new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0x1F90);
            assertEquals(16, SockAddr.write(s, 0, a));
            byte[] expected = {2, 0, 0x1F, (byte) 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
            assertArrayEquals(expected, s.asSlice(0, 16).toArray(JAVA_BYTE));
            assertEquals(a, SockAddr.read(s, 0));
            assertEquals(Linux.AF_INET, SockAddr.family(a));
        }
    }

    @Test
    void ipv6RoundTrip() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(SockAddr.MAX_SIZE);
            InetSocketAddress a = new InetSocketAddress(InetAddress.getByName("::1"), 65535);
            assertEquals(28, SockAddr.write(s, 0, a));
            assertEquals(10, s.get(JAVA_BYTE, 0));
            assertEquals((byte) 0xFF, s.get(JAVA_BYTE, 2));
            assertEquals(1, s.get(JAVA_BYTE, 23));
            assertEquals(a, SockAddr.read(s, 0));
            assertEquals(Linux.AF_INET6, SockAddr.family(a));
        }
    }

    @Test
    void rejectsUnresolvedAddresses() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(SockAddr.MAX_SIZE);
            assertThrows(IllegalArgumentException.class,
                    () -> SockAddr.write(s, 0, InetSocketAddress.createUnresolved("example.invalid", 1)));
            assertThrows(IllegalArgumentException.class, () -> SockAddr.write(s, 0, null));
        }
    }
}
