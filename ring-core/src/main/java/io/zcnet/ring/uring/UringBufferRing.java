package io.zcnet.ring.uring;

import io.zcnet.buffer.BufferPool;
import io.zcnet.ring.AbstractBufferRing;
import io.zcnet.ring.Errno;
import io.zcnet.ring.sys.BufRingLayout;
import io.zcnet.ring.sys.ErrnoException;
import io.zcnet.ring.sys.IoUring;
import io.zcnet.ring.sys.Native;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A provided-buffer ring ({@code IORING_REGISTER_PBUF_RING}, {@code io_uring_register(2)} and
 * {@code io_uring_buf_ring(7)}) in user memory: a page-aligned array of {@code io_uring_buf} entries
 * the kernel takes buffers from for {@code IOSQE_BUFFER_SELECT} receives, filled with buffers leased
 * from a {@link BufferPool}. Buffer id {@code i} is the {@code i}-th leased buffer, for the ring's life.
 *
 * <p>Owner-thread only, like its loop. {@link #recycle} writes the entry at a private tail and
 * publishes the new tail at once with a release store (one plain store on x86), so the kernel sees a
 * recycled buffer from the next receive on; the buffer's bytes and the entry are visible to the kernel
 * before the tail. The loop marks each buffer a completion hands out ({@code IORING_CQE_F_BUFFER}), so
 * a buffer recycled twice is an {@link IllegalStateException} and {@link #available()} costs no system
 * call (the kernel's head is not shared with user space; {@code IORING_REGISTER_PBUF_STATUS} would be).
 */
public final class UringBufferRing extends AbstractBufferRing {
    private static final VarHandle SHORT = JAVA_SHORT.varHandle();
    private static final long PAGE = 4096;

    private final UringEventLoop loop;
    private final Native sys;
    private final int ringFd;
    private final int mask;
    private final Arena arena;
    private final MemorySegment entries;
    /** Private tail; the kernel sees it as the u16 at {@link BufRingLayout#RING_TAIL}. */
    private int tail;

    UringBufferRing(UringEventLoop loop, Native sys, int ringFd, int groupId, BufferPool pool, int count,
            int bufferSize) throws IOException {
        super(loop, groupId, pool, count, bufferSize);
        this.loop = loop;
        this.sys = sys;
        this.ringFd = ringFd;
        this.mask = count - 1;
        this.arena = Arena.ofShared();
        try {
            this.entries = arena.allocate(Math.max(PAGE, count * BufRingLayout.BUF_SIZE), PAGE);
            MemorySegment reg = arena.allocate(BufRingLayout.REG);
            reg.set(JAVA_LONG, BufRingLayout.REG_RING_ADDR, entries.address());
            reg.set(JAVA_INT, BufRingLayout.REG_RING_ENTRIES, count);
            reg.set(JAVA_SHORT, BufRingLayout.REG_BGID, (short) groupId);
            int r = sys.ioUringRegister(ringFd, IoUring.REGISTER_PBUF_RING, reg, 1);
            if (r < 0) {
                throw new ErrnoException("io_uring_register(PBUF_RING)", r, r == -Errno.EEXIST
                        ? "group " + groupId + " is already registered on this ring" : "group " + groupId);
            }
            for (int i = 0; i < count; i++) {
                put(i);
            }
            publish();
        } catch (IOException | RuntimeException e) {
            markClosed();
            arena.close();
            throw e;
        }
    }

    private void put(int bufferId) {
        long entry = (long) (tail & mask) * BufRingLayout.BUF_SIZE;
        entries.set(JAVA_LONG, entry + BufRingLayout.BUF_ADDR, buffer(bufferId).address());
        entries.set(JAVA_INT, entry + BufRingLayout.BUF_LEN, bufferSize());
        entries.set(JAVA_SHORT, entry + BufRingLayout.BUF_BID, (short) bufferId);
        tail++;
    }

    private void publish() {
        SHORT.setRelease(entries, BufRingLayout.RING_TAIL, (short) tail); // release: entries before the tail
    }

    /** The loop saw a completion that hands {@code bufferId} of this group to the application. */
    void delivered(int bufferId) {
        handOut(bufferId);
    }

    /**
     * @throws IllegalStateException if the application does not hold the buffer (recycled twice), or the
     *                               ring is closed
     */
    @Override
    public void recycle(int bufferId) {
        takeBack(bufferId);
        put(bufferId);
        publish();
    }

    /** Unregisters the group from the ring and returns every buffer to the pool; idempotent. */
    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        try {
            MemorySegment reg = arena.allocate(BufRingLayout.REG);
            reg.set(JAVA_SHORT, BufRingLayout.REG_BGID, (short) groupId());
            sys.ioUringRegister(ringFd, IoUring.UNREGISTER_PBUF_RING, reg, 1);
        } finally {
            markClosed();
            arena.close();
            loop.bufferRingClosed(this);
        }
    }

    @Override
    public String toString() {
        return "UringBufferRing[" + describe() + " tail=" + tail + "]";
    }
}
