package io.zcnet.rx;

/**
 * How a {@link FrameReceiver} chooses between its strategies.
 *
 * @param directThreshold     a frame whose payload is at least this many bytes is placed directly: the
 *                            kernel receives its payload into the posted receive or registered region
 *                            ({@code MSG_WAITALL}), and once such a frame is seen the connection stops its
 *                            multishot receive so that following payloads are not read ahead into pool
 *                            buffers; 0 keeps the connection on the provided buffer ring for every frame
 * @param headerPeek          bytes asked for by the receive that reads the next header after a direct
 *                            payload: enough for a header and its extension, and small, because payload
 *                            bytes it reads past the header are copied instead of placed (at least
 *                            {@link #MIN_HEADER_PEEK})
 * @param smallFramesToStream frames below the threshold in a row, read one receive at a time, after which
 *                            the connection goes back to the multishot receive on the buffer ring
 */
public record ReceiverConfig(int directThreshold, int headerPeek, int smallFramesToStream) {

    /** A base header and the longest extension, with room to spare. */
    public static final int MIN_HEADER_PEEK = 64;

    /** Checks each component's range. */
    public ReceiverConfig {
        if (directThreshold < 0) {
            throw new IllegalArgumentException("directThreshold must be >= 0 (0: never), got " + directThreshold);
        }
        if (headerPeek < MIN_HEADER_PEEK || headerPeek > 1 << 20) {
            throw new IllegalArgumentException("headerPeek must be in [" + MIN_HEADER_PEEK + ", 1 MiB], got " + headerPeek);
        }
        if (smallFramesToStream < 1) {
            throw new IllegalArgumentException("smallFramesToStream must be >= 1, got " + smallFramesToStream);
        }
    }

    /**
     * {@return the defaults: payloads from 16 KiB placed directly, 128-byte header reads, back to streaming after
     * 64 small frames}
     */
    public static ReceiverConfig defaults() {
        return new ReceiverConfig(16 * 1024, 128, 64);
    }

    /** {@return the provided buffer ring only}: every payload is copied once, from a pool buffer. */
    public static ReceiverConfig bufferRingOnly() {
        return new ReceiverConfig(0, 128, 64);
    }

    /**
     * {@return this configuration with another direct-placement threshold}
     *
     * @param bytes the smallest payload placed directly; 0 for never
     */
    public ReceiverConfig withDirectThreshold(int bytes) {
        return new ReceiverConfig(bytes, headerPeek, smallFramesToStream);
    }

    /**
     * {@return this configuration with another header read size}
     *
     * @param bytes at least {@link #MIN_HEADER_PEEK}
     */
    public ReceiverConfig withHeaderPeek(int bytes) {
        return new ReceiverConfig(directThreshold, bytes, smallFramesToStream);
    }
}
