package io.zcnet.ring.sys;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Zero-copy receive (zcrx, Linux 6.15+) structures of {@code include/uapi/linux/io_uring.h}, kept here
 * so the layouts live in one place, and the few constants of the kernel's zcrx contract
 * ({@code io_uring/zcrx.c}, {@code Documentation/networking/iou-zcrx.rst}).
 *
 * <pre>
 * io_uring_zcrx_ifq_reg (96):  if_idx u32 @0, if_rxq u32 @4, rq_entries u32 @8, flags u32 @12,
 *                              area_ptr u64 @16, region_ptr u64 @24, offsets (io_uring_zcrx_offsets,
 *                              32) @32, zcrx_id u32 @64, __resv2 u32 @68, __resv u64[3] @72
 * io_uring_zcrx_offsets (32):  head u32 @0, tail u32 @4, rqes u32 @8, __resv2 u32 @12, __resv u64[2] @16
 * io_uring_zcrx_area_reg (48): addr u64 @0, len u64 @8, rq_area_token u64 @16, flags u32 @24,
 *                              dmabuf_fd u32 @28, __resv2 u64[2] @32
 * io_uring_zcrx_rqe (16):      off u64 @0, len u32 @8, __pad u32 @12
 * io_uring_zcrx_cqe (16):      off u64 @0, __pad u64 @8   (bytes 16..31 of a 32-byte CQE)
 * io_uring_region_desc (64):   user_addr u64 @0, size u64 @8, flags u32 @16, id u32 @20,
 *                              mmap_offset u64 @24, __resv u64[4] @32
 * </pre>
 */
public final class Zcrx {
    private Zcrx() {
    }

    /** {@code IORING_ZCRX_AREA_SHIFT}: the area id sits in the top 16 bits of a CQE/RQE offset. */
    public static final int AREA_SHIFT = 48;
    /** {@code IORING_ZCRX_AREA_MASK}: the area-id bits of a CQE/RQE offset; the rest is the offset in the area. */
    public static final long AREA_MASK = ~((1L << AREA_SHIFT) - 1);
    /** {@code IO_RQ_MAX_ENTRIES} (kernel-internal): the most refill entries a queue takes without {@code SETUP_CLAMP}. */
    public static final int RQ_MAX_ENTRIES = 32768;
    /** {@code IORING_ZCRX_AREA_DMABUF}. */
    public static final int AREA_DMABUF = 1;
    /** {@code IORING_MEM_REGION_TYPE_USER}. */
    public static final int MEM_REGION_TYPE_USER = 1;

    public static final StructLayout OFFSETS = MemoryLayout.structLayout(
            JAVA_INT.withName("head"),
            JAVA_INT.withName("tail"),
            JAVA_INT.withName("rqes"),
            JAVA_INT.withName("__resv2"),
            MemoryLayout.sequenceLayout(2, JAVA_LONG).withName("__resv"));

    public static final StructLayout IFQ_REG = MemoryLayout.structLayout(
            JAVA_INT.withName("if_idx"),
            JAVA_INT.withName("if_rxq"),
            JAVA_INT.withName("rq_entries"),
            JAVA_INT.withName("flags"),
            JAVA_LONG.withName("area_ptr"),
            JAVA_LONG.withName("region_ptr"),
            OFFSETS.withName("offsets"),
            JAVA_INT.withName("zcrx_id"),
            JAVA_INT.withName("__resv2"),
            MemoryLayout.sequenceLayout(3, JAVA_LONG).withName("__resv"));

    public static final long IFQ_IF_IDX = IFQ_REG.byteOffset(groupElement("if_idx"));
    public static final long IFQ_IF_RXQ = IFQ_REG.byteOffset(groupElement("if_rxq"));
    public static final long IFQ_RQ_ENTRIES = IFQ_REG.byteOffset(groupElement("rq_entries"));
    public static final long IFQ_FLAGS = IFQ_REG.byteOffset(groupElement("flags"));
    public static final long IFQ_AREA_PTR = IFQ_REG.byteOffset(groupElement("area_ptr"));
    public static final long IFQ_REGION_PTR = IFQ_REG.byteOffset(groupElement("region_ptr"));
    public static final long IFQ_OFFSETS = IFQ_REG.byteOffset(groupElement("offsets"));
    public static final long IFQ_OFF_HEAD = IFQ_REG.byteOffset(groupElement("offsets"), groupElement("head"));
    public static final long IFQ_OFF_TAIL = IFQ_REG.byteOffset(groupElement("offsets"), groupElement("tail"));
    public static final long IFQ_OFF_RQES = IFQ_REG.byteOffset(groupElement("offsets"), groupElement("rqes"));
    public static final long IFQ_ZCRX_ID = IFQ_REG.byteOffset(groupElement("zcrx_id"));

    public static final StructLayout AREA_REG = MemoryLayout.structLayout(
            JAVA_LONG.withName("addr"),
            JAVA_LONG.withName("len"),
            JAVA_LONG.withName("rq_area_token"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("dmabuf_fd"),
            MemoryLayout.sequenceLayout(2, JAVA_LONG).withName("__resv2"));

    public static final long AREA_ADDR = AREA_REG.byteOffset(groupElement("addr"));
    public static final long AREA_LEN = AREA_REG.byteOffset(groupElement("len"));
    public static final long AREA_RQ_AREA_TOKEN = AREA_REG.byteOffset(groupElement("rq_area_token"));
    public static final long AREA_FLAGS = AREA_REG.byteOffset(groupElement("flags"));
    public static final long AREA_DMABUF_FD = AREA_REG.byteOffset(groupElement("dmabuf_fd"));

    public static final StructLayout RQE = MemoryLayout.structLayout(
            JAVA_LONG.withName("off"),
            JAVA_INT.withName("len"),
            JAVA_INT.withName("__pad"));

    public static final long RQE_OFF = RQE.byteOffset(groupElement("off"));
    public static final long RQE_LEN = RQE.byteOffset(groupElement("len"));
    public static final long RQE_PAD = RQE.byteOffset(groupElement("__pad"));

    public static final StructLayout CQE = MemoryLayout.structLayout(
            JAVA_LONG.withName("off"),
            JAVA_LONG.withName("__pad"));

    public static final long CQE_OFF = CQE.byteOffset(groupElement("off"));

    public static final StructLayout REGION_DESC = MemoryLayout.structLayout(
            JAVA_LONG.withName("user_addr"),
            JAVA_LONG.withName("size"),
            JAVA_INT.withName("flags"),
            JAVA_INT.withName("id"),
            JAVA_LONG.withName("mmap_offset"),
            MemoryLayout.sequenceLayout(4, JAVA_LONG).withName("__resv"));

    public static final long REGION_USER_ADDR = REGION_DESC.byteOffset(groupElement("user_addr"));
    public static final long REGION_SIZE = REGION_DESC.byteOffset(groupElement("size"));
    public static final long REGION_FLAGS = REGION_DESC.byteOffset(groupElement("flags"));
    public static final long REGION_ID = REGION_DESC.byteOffset(groupElement("id"));
    public static final long REGION_MMAP_OFFSET = REGION_DESC.byteOffset(groupElement("mmap_offset"));
}
