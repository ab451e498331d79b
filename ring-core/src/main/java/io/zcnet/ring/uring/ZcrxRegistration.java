package io.zcnet.ring.uring;

import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Native;
import io.zcnet.ring.sys.Zcrx;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The three structures of one {@code IORING_REGISTER_ZCRX_IFQ} call, filled in and read back in place:
 * {@code io_uring_zcrx_ifq_reg} (96 bytes), pointing at an {@code io_uring_zcrx_area_reg} (48) and an
 * {@code io_uring_region_desc} (64); their byte layouts are drawn in {@link Zcrx}. The kernel writes the
 * refill ring's offsets and {@code zcrx_id} into the first and {@code rq_area_token} into the second
 * before it returns 0.
 *
 * <p>What is set and why, against the 6.18 contract ({@code io_register_zcrx_ifq}): every field the
 * caller does not set stays 0, because the kernel refuses non-zero {@code flags} (6.18), an input
 * {@code zcrx_id} or {@code rq_area_token}, and reserved words with EINVAL; the area is plain user
 * memory (no {@code IORING_ZCRX_AREA_DMABUF}); the refill region is user memory
 * ({@code IORING_MEM_REGION_TYPE_USER}), so the kernel maps nothing that zcnet would have to find.
 *
 * <p>The scratch memory comes from the caller's arena and must stay valid until {@link #register}
 * returns; the kernel keeps no pointer to it. One thread at a time.
 */
final class ZcrxRegistration {
    private final MemorySegment ifq;
    private final MemorySegment area;
    private final MemorySegment region;

    ZcrxRegistration(Arena arena) {
        this.ifq = arena.allocate(Zcrx.IFQ_REG);
        this.area = arena.allocate(Zcrx.AREA_REG);
        this.region = arena.allocate(Zcrx.REGION_DESC);
        ifq.set(JAVA_LONG, Zcrx.IFQ_AREA_PTR, area.address());
        ifq.set(JAVA_LONG, Zcrx.IFQ_REGION_PTR, region.address());
        region.set(JAVA_INT, Zcrx.REGION_FLAGS, Zcrx.MEM_REGION_TYPE_USER);
    }

    /** The network interface (its index in the registering thread's namespace) and its RX queue. */
    ZcrxRegistration queue(int interfaceIndex, int rxQueue) {
        ifq.set(JAVA_INT, Zcrx.IFQ_IF_IDX, interfaceIndex);
        ifq.set(JAVA_INT, Zcrx.IFQ_IF_RXQ, rxQueue);
        return this;
    }

    /** The user memory packets land in: page-aligned, a page multiple. */
    ZcrxRegistration area(long address, long length) {
        area.set(JAVA_LONG, Zcrx.AREA_ADDR, address);
        area.set(JAVA_LONG, Zcrx.AREA_LEN, length);
        return this;
    }

    /** The user memory of the refill ring (page-aligned, a page multiple) and its number of entries. */
    ZcrxRegistration refillRing(long address, long size, int entries) {
        region.set(JAVA_LONG, Zcrx.REGION_USER_ADDR, address);
        region.set(JAVA_LONG, Zcrx.REGION_SIZE, size);
        ifq.set(JAVA_INT, Zcrx.IFQ_RQ_ENTRIES, entries);
        return this;
    }

    /** {@code io_uring_register(ringFd, IORING_REGISTER_ZCRX_IFQ, &ifq_reg, 1)}: 0 or {@code -errno}. */
    int register(Native sys, int ringFd) {
        return sys.ioUringRegister(ringFd, IoUring.REGISTER_ZCRX_IFQ, ifq, 1);
    }

    /** The queue's id for RECV_ZC's {@code zcrx_ifq_idx}; valid after a successful {@link #register}. */
    int zcrxId() {
        return ifq.get(JAVA_INT, Zcrx.IFQ_ZCRX_ID);
    }

    /** Refill entries as the kernel recorded them (it rounds up to a power of two). */
    int refillEntries() {
        return ifq.get(JAVA_INT, Zcrx.IFQ_RQ_ENTRIES);
    }

    long headOffset() {
        return Integer.toUnsignedLong(ifq.get(JAVA_INT, Zcrx.IFQ_OFF_HEAD));
    }

    long tailOffset() {
        return Integer.toUnsignedLong(ifq.get(JAVA_INT, Zcrx.IFQ_OFF_TAIL));
    }

    long rqesOffset() {
        return Integer.toUnsignedLong(ifq.get(JAVA_INT, Zcrx.IFQ_OFF_RQES));
    }

    /** The area id shifted into place, OR'ed into every refill entry's offset. */
    long areaToken() {
        return area.get(JAVA_LONG, Zcrx.AREA_RQ_AREA_TOKEN);
    }
}
