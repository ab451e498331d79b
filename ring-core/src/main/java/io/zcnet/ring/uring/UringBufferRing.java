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
 * <p>Owner-thread only, like its loop, and checked: {@link #recycle} and {@link #close} throw
 * {@link IllegalStateException} on any other thread (the kernel's {@code SINGLE_ISSUER} would refuse the
 * unregistration, and freeing the memory regardless would hand it out while the kernel still writes it).
 * {@link #recycle} writes the entry at a private tail and
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
        int r;
        try {
            this.entries = arena.allocate(Math.max(PAGE, count * BufRingLayout.BUF_SIZE), PAGE);
            MemorySegment reg = arena.allocate(BufRingLayout.REG);
            reg.set(JAVA_LONG, BufRingLayout.REG_RING_ADDR, entries.address());
            reg.set(JAVA_INT, BufRingLayout.REG_RING_ENTRIES, count);
            reg.set(JAVA_SHORT, BufRingLayout.REG_BGID, (short) groupId);
            r = sys.ioUringRegister(ringFd, IoUring.REGISTER_PBUF_RING, reg, 1);
        } catch (RuntimeException e) {
            markClosed();
            arena.close();
            throw e;
        }
        if (r < 0) { // not registered: the kernel never saw this memory
            markClosed();
            arena.close();
            throw new ErrnoException("io_uring_register(PBUF_RING)", r, r == -Errno.EEXIST
                    ? "group " + groupId + " is already registered on this ring" : "group " + groupId);
        }
        try {
            for (int i = 0; i < count; i++) {
                put(i);
            }
            publish();
        } catch (RuntimeException e) {
            IllegalStateException leaked = release();
            if (leaked != null) {
                e.addSuppressed(leaked);
            }
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

    /** One more multishot receive takes buffers from this ring, until its final completion. */
    void armed() {
        receiveArmed();
    }

    /** A multishot receive on this ring posted its final completion. */
    void disarmed() {
        receiveDisarmed();
    }

    /**
     * Unregisters the group from the ring, then returns every buffer to the pool and frees the ring
     * memory; idempotent. Owner thread only: with {@code SINGLE_ISSUER} the kernel refuses
     * ({@code -EEXIST}) to unregister from another thread.
     *
     * @throws IllegalStateException off the owner thread or while a multishot receive is armed on the ring
     *                               (nothing changed), or when the kernel refused to unregister it (the
     *                               ring is then closed and its memory and buffers leaked on purpose)
     */
    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        checkClosable();
        IllegalStateException leaked = release();
        if (leaked != null) {
            throw leaked;
        }
    }

    /**
     * Unregisters the group; frees the memory only if the kernel confirmed (result 0), since otherwise it
     * may still read the ring and write into the buffers.
     *
     * @return null, or the reason the ring and its buffers were leaked
     */
    private IllegalStateException release() {
        MemorySegment reg = arena.allocate(BufRingLayout.REG);
        reg.set(JAVA_SHORT, BufRingLayout.REG_BGID, (short) groupId());
        int r = sys.ioUringRegister(ringFd, IoUring.UNREGISTER_PBUF_RING, reg, 1);
        loop.bufferRingClosed(this);
        if (r != 0) {
            abandon();
            return new IllegalStateException("io_uring_register(UNREGISTER_PBUF_RING) of group " + groupId()
                    + " failed: " + Errno.name(r) + "; its ring memory and " + bufferCount()
                    + " buffers are leaked on purpose, the kernel may still use them");
        }
        markClosed();
        arena.close();
        return null;
    }

    /** The loop is closing without knowing the kernel is done with this ring: leak it, touch nothing. */
    void leak() {
        abandon();
        loop.bufferRingClosed(this);
    }

    @Override
    public String toString() {
        return "UringBufferRing[" + describe() + " tail=" + tail + "]";
    }
}
