package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct iovec} ({@code include/uapi/linux/uio.h}, 16 bytes on 64-bit): pointer
 * {@code iov_base} at 0, size_t {@code iov_len} at 8. {@code IORING_REGISTER_BUFFERS} takes an array.
 */
public final class Iovec {
    private Iovec() {
    }

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_LONG.withName("iov_base"),
            JAVA_LONG.withName("iov_len"));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long IOV_BASE = LAYOUT.byteOffset(groupElement("iov_base"));
    public static final long IOV_LEN = LAYOUT.byteOffset(groupElement("iov_len"));
}
