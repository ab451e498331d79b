package io.zcnet.ring.uring;

import io.zcnet.ring.sys.Zcrx;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The refill queue of a zcrx interface queue, a flyweight over the region registered with it: user code
 * hands area buffers back to the kernel here once it is done with the bytes a completion reported, and
 * the kernel takes them when its page pool refills ({@code io_zcrx_ring_refill}).
 *
 * <pre>
 * region (page-aligned user memory, IORING_MEM_REGION_TYPE_USER)
 * +------+---   ---+------+---   ---+-------+-------+-   -+----------------+---
 * | head |   ...   | tail |   ...   | rqe 0 | rqe 1 | ... | rqe entries-1  |
 * +------+---   ---+------+---   ---+-------+-------+-   -+----------------+---
 * ^offsets.head    ^offsets.tail    ^offsets.rqes          (all three as the kernel returned them)
 *
 * io_uring_zcrx_rqe (16 bytes)
 *  0                               8               12              16
 * +-------------------------------+---------------+---------------+
 * | off: area token | area offset |      len      |  __pad (0)    |
 * +-------------------------------+---------------+---------------+
 * </pre>
 *
 * An entry's {@code off} is the offset in the area OR'ed with the registration's {@code rq_area_token}
 * (the area id in the top 16 bits), which is {@code (cqe.off & ~IORING_ZCRX_AREA_MASK) | rq_area_token};
 * {@code len} is the completion's length. The kernel reads entries from its head up to the tail.
 *
 * <h2>Threading and memory order</h2>
 * Owner thread only (the queue's). {@link #add} writes entries at a private tail; {@link #publish} makes
 * them the kernel's with one release store of the tail, so every entry's bytes are visible first. Space
 * is the kernel's head, read with acquire: entries below it have been read and may be overwritten.
 *
 * <p>Follows {@code Documentation/networking/iou-zcrx.rst} ("Returning buffers") and the refill
 * ring setup of {@code io_uring/zcrx.c}. Never exercised against a kernel on the machine it was written on
 * (no device there can register a zcrx queue); its unit test plays the kernel's part on plain memory.
 */
final class ZcrxRefillRing {
    private static final VarHandle INT = JAVA_INT.varHandle();

    private final MemorySegment region;
    private final long kHead;
    private final long kTail;
    private final long rqes;
    private final int entries;
    private final int mask;
    private final long areaToken;
    private final long areaSize;

    /** Next entry to write (private; the kernel sees it at the next {@link #publish}). */
    private int tail;
    private int publishedTail;

    /**
     * Maps the refill queue onto {@code region} at the offsets the registration returned, after checking
     * that every word the kernel and this class share lies inside the region.
     *
     * @param areaToken the registration's {@code rq_area_token} (its low 48 bits are 0)
     * @param areaSize  bytes in the registered area; {@link #add} refuses anything past it
     * @throws IllegalArgumentException if an offset falls outside the region or is misaligned, if
     *                                  {@code entries} is not a power of two, or the token has offset bits
     */
    ZcrxRefillRing(MemorySegment region, long headOffset, long tailOffset, long rqesOffset, int entries,
            long areaToken, long areaSize) {
        if (entries <= 0 || Integer.bitCount(entries) != 1) {
            throw new IllegalArgumentException("refill entries must be a power of two, got " + entries);
        }
        if ((areaToken & ~Zcrx.AREA_MASK) != 0) {
            throw new IllegalArgumentException("rq_area_token 0x" + Long.toHexString(areaToken)
                    + " has bits below bit " + Zcrx.AREA_SHIFT);
        }
        long size = region.byteSize();
        long rqesEnd = rqesOffset + (long) entries * Zcrx.RQE.byteSize();
        if (!word(headOffset, size) || !word(tailOffset, size) || headOffset == tailOffset
                || rqesOffset < 0 || rqesOffset % JAVA_LONG.byteSize() != 0 || rqesEnd > size
                || inside(headOffset, rqesOffset, rqesEnd) || inside(tailOffset, rqesOffset, rqesEnd)) {
            throw new IllegalArgumentException("refill ring offsets head=" + headOffset + " tail=" + tailOffset
                    + " rqes=" + rqesOffset + " (" + entries + " entries) do not fit a " + size + "-byte region");
        }
        this.region = region;
        this.kHead = headOffset;
        this.kTail = tailOffset;
        this.rqes = rqesOffset;
        this.entries = entries;
        this.mask = entries - 1;
        this.areaToken = areaToken;
        this.areaSize = areaSize;
        this.tail = (int) INT.getAcquire(region, kTail); // acquire: first look at a kernel-shared word
        this.publishedTail = tail;
    }

    private static boolean word(long offset, long size) {
        return offset >= 0 && offset % JAVA_INT.byteSize() == 0 && offset + JAVA_INT.byteSize() <= size;
    }

    private static boolean inside(long offset, long from, long to) {
        return offset + JAVA_INT.byteSize() > from && offset < to;
    }

    /**
     * Writes an entry returning {@code [areaOffset, areaOffset + length)} of the area to the kernel,
     * unseen until {@link #publish}.
     *
     * @return false when the queue is full (the kernel has not yet taken earlier entries): the caller keeps
     *         the buffer and tries again later, or gives it up
     * @throws IllegalArgumentException if the range is empty or not inside the area (a caller's bug: the
     *                                  ranges handed out were checked by {@link ZcrxCompletion#dataOffset})
     */
    boolean add(long areaOffset, int length) {
        if (length <= 0 || areaOffset < 0 || areaOffset > areaSize - length) {
            throw new IllegalArgumentException("[" + areaOffset + ", +" + length + ") is not inside the "
                    + areaSize + "-byte area");
        }
        // acquire: the kernel has finished reading every entry below its head, so those slots are free
        if (tail - (int) INT.getAcquire(region, kHead) >= entries) {
            return false;
        }
        long entry = rqes + (long) (tail & mask) * Zcrx.RQE.byteSize();
        region.set(JAVA_LONG, entry + Zcrx.RQE_OFF, areaOffset | areaToken);
        region.set(JAVA_INT, entry + Zcrx.RQE_LEN, length);
        region.set(JAVA_INT, entry + Zcrx.RQE_PAD, 0);
        tail++;
        return true;
    }

    /** Hands every entry written since the last call to the kernel: one release store of the tail. */
    void publish() {
        if (tail != publishedTail) {
            INT.setRelease(region, kTail, tail); // release: the entries' bytes are visible before the new tail
            publishedTail = tail;
        }
    }

    /** Entries written and not yet taken by the kernel, published or not. */
    int outstanding() {
        return tail - (int) INT.getAcquire(region, kHead); // acquire: kernel-owned head
    }

    int entries() {
        return entries;
    }

    @Override
    public String toString() {
        return "ZcrxRefillRing[entries=" + entries + " tail=" + tail + " unpublished=" + (tail - publishedTail)
                + " outstanding=" + outstanding() + "]";
    }
}
