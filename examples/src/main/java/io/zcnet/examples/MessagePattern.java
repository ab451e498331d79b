package io.zcnet.examples;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The bytes a verified bulk message carries: a deterministic function of its sequence number, different
 * for every message and for every 8-byte word within one, so a message that landed in the wrong slot, at
 * the wrong offset, partly, or not at all does not pass. Word {@code k} of message {@code seq} is
 * {@code (seq + 1) * A ^ k * B} with odd constants (multiplying by an odd number is a bijection mod 2^64),
 * stored little-endian; a last partial word keeps its low bytes. Stateless; allocation-free.
 */
final class MessagePattern {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);
    private static final long A = 0x9E3779B97F4A7C15L;
    private static final long B = 0xBF58476D1CE4E5B9L;

    private MessagePattern() {
    }

    private static long word(long seq, long k) {
        return (seq + 1) * A ^ k * B;
    }

    /** Writes message {@code seq}'s {@code length} bytes at {@code offset} of {@code s}. */
    static void fill(MemorySegment s, long offset, int length, long seq) {
        long k = 0;
        for (; k + 8 <= length; k += 8) {
            s.set(WORD, offset + k, word(seq, k >>> 3));
        }
        long last = word(seq, k >>> 3);
        for (int i = 0; k + i < length; i++) {
            s.set(ValueLayout.JAVA_BYTE, offset + k + i, (byte) (last >>> (8 * i)));
        }
    }

    /** Whether the {@code length} bytes at {@code offset} of {@code s} are message {@code seq}'s. */
    static boolean matches(MemorySegment s, long offset, int length, long seq) {
        return matches(s, offset, length, seq, 0);
    }

    /**
     * Whether the {@code length} bytes at {@code offset} of {@code s} are message {@code seq}'s from its byte
     * {@code from} on (a multiple of 8): a piece read out of the middle of a longer message.
     */
    static boolean matches(MemorySegment s, long offset, int length, long seq, long from) {
        if ((from & 7) != 0) {
            throw new IllegalArgumentException("from " + from + " is not a multiple of 8");
        }
        long first = from >>> 3;
        long k = 0;
        for (; k + 8 <= length; k += 8) {
            if (s.get(WORD, offset + k) != word(seq, first + (k >>> 3))) {
                return false;
            }
        }
        long last = word(seq, first + (k >>> 3));
        for (int i = 0; k + i < length; i++) {
            if (s.get(ValueLayout.JAVA_BYTE, offset + k + i) != (byte) (last >>> (8 * i))) {
                return false;
            }
        }
        return true;
    }
}
