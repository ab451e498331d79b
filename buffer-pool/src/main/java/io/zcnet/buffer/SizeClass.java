package io.zcnet.buffer;

/**
 * One size class of a {@link BufferPool}: {@code count} buffers of {@code bufferSize} bytes each, carved
 * from one contiguous slab.
 *
 * <p>Immutable and thread-safe. {@code bufferSize} is a power of two so that every buffer of a class is
 * aligned to its own size inside a page-aligned slab (a 4 KiB buffer is page-aligned, as
 * {@code IORING_REGISTER_BUFFERS} and zero-copy send prefer).
 *
 * @param bufferSize bytes per buffer: a power of two, at least {@value #MIN_BUFFER_SIZE}, at most 2^30
 * @param count      number of buffers in the class, at least 1
 */
public record SizeClass(int bufferSize, int count) {

    /** Smallest buffer size: one cache line, so no two buffers ever share a line. */
    public static final int MIN_BUFFER_SIZE = 64;

    /** Validates both components. */
    public SizeClass {
        if (bufferSize < MIN_BUFFER_SIZE || Integer.bitCount(bufferSize) != 1) {
            throw new IllegalArgumentException(
                    "bufferSize must be a power of two >= " + MIN_BUFFER_SIZE + ", got " + bufferSize);
        }
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, got " + count);
        }
    }

    /** {@return bytes of the slab that holds this class: {@code bufferSize * count}, computed without overflow} */
    public long slabBytes() {
        return (long) bufferSize * count;
    }
}
