package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The provided-buffer ring structures of {@code include/uapi/linux/io_uring.h}.
 *
 * <p>{@code struct io_uring_buf}, one ring entry (16 bytes). The ring is an array of these; its u16
 * {@code tail} overlays {@code bufs[0].resv} (byte 14 of the ring), so the ring is exactly
 * {@code entries * 16} bytes and entry 0's {@code resv} must never be written as an entry field.
 * <pre>
 *  0                               8               12      14      16
 * +-------------------------------+---------------+-------+-------+
 * |             addr              |      len      |  bid  | resv  |
 * +-------------------------------+---------------+-------+-------+
 * </pre>
 *
 * <p>{@code struct io_uring_buf_reg}, the {@code IORING_REGISTER_PBUF_RING} argument (40 bytes):
 * <pre>
 * +-------------------------------+---------------+-------+-------+
 * |           ring_addr           | ring_entries  | bgid  | flags |  0
 * +-------------------------------+---------------+-------+-------+
 * |                     resv[3] (must be 0 on 6.18)               | 16
 * +---------------------------------------------------------------+ 40
 * </pre>
 */
public final class BufRingLayout {
    private BufRingLayout() {
    }

    public static final StructLayout BUF = MemoryLayout.structLayout(
            JAVA_LONG.withName("addr"),
            JAVA_INT.withName("len"),
            JAVA_SHORT.withName("bid"),
            JAVA_SHORT.withName("resv"));

    public static final long BUF_SIZE = BUF.byteSize();
    public static final long BUF_ADDR = BUF.byteOffset(groupElement("addr"));
    public static final long BUF_LEN = BUF.byteOffset(groupElement("len"));
    public static final long BUF_BID = BUF.byteOffset(groupElement("bid"));
    /** The ring's u16 tail: {@code bufs[0].resv}. */
    public static final long RING_TAIL = BUF.byteOffset(groupElement("resv"));

    public static final StructLayout REG = MemoryLayout.structLayout(
            JAVA_LONG.withName("ring_addr"),
            JAVA_INT.withName("ring_entries"),
            JAVA_SHORT.withName("bgid"),
            JAVA_SHORT.withName("flags"),
            MemoryLayout.sequenceLayout(3, JAVA_LONG).withName("resv"));

    public static final long REG_RING_ADDR = REG.byteOffset(groupElement("ring_addr"));
    public static final long REG_RING_ENTRIES = REG.byteOffset(groupElement("ring_entries"));
    public static final long REG_BGID = REG.byteOffset(groupElement("bgid"));
    public static final long REG_FLAGS = REG.byteOffset(groupElement("flags"));

    /** Ring entries must be a power of two below 65536 ({@code io_register_pbuf_ring}). */
    public static final int MAX_ENTRIES = 1 << 15;
}
