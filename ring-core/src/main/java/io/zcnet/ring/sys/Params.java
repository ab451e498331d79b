package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct io_uring_params} with its {@code io_sqring_offsets} and {@code io_cqring_offsets}
 * ({@code include/uapi/linux/io_uring.h}), filled in by {@code io_uring_setup(2)}.
 *
 * <pre>
 *  0               4               8               12              16
 * +---------------+---------------+---------------+---------------+
 * |  sq_entries   |  cq_entries   |     flags     | sq_thread_cpu |  0
 * +---------------+---------------+---------------+---------------+
 * | sq_thread_idle|   features    |     wq_fd     |    resv[0]    | 16
 * +---------------+---------------+---------------+---------------+
 * |    resv[1]    |    resv[2]    | sq_off (40 bytes): head, tail, |  32
 * +---------------+---------------+ ring_mask, ring_entries, flags,|
 * | dropped, array, resv1, user_addr (u64)                         |
 * +---------------+---------------+---------------+---------------+
 * | cq_off (40 bytes): head, tail, ring_mask, ring_entries,        |  80
 * | overflow, cqes, flags, resv1, user_addr (u64)                  |
 * +----------------------------------------------------------------+ 120
 * </pre>
 *
 * Offsets are derived from the layouts below and pinned against the kernel's numbers by a unit test.
 * The {@code sq_off}/{@code cq_off} values the kernel writes are offsets into the mapped rings, read
 * once at setup.
 */
public final class Params {
    private Params() {
    }

    /** {@code struct io_sqring_offsets} (40 bytes). */
    public static final StructLayout SQ_OFFSETS = MemoryLayout.structLayout(
            JAVA_INT.withName("head"),
            JAVA_INT.withName("tail"),
            JAVA_INT.withName("ring_mask"),
            JAVA_INT.withName("ring_entries"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("dropped"),
            JAVA_INT.withName("array"),
            JAVA_INT.withName("resv1"),
            JAVA_LONG.withName("user_addr"));

    /** {@code struct io_cqring_offsets} (40 bytes). */
    public static final StructLayout CQ_OFFSETS = MemoryLayout.structLayout(
            JAVA_INT.withName("head"),
            JAVA_INT.withName("tail"),
            JAVA_INT.withName("ring_mask"),
            JAVA_INT.withName("ring_entries"),
            JAVA_INT.withName("overflow"),
            JAVA_INT.withName("cqes"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("resv1"),
            JAVA_LONG.withName("user_addr"));

    /** {@code struct io_uring_params} (120 bytes). */
    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("sq_entries"),
            JAVA_INT.withName("cq_entries"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("sq_thread_cpu"),
            JAVA_INT.withName("sq_thread_idle"),
            JAVA_INT.withName("features"),
            JAVA_INT.withName("wq_fd"),
            MemoryLayout.sequenceLayout(3, JAVA_INT).withName("resv"),
            SQ_OFFSETS.withName("sq_off"),
            CQ_OFFSETS.withName("cq_off"));

    public static final long SQ_ENTRIES = offset("sq_entries");
    public static final long CQ_ENTRIES = offset("cq_entries");
    public static final long FLAGS = offset("flags");
    public static final long FEATURES = offset("features");
    public static final long WQ_FD = offset("wq_fd");

    public static final long SQ_OFF = offset("sq_off");
    public static final long SQ_OFF_HEAD = sq("head");
    public static final long SQ_OFF_TAIL = sq("tail");
    public static final long SQ_OFF_RING_MASK = sq("ring_mask");
    public static final long SQ_OFF_RING_ENTRIES = sq("ring_entries");
    public static final long SQ_OFF_FLAGS = sq("flags");
    public static final long SQ_OFF_DROPPED = sq("dropped");
    public static final long SQ_OFF_ARRAY = sq("array");
    public static final long SQ_OFF_USER_ADDR = sq("user_addr");

    public static final long CQ_OFF = offset("cq_off");
    public static final long CQ_OFF_HEAD = cq("head");
    public static final long CQ_OFF_TAIL = cq("tail");
    public static final long CQ_OFF_RING_MASK = cq("ring_mask");
    public static final long CQ_OFF_RING_ENTRIES = cq("ring_entries");
    public static final long CQ_OFF_OVERFLOW = cq("overflow");
    public static final long CQ_OFF_CQES = cq("cqes");
    public static final long CQ_OFF_FLAGS = cq("flags");
    public static final long CQ_OFF_USER_ADDR = cq("user_addr");

    private static long offset(String field) {
        return LAYOUT.byteOffset(groupElement(field));
    }

    private static long sq(String field) {
        return LAYOUT.byteOffset(groupElement("sq_off"), groupElement(field));
    }

    private static long cq(String field) {
        return LAYOUT.byteOffset(groupElement("cq_off"), groupElement(field));
    }
}
