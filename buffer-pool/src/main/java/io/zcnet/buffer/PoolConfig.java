package io.zcnet.buffer;

import java.util.List;
import java.util.Objects;

/**
 * The size classes of a {@link BufferPool}, smallest first.
 *
 * <p>Immutable and thread-safe. The limits keep a misconfigured pool from reserving the machine's memory
 * or the heap: at most {@value #MAX_TOTAL_BYTES} bytes of slabs and {@value #MAX_BUFFERS} buffers in all
 * (each buffer has one preallocated {@link Buffer} object on the heap).
 *
 * @param classes size classes in strictly ascending order of {@link SizeClass#bufferSize()}, at least one
 */
public record PoolConfig(List<SizeClass> classes) {

    /** Upper bound of the sum of all slabs: 8 GiB. */
    public static final long MAX_TOTAL_BYTES = 8L << 30;

    /** Upper bound of the number of buffers over all classes. */
    public static final int MAX_BUFFERS = 1 << 20;

    /** Copies the list and validates order and totals. */
    public PoolConfig {
        Objects.requireNonNull(classes, "classes");
        classes = List.copyOf(classes); // rejects null elements with NullPointerException
        if (classes.isEmpty()) {
            throw new IllegalArgumentException("a pool needs at least one size class");
        }
        long totalBytes = 0;
        long totalBuffers = 0;
        for (int i = 0; i < classes.size(); i++) {
            SizeClass c = classes.get(i);
            if (i > 0 && c.bufferSize() <= classes.get(i - 1).bufferSize()) {
                throw new IllegalArgumentException("size classes must be in strictly ascending order of bufferSize:"
                        + " class " + i + " (" + c.bufferSize() + " bytes) follows "
                        + classes.get(i - 1).bufferSize() + " bytes");
            }
            totalBytes += c.slabBytes(); // at most 2^30 * 2^31 per class and < 32 classes: no overflow
            totalBuffers += c.count();
        }
        if (totalBytes > MAX_TOTAL_BYTES) {
            throw new IllegalArgumentException("pool too large: " + totalBytes + " bytes of slabs requested, the limit is "
                    + MAX_TOTAL_BYTES + " (8 GiB)");
        }
        if (totalBuffers > MAX_BUFFERS) {
            throw new IllegalArgumentException("too many buffers: " + totalBuffers + " requested, the limit is "
                    + MAX_BUFFERS + "; use fewer, larger buffers");
        }
    }

    /** {@return 4 KiB x 1024, 64 KiB x 256 and 1 MiB x 32: 52 MiB in all} */
    public static PoolConfig defaults() {
        return of(new SizeClass(4 << 10, 1024), new SizeClass(64 << 10, 256), new SizeClass(1 << 20, 32));
    }

    /**
     * {@return a config of the given classes, smallest first}
     *
     * @param classes the size classes, smallest buffer size first
     */
    public static PoolConfig of(SizeClass... classes) {
        Objects.requireNonNull(classes, "classes");
        return new PoolConfig(List.of(classes));
    }

    /** {@return the sum of all slab sizes in bytes} */
    public long totalBytes() {
        long total = 0;
        for (SizeClass c : classes) {
            total += c.slabBytes();
        }
        return total;
    }

    /** {@return the number of buffers over all classes} */
    public int totalBuffers() {
        int total = 0;
        for (SizeClass c : classes) {
            total += c.count();
        }
        return total;
    }
}
