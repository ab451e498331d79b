package io.zcnet.ring.uring;

import io.zcnet.ring.sys.Native;

import java.util.Arrays;

/**
 * The socket fds an {@link UringEventLoop} opened ({@code listen}, {@code socket}) or accepted and the
 * user has not closed through the loop: a bitset indexed by fd (fds are small and dense, so 1,024 fit
 * in 128 bytes), which grows when a larger fd shows up. Lets {@link UringEventLoop#close()} close what
 * is left, as the NIO engine closes its channels. Owner-thread only.
 */
final class OpenFds {
    private long[] words = new long[16];
    private int count;

    void add(int fd) {
        int word = fd >>> 6;
        if (word >= words.length) {
            words = Arrays.copyOf(words, Math.max(words.length * 2, word + 1));
        }
        long bit = 1L << fd;
        if ((words[word] & bit) == 0) {
            words[word] |= bit;
            count++;
        }
    }

    void remove(int fd) {
        int word = fd >>> 6;
        long bit = 1L << fd;
        if (word < words.length && (words[word] & bit) != 0) {
            words[word] &= ~bit;
            count--;
        }
    }

    boolean contains(int fd) {
        int word = fd >>> 6;
        return word < words.length && (words[word] & (1L << fd)) != 0;
    }

    int count() {
        return count;
    }

    /** Closes every fd in the set and empties it. */
    void closeAll(Native sys) {
        for (int word = 0; word < words.length; word++) {
            long bits = words[word];
            while (bits != 0) {
                sys.close((word << 6) + Long.numberOfTrailingZeros(bits));
                bits &= bits - 1;
            }
            words[word] = 0;
        }
        count = 0;
    }
}
