package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * {@code struct io_uring_probe} (16-byte header) followed by {@code struct io_uring_probe_op} entries
 * (8 bytes each), the {@code IORING_REGISTER_PROBE} argument ({@code include/uapi/linux/io_uring.h}).
 * <pre>
 * header: | last_op u8 | ops_len u8 | resv u16 | resv2 u32[3] |          16 bytes
 * op:     | op u8      | resv u8    | flags u16 | resv2 u32   |           8 bytes
 * </pre>
 * An op is usable when its entry's {@code flags} has {@link IoUring#OP_SUPPORTED}.
 */
public final class Probe {
    private Probe() {
    }

    public static final StructLayout HEADER = MemoryLayout.structLayout(
            JAVA_BYTE.withName("last_op"),
            JAVA_BYTE.withName("ops_len"),
            JAVA_SHORT.withName("resv"),
            MemoryLayout.sequenceLayout(3, JAVA_INT).withName("resv2"));

    public static final StructLayout OP = MemoryLayout.structLayout(
            JAVA_BYTE.withName("op"),
            JAVA_BYTE.withName("resv"),
            JAVA_SHORT.withName("flags"),
            JAVA_INT.withName("resv2"));

    public static final long HEADER_SIZE = HEADER.byteSize();
    public static final long LAST_OP = HEADER.byteOffset(groupElement("last_op"));
    public static final long OPS_LEN = HEADER.byteOffset(groupElement("ops_len"));
    public static final long OP_SIZE = OP.byteSize();
    public static final long OP_OP = OP.byteOffset(groupElement("op"));
    public static final long OP_FLAGS = OP.byteOffset(groupElement("flags"));

    /** Entries asked for: every opcode a u8 can name. */
    public static final int MAX_OPS = 256;

    /** Bytes of a probe argument with room for {@code ops} entries. */
    public static long size(int ops) {
        return HEADER_SIZE + ops * OP_SIZE;
    }
}
