package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct __kernel_timespec} ({@code include/uapi/linux/time_types.h}): s64 {@code tv_sec} at 0,
 * s64 {@code tv_nsec} at 8, 16 bytes; the relative timeouts of {@code IORING_OP_TIMEOUT},
 * {@code IORING_OP_LINK_TIMEOUT} and {@code io_uring_getevents_arg.ts}.
 */
public final class Timespec {
    private Timespec() {
    }

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_LONG.withName("tv_sec"),
            JAVA_LONG.withName("tv_nsec"));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long TV_SEC = LAYOUT.byteOffset(groupElement("tv_sec"));
    public static final long TV_NSEC = LAYOUT.byteOffset(groupElement("tv_nsec"));

    private static final long NANOS_PER_SECOND = 1_000_000_000L;

    /** Writes {@code nanos} (not negative) as seconds and nanoseconds at {@code offset}. */
    public static void set(MemorySegment segment, long offset, long nanos) {
        segment.set(JAVA_LONG, offset + TV_SEC, nanos / NANOS_PER_SECOND);
        segment.set(JAVA_LONG, offset + TV_NSEC, nanos % NANOS_PER_SECOND);
    }
}
