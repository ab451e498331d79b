package io.zcnet.examples;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a verified bulk message's bytes catch: another message, a changed byte, a shifted copy, a short one. */
class MessagePatternTest {

    @Test
    void aMessageMatchesOnlyItselfWhereverItLies() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(4096);
            for (int length : new int[] {1, 7, 8, 9, 1000, 4000}) {
                MessagePattern.fill(s, 3, length, 42);
                assertTrue(MessagePattern.matches(s, 3, length, 42), "length " + length);
                assertFalse(MessagePattern.matches(s, 3, length, 43), "another message, length " + length);
                assertFalse(length > 8 && MessagePattern.matches(s, 11, length - 8, 42), "shifted by a word");
                s.set(ValueLayout.JAVA_BYTE, 3 + length - 1, (byte) (s.get(ValueLayout.JAVA_BYTE, 3 + length - 1) ^ 1));
                assertFalse(MessagePattern.matches(s, 3, length, 42), "last byte flipped, length " + length);
            }
        }
    }

    @Test
    void zeroedMemoryIsNoMessage() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(64);
            for (long seq = 0; seq < 1000; seq++) {
                assertFalse(MessagePattern.matches(s, 0, 64, seq), "message " + seq);
            }
        }
    }
}
