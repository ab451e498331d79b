package io.zcnet.tx;

/**
 * How a {@link FrameSender} batches and when it sends without copying.
 *
 * @param queueFrames        frames a sender holds (queued or in flight) before {@link FrameSender#offer}
 *                           answers {@link FrameSender#BACK_PRESSURED}; a power of two
 * @param queueBytes         header and payload bytes a sender holds before it answers back-pressure
 * @param copyThreshold      a frame whose header and payload together are at most this many bytes is
 *                           copied into the sender's staging buffer next to its neighbours; a larger
 *                           frame's payload is gathered by reference
 * @param stagingBytes       size of the staging buffer for copied frames (at least {@code copyThreshold})
 * @param zeroCopyThreshold  a batch with a payload of at least this many bytes goes out as
 *                           {@code SENDMSG_ZC} while zero copy pays off on the connection; 0 turns zero
 *                           copy off
 * @param copiedToSwitch     consecutive notifications reporting {@code ZC_COPIED} after which the
 *                           connection stops asking for zero copy (the kernel copied anyway)
 * @param reprobeEvery       large batches sent by copy after which one is sent zero-copy again, to see
 *                           whether the route changed
 */
public record SenderConfig(int queueFrames, long queueBytes, int copyThreshold, int stagingBytes,
        int zeroCopyThreshold, int copiedToSwitch, int reprobeEvery) {

    /** Checks each component's range. */
    public SenderConfig {
        if (queueFrames < 2 || queueFrames > 1 << 16 || Integer.bitCount(queueFrames) != 1) {
            throw new IllegalArgumentException("queueFrames must be a power of two in [2, 65536], got " + queueFrames);
        }
        if (queueBytes < 1) {
            throw new IllegalArgumentException("queueBytes must be >= 1, got " + queueBytes);
        }
        if (copyThreshold < 0 || stagingBytes < copyThreshold || stagingBytes < 1) {
            throw new IllegalArgumentException("need 0 <= copyThreshold <= stagingBytes and stagingBytes >= 1, got "
                    + copyThreshold + " and " + stagingBytes);
        }
        if (zeroCopyThreshold < 0 || copiedToSwitch < 1 || reprobeEvery < 1) {
            throw new IllegalArgumentException("zeroCopyThreshold >= 0, copiedToSwitch >= 1 and reprobeEvery >= 1,"
                    + " got " + zeroCopyThreshold + ", " + copiedToSwitch + ", " + reprobeEvery);
        }
    }

    /**
     * {@return the defaults}: 1024 frames or 64 MiB held; frames up to 2 KiB copied into 256 KiB of staging; zero copy
     * from 64 KiB payloads, given up after 4 copied notifications in a row, probed again every 256 large batches.
     */
    public static SenderConfig defaults() {
        return new SenderConfig(1024, 64L << 20, 2048, 256 * 1024, 64 * 1024, 4, 256);
    }

    /**
     * {@return this configuration with another staging buffer size}
     *
     * @param bytes size of the staging buffer, at least the copy threshold
     */
    public SenderConfig withStagingBytes(int bytes) {
        return new SenderConfig(queueFrames, queueBytes, copyThreshold, bytes, zeroCopyThreshold, copiedToSwitch,
                reprobeEvery);
    }

    /**
     * {@return this configuration with another zero-copy threshold}
     *
     * @param bytes the smallest payload sent zero-copy; 0 for every payload
     */
    public SenderConfig withZeroCopyThreshold(int bytes) {
        return new SenderConfig(queueFrames, queueBytes, copyThreshold, stagingBytes, bytes, copiedToSwitch,
                reprobeEvery);
    }

    /**
     * {@return this configuration with other queue bounds}
     *
     * @param frames frames held at most, a power of two from 2 to 65536
     * @param bytes bytes held at most
     */
    public SenderConfig withQueue(int frames, long bytes) {
        return new SenderConfig(frames, bytes, copyThreshold, stagingBytes, zeroCopyThreshold, copiedToSwitch,
                reprobeEvery);
    }

    /**
     * {@return this configuration with another zero-copy adaptation}
     *
     * @param copiedInARow copied notifications in a row after which large batches are copied
     * @param largeBatchesBetweenProbes large batches copied between two zero-copy probes
     */
    public SenderConfig withAdaptation(int copiedInARow, int largeBatchesBetweenProbes) {
        return new SenderConfig(queueFrames, queueBytes, copyThreshold, stagingBytes, zeroCopyThreshold,
                copiedInARow, largeBatchesBetweenProbes);
    }
}
