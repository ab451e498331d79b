package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct io_uring_cqe} ({@code include/uapi/linux/io_uring.h}): 16 bytes, or 32 with
 * {@code IORING_SETUP_CQE32}, where {@code big_cqe[]} holds e.g. the zcrx completion.
 *
 * <pre>
 *  0                               8               12              16
 * +-------------------------------+---------------+---------------+
 * |           user_data           |      res      |     flags     |
 * +-------------------------------+---------------+---------------+
 * </pre>
 *
 * The ring's reader reads the fields in place; {@code flags} bits are {@link io.zcnet.ring.CqeFlags}.
 */
public final class Cqe {
    private Cqe() {
    }

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_LONG.withName("user_data"),
            JAVA_INT.withName("res"),
            JAVA_INT.withName("flags"));

    /** Size of a CQE on a ring without CQE32. */
    public static final long SIZE = LAYOUT.byteSize();
    /** Size of a CQE with CQE32: {@code big_cqe[]} adds two u64. */
    public static final long SIZE_32 = SIZE + 2 * JAVA_LONG.byteSize();

    public static final long USER_DATA = LAYOUT.byteOffset(groupElement("user_data"));
    public static final long RES = LAYOUT.byteOffset(groupElement("res"));
    public static final long FLAGS = LAYOUT.byteOffset(groupElement("flags"));
    /** Where {@code big_cqe[]} starts on a 32-byte CQE. */
    public static final long BIG_CQE = SIZE;
}
