package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct io_uring_rsrc_update} ({@code include/uapi/linux/io_uring.h}, 16 bytes): u32
 * {@code offset} at 0 (-1 lets the kernel pick a slot and write it back), u32 {@code resv} at 4, u64
 * {@code data} at 8. The argument of {@code IORING_REGISTER_RING_FDS} and its unregister twin, where
 * {@code data} is the ring fd.
 */
public final class RsrcUpdate {
    private RsrcUpdate() {
    }

    public static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("offset"),
            JAVA_INT.withName("resv"),
            JAVA_LONG.withName("data"));

    public static final long SIZE = LAYOUT.byteSize();
    public static final long OFFSET = LAYOUT.byteOffset(groupElement("offset"));
    public static final long DATA = LAYOUT.byteOffset(groupElement("data"));
    /** {@code offset} value asking the kernel to choose a free slot. */
    public static final int OFFSET_AUTO = -1;
}
