package io.zcnet.framing;

/**
 * What the two ends of a queue pair negotiated for wire format v1; immutable, thread-safe.
 *
 * @param segmentSize   payload bytes per frame; every frame of a message but the last carries exactly
 *                      this many, at an offset that is a multiple of it (64 .. 2^24-1)
 * @param icrcEnabled   whether every frame carries an ICRC that the receiver verifies
 * @param messageWindow messages that may be in flight (sent, not yet completed in order): a power of two,
 *                      1 .. 2^15, so a 16-bit MSN tells the window from recent duplicates
 */
public record FramingConfig(int segmentSize, boolean icrcEnabled, int messageWindow) {

    /** Smallest segment size: a frame with less payload than its header is not worth its header. */
    public static final int MIN_SEGMENT_SIZE = 64;
    /** Largest message: the 24-bit message offset. */
    public static final int MAX_MESSAGE_SIZE = FrameHeader.MAX_MESSAGE_OFFSET;
    /** Largest window: half the MSN space, so "ahead" and "behind" never overlap. */
    public static final int MAX_MESSAGE_WINDOW = 1 << 15;
    /** Cap on the preallocated per-message segment bitmaps, in 64-bit words (32 MiB). */
    static final long MAX_BITMAP_WORDS = 1L << 22;

    /** Checks the parameters against the wire format's limits. */
    public FramingConfig {
        if (segmentSize < MIN_SEGMENT_SIZE || segmentSize > MAX_MESSAGE_SIZE) {
            throw new IllegalArgumentException("segmentSize " + segmentSize + " outside " + MIN_SEGMENT_SIZE
                    + ".." + MAX_MESSAGE_SIZE);
        }
        if (messageWindow < 1 || messageWindow > MAX_MESSAGE_WINDOW || Integer.bitCount(messageWindow) != 1) {
            throw new IllegalArgumentException("messageWindow " + messageWindow
                    + " must be a power of two in 1.." + MAX_MESSAGE_WINDOW);
        }
        long words = (long) messageWindow * bitmapWordsPerMessage(segmentSize);
        if (words > MAX_BITMAP_WORDS) {
            throw new IllegalArgumentException("messageWindow " + messageWindow + " with segmentSize " + segmentSize
                    + " needs " + words * 8 + " bytes of segment bitmaps, more than " + MAX_BITMAP_WORDS * 8
                    + ": use a larger segment size or a smaller window");
        }
    }

    /** {@return the defaults: segment size 64 KiB, ICRC on, 64 messages in flight} */
    public static FramingConfig defaults() {
        return new FramingConfig(64 * 1024, true, 64);
    }

    /** {@return the most segments one message can have} */
    public int maxSegmentsPerMessage() {
        return maxSegmentsPerMessage(segmentSize);
    }

    /** {@return the bytes of the largest message that is a whole number of segments}: how big operations are split. */
    public int messageChunk() {
        return MAX_MESSAGE_SIZE / segmentSize * segmentSize;
    }

    /**
     * {@return the largest window that {@code segmentSize} allows (a power of two): small segments make long segment
     * bitmaps, which the cap on their memory bounds} Negotiation clamps a window to it.
     *
     *
     * @param segmentSize a valid segment size
     * @throws IllegalArgumentException if {@code segmentSize} is out of range
     */
    public static int largestWindow(int segmentSize) {
        if (segmentSize < MIN_SEGMENT_SIZE || segmentSize > MAX_MESSAGE_SIZE) {
            throw new IllegalArgumentException("segmentSize " + segmentSize + " outside " + MIN_SEGMENT_SIZE
                    + ".." + MAX_MESSAGE_SIZE);
        }
        long fits = MAX_BITMAP_WORDS / bitmapWordsPerMessage(segmentSize);
        return (int) Math.min(MAX_MESSAGE_WINDOW, Long.highestOneBit(fits));
    }

    static int maxSegmentsPerMessage(int segmentSize) {
        return MAX_MESSAGE_SIZE / segmentSize + 1;
    }

    static int bitmapWordsPerMessage(int segmentSize) {
        return (maxSegmentsPerMessage(segmentSize) + 63) >>> 6;
    }
}
