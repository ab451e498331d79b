package io.zcnet.ring.uring;

import io.zcnet.ring.CqeFlags;
import io.zcnet.ring.sys.Cqe;
import io.zcnet.ring.sys.Zcrx;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A flyweight over one completion of a zero-copy receive ({@code IORING_OP_RECV_ZC}): a 32-byte CQE of a
 * ring set up with {@code CQE32}, whose second half is {@code struct io_uring_zcrx_cqe}
 * ({@code include/uapi/linux/io_uring.h}).
 *
 * <pre>
 *  0                               8               12              16
 * +-------------------------------+---------------+---------------+
 * |           user_data           |      res      |     flags     |  struct io_uring_cqe
 * +-------------------------------+---------------+---------------+
 * |  off: area id (63..48) | offset in the area (47..0)           |  16  struct io_uring_zcrx_cqe
 * +---------------------------------------------------------------+
 * |                            __pad                              |  24
 * +---------------------------------------------------------------+  32
 * </pre>
 *
 * A data completion has {@code res} &gt; 0 bytes at {@code area + (off & ~IORING_ZCRX_AREA_MASK)} and
 * {@code IORING_CQE_F_MORE}; the last one of a receive has no {@code F_MORE} and {@code res} 0 (end of
 * stream) or {@code -errno} ({@code -ENOSPC}: the CQ ring was full, re-arm). Nothing of a completion
 * reaches a caller before {@link #dataOffset} has checked it against the one area registered: the
 * kernel's word is trusted for which bytes it wrote, never for where user code may read.
 *
 * <p>Not thread-safe: one flyweight per ring, used by its owner thread. Allocation- and exception-free.
 */
final class ZcrxCompletion {
    /** {@link #dataOffset}: not a data completion ({@code res} &lt;= 0: end of stream or {@code -errno}). */
    static final long NO_DATA = -1;
    /** {@link #dataOffset}: the area id is not the one registered (the CQE names an area this queue lacks). */
    static final long FOREIGN_AREA = -2;
    /** {@link #dataOffset}: offset and length reach past the end of the area. */
    static final long OUTSIDE_AREA = -3;

    private static final long ZCRX_OFF = Cqe.BIG_CQE + Zcrx.CQE_OFF;

    private MemorySegment segment;
    private long base;

    /**
     * Points this flyweight at the 32-byte CQE at {@code offset} in {@code cqes}.
     *
     * @throws IndexOutOfBoundsException if the 32 bytes are not all inside {@code cqes}
     */
    ZcrxCompletion wrap(MemorySegment cqes, long offset) {
        Objects.checkFromIndexSize(offset, Cqe.SIZE_32, cqes.byteSize());
        this.segment = cqes;
        this.base = offset;
        return this;
    }

    long userData() {
        return segment.get(JAVA_LONG, base + Cqe.USER_DATA);
    }

    /** Bytes received, 0 at end of stream, or {@code -errno}. */
    int res() {
        return segment.get(JAVA_INT, base + Cqe.RES);
    }

    int flags() {
        return segment.get(JAVA_INT, base + Cqe.FLAGS);
    }

    /** Whether the receive stays armed ({@code IORING_CQE_F_MORE}); without it this is its last completion. */
    boolean more() {
        return (flags() & CqeFlags.MORE) != 0;
    }

    /** The zcrx {@code off} word as the kernel wrote it: area id in the top 16 bits, offset below. */
    long rawOffset() {
        return segment.get(JAVA_LONG, base + ZCRX_OFF);
    }

    /**
     * Where this completion's {@link #res()} bytes start in the area, checked: the area id must be
     * {@code areaToken}'s (the {@code rq_area_token} of the registration) and
     * {@code [offset, offset + res)} must lie inside {@code [0, areaSize)}.
     *
     * @return the offset in the area (&gt;= 0), or {@link #NO_DATA}, {@link #FOREIGN_AREA} or {@link #OUTSIDE_AREA}
     */
    long dataOffset(long areaToken, long areaSize) {
        int length = res();
        if (length <= 0) {
            return NO_DATA;
        }
        long off = rawOffset();
        if ((off & Zcrx.AREA_MASK) != areaToken) {
            return FOREIGN_AREA;
        }
        long offset = off & ~Zcrx.AREA_MASK;
        // written as a subtraction so that no sum can overflow past the check
        return offset <= areaSize - length ? offset : OUTSIDE_AREA;
    }

    @Override
    public String toString() {
        return segment == null ? "ZcrxCompletion[unwrapped]" : "ZcrxCompletion[user_data=" + userData()
                + " res=" + res() + " flags=0x" + Integer.toHexString(flags())
                + " off=0x" + Long.toHexString(rawOffset()) + "]";
    }
}
