package io.zcnet.ring.uring;

import io.zcnet.buffer.Buffer;
import io.zcnet.buffer.BufferPool;
import io.zcnet.ring.BufferRing;
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
 * before the tail. It does not detect a buffer recycled twice (the kernel's head is private); callers
 * recycle each buffer id once per completion that delivered it.
 */
public final class UringBufferRing implements BufferRing {
    private static final VarHandle SHORT = JAVA_SHORT.varHandle();
    private static final long PAGE = 4096;

    private final UringEventLoop loop;
    private final Native sys;
    private final int ringFd;
    private final int groupId;
    private final int count;
    private final int mask;
    private final int bufferSize;
    private final Arena arena;
    private final MemorySegment entries;
    private final Buffer[] buffers;
    private final MemorySegment[] views;
    private final MemorySegment status;
    /** Private tail; the kernel sees it as the u16 at {@link BufRingLayout#RING_TAIL}. */
    private int tail;
    private boolean closed;

    UringBufferRing(UringEventLoop loop, Native sys, int ringFd, int groupId, BufferPool pool, int count,
            int bufferSize) throws IOException {
        if (groupId < 0 || groupId > 0xFFFF) {
            throw new IllegalArgumentException("buffer group id must be in [0, 65535], got " + groupId);
        }
        if (count < 1 || count > BufRingLayout.MAX_ENTRIES || Integer.bitCount(count) != 1) {
            throw new IllegalArgumentException("buffer count must be a power of two in [1, "
                    + BufRingLayout.MAX_ENTRIES + "], got " + count);
        }
        if (pool == null) {
            throw new IllegalArgumentException("pool is null");
        }
        if (bufferSize < 1) {
            throw new IllegalArgumentException("buffer size must be >= 1, got " + bufferSize);
        }
        int sizeClass = pool.sizeClassFor(bufferSize);
        if (sizeClass < 0) {
            throw new IllegalArgumentException("no size class of the pool holds " + bufferSize + " bytes");
        }
        this.loop = loop;
        this.sys = sys;
        this.ringFd = ringFd;
        this.groupId = groupId;
        this.count = count;
        this.mask = count - 1;
        this.bufferSize = bufferSize;
        this.buffers = new Buffer[count];
        this.views = new MemorySegment[count];
        this.arena = Arena.ofShared();
        try {
            for (int i = 0; i < count; i++) {
                Buffer buffer = pool.leaseFromClass(sizeClass);
                if (buffer == null) {
                    throw new IOException("buffer pool class " + pool.bufferSize(sizeClass) + " B ran out after "
                            + i + " of " + count + " buffers for group " + groupId);
                }
                buffers[i] = buffer;
                views[i] = buffer.segment().asSlice(0, bufferSize);
            }
            long ringBytes = Math.max(PAGE, count * BufRingLayout.BUF_SIZE);
            this.entries = arena.allocate(ringBytes, PAGE);
            this.status = arena.allocate(BufRingLayout.STATUS);
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
            releaseBuffers();
            arena.close();
            throw e;
        }
    }

    private void put(int bufferId) {
        long entry = (long) (tail & mask) * BufRingLayout.BUF_SIZE;
        entries.set(JAVA_LONG, entry + BufRingLayout.BUF_ADDR, views[bufferId].address());
        entries.set(JAVA_INT, entry + BufRingLayout.BUF_LEN, bufferSize);
        entries.set(JAVA_SHORT, entry + BufRingLayout.BUF_BID, (short) bufferId);
        tail++;
    }

    private void publish() {
        SHORT.setRelease(entries, BufRingLayout.RING_TAIL, (short) tail); // release: entries before the tail
    }

    boolean belongsTo(UringEventLoop owner) {
        return loop == owner;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public int groupId() {
        return groupId;
    }

    @Override
    public int bufferCount() {
        return count;
    }

    @Override
    public int bufferSize() {
        return bufferSize;
    }

    @Override
    public MemorySegment buffer(int bufferId) {
        checkId(bufferId);
        return views[bufferId];
    }

    @Override
    public void recycle(int bufferId) {
        checkId(bufferId);
        if (closed) {
            throw new IllegalStateException("buffer ring " + groupId + " is closed");
        }
        put(bufferId);
        publish();
    }

    private void checkId(int bufferId) {
        if (bufferId < 0 || bufferId >= count) {
            throw new IllegalArgumentException("buffer id must be in [0, " + count + "), got " + bufferId);
        }
    }

    /** Asks the kernel for its head ({@code IORING_REGISTER_PBUF_STATUS}): one system call. */
    @Override
    public int available() {
        if (closed) {
            return 0;
        }
        status.fill((byte) 0);
        status.set(JAVA_INT, BufRingLayout.STATUS_BUF_GROUP, groupId);
        int r = sys.ioUringRegister(ringFd, IoUring.REGISTER_PBUF_STATUS, status, 1);
        if (r < 0) {
            throw new IllegalStateException("io_uring_register(PBUF_STATUS): " + Errno.name(r));
        }
        int head = status.get(JAVA_INT, BufRingLayout.STATUS_HEAD);
        return (tail - head) & 0xFFFF;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            MemorySegment reg = arena.allocate(BufRingLayout.REG);
            reg.set(JAVA_SHORT, BufRingLayout.REG_BGID, (short) groupId);
            sys.ioUringRegister(ringFd, IoUring.UNREGISTER_PBUF_RING, reg, 1);
        } finally {
            releaseBuffers();
            arena.close();
            loop.bufferRingClosed(this);
        }
    }

    private void releaseBuffers() {
        for (int i = 0; i < buffers.length; i++) {
            if (buffers[i] != null) {
                buffers[i].release();
                buffers[i] = null;
            }
        }
    }

    @Override
    public String toString() {
        return "UringBufferRing[group=" + groupId + " buffers=" + count + "x" + bufferSize + "B tail=" + tail
                + (closed ? " closed" : "") + "]";
    }
}
