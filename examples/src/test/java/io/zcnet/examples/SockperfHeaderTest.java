package io.zcnet.examples;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The header layout pinned to sockperf 3.7's {@code MsgHeader} (packed, network byte order). */
class SockperfHeaderTest {

    @Test
    void layoutMatchesSockperf() {
        assertEquals(14, SockperfHeader.SIZE, "MsgHeader::EFFECTIVE_SIZE");
        assertEquals(0, SockperfHeader.SEQUENCE_OFFSET);
        assertEquals(8, SockperfHeader.FLAGS_OFFSET);
        assertEquals(10, SockperfHeader.LENGTH_OFFSET);
        assertEquals(9, SockperfHeader.CLIENT_BYTE_OFFSET);
        assertEquals(1, SockperfHeader.CLIENT);
        assertEquals(2, SockperfHeader.PONG_REQUEST);
        assertEquals(4, SockperfHeader.WARMUP);
    }

    @Test
    void fieldsAreBigEndian() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(SockperfHeader.SIZE + 3);
            SockperfHeader.write(s, 3, 0x0102030405060708L, 0x0A0B, 0x11223344);
            byte[] expected = {1, 2, 3, 4, 5, 6, 7, 8, 0x0A, 0x0B, 0x11, 0x22, 0x33, 0x44};
            assertArrayEquals(expected, s.asSlice(3).toArray(ValueLayout.JAVA_BYTE));
            assertEquals(0x0102030405060708L, SockperfHeader.sequence(s, 3));
            assertEquals(0x0A0B, SockperfHeader.flags(s, 3));
            assertEquals(0x11223344, SockperfHeader.length(s, 3));
        }
    }

    @Test
    void onlyClientPongRequestsWithoutWarmupAreAnswered() {
        int c = SockperfHeader.CLIENT;
        int p = SockperfHeader.PONG_REQUEST;
        int w = SockperfHeader.WARMUP;
        assertTrue(SockperfHeader.wantsReply(c | p));
        assertTrue(SockperfHeader.wantsReply(c | p | 0x100), "unknown bits do not matter");
        assertFalse(SockperfHeader.wantsReply(c));
        assertFalse(SockperfHeader.wantsReply(p), "a server's own reply is not answered");
        assertFalse(SockperfHeader.wantsReply(c | p | w), "warm-up messages are never answered");
        assertFalse(SockperfHeader.wantsReply(0));
    }

    @Test
    void markReplyClearsOnlyTheClientBit() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(SockperfHeader.SIZE);
            SockperfHeader.write(s, 0, 99, 0xFF03, 64);
            SockperfHeader.markReply(s, 0);
            assertEquals(0xFF02, SockperfHeader.flags(s, 0));
            assertEquals(99, SockperfHeader.sequence(s, 0));
            assertEquals(64, SockperfHeader.length(s, 0));
        }
    }
}
