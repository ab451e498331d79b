package io.zcnet.rx;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * Native scratch memory that {@link FrameReceiver}s and {@link DeferredFrames} hold only while they need it:
 * a receiver's carry buffer while part of a frame is carried between receives, its drain while a payload is
 * received into it, a deferred store while it keeps a frame. A server with thousands of mostly idle queue
 * pairs then pays for the few connections in the middle of a frame, not for every connection it has.
 *
 * <p>One pool per event loop, made by whoever owns the loop. Buffers are kept in one LIFO free list per
 * size: a lease pops the list (the most recently returned buffer, likely still in cache) or, when it is
 * empty, allocates; a return pushes, or frees the buffer if {@code maxIdle} of its size are idle already.
 * Nothing allocates once the lists hold what the loop's connections use at once; sizes are few (those of
 * the loop's framing and receiver configurations), found by a scan.
 *
 * <p>Each buffer has an arena of its own, so the one freed past the bound goes at once: a confined arena, the loop
 * thread's, since a shared arena's close is a handshake that stops every thread of the JVM (thousands a second
 * when a thousand busy connections take turns past the bound).
 *
 * <p>Owner thread of the loop only, like the receivers it serves: no method synchronizes. A borrower gives
 * a buffer back only once no operation in flight can write into it; the pool cannot tell.
 */
public final class ReceiveBuffers implements AutoCloseable {

    /** One buffer, lent or idle. */
    static final class Block {
        final MemorySegment memory;
        private final Arena arena;
        private final SizeList list;
        /** The next idle buffer of the list, while this one is idle. */
        private Block next;
        private boolean lent;

        private Block(SizeList list) {
            this.list = list;
            // Confined: only the loop thread uses it, and closing a shared arena stops every thread for a handshake.
            this.arena = Arena.ofConfined();
            try {
                this.memory = arena.allocate(list.size, 64);
            } catch (OutOfMemoryError e) {
                arena.close();
                throw e;
            }
        }
    }

    /** The idle buffers of one size. */
    private static final class SizeList {
        final long size;
        Block head;
        int idle;

        SizeList(long size) {
            this.size = size;
        }
    }

    private final int maxIdle;
    private SizeList[] lists = new SizeList[4];
    private int sizes;
    private long made;
    private long leases;
    private int idle;
    private int lent;
    private long idleBytes;
    private long lentBytes;
    private boolean closed;

    /**
     * An empty pool; nothing is allocated before the first lease. What it keeps idle is at most {@code maxIdle}
     * times each size in use: with 64 KiB segments, 128-byte header reads and stores of 64 slots, a bound of 4
     * keeps at most 4 x (256 + 65,728 + 65,536) B of receiver buffers and 4 stores of 4 MiB, and only after as
     * many were in use at once.
     *
     * @param maxIdle how many idle buffers of each size are kept for the next lease (0: every return frees)
     * @throws IllegalArgumentException if {@code maxIdle} is negative
     */
    public ReceiveBuffers(int maxIdle) {
        if (maxIdle < 0) {
            throw new IllegalArgumentException("maxIdle must be >= 0, got " + maxIdle);
        }
        this.maxIdle = maxIdle;
    }

    /**
     * A buffer of exactly {@code bytes} bytes, 64-byte aligned, its contents whatever its last holder left.
     *
     * @throws IllegalStateException after {@link #close()}
     * @throws OutOfMemoryError      if a new buffer cannot be allocated
     */
    Block lease(long bytes) {
        if (closed) {
            throw new IllegalStateException("the receive buffers are closed");
        }
        SizeList list = list(bytes);
        Block block = list.head;
        if (block != null) {
            list.head = block.next;
            block.next = null;
            list.idle--;
            idle--;
            idleBytes -= bytes;
        } else {
            block = new Block(list);
            made++;
        }
        block.lent = true;
        leases++;
        lent++;
        lentBytes += bytes;
        return block;
    }

    /**
     * Takes {@code block} back: no operation may write into it any more.
     *
     * @throws IllegalStateException if it is not lent (given back twice)
     */
    void giveBack(Block block) {
        if (!block.lent) {
            throw new IllegalStateException("a buffer of " + block.list.size + " bytes given back twice");
        }
        block.lent = false;
        lent--;
        lentBytes -= block.list.size;
        SizeList list = block.list;
        if (closed || list.idle >= maxIdle) {
            block.arena.close();
            return;
        }
        block.next = list.head;
        list.head = block;
        list.idle++;
        idle++;
        idleBytes += list.size;
    }

    private SizeList list(long bytes) {
        for (int i = 0; i < sizes; i++) {
            if (lists[i].size == bytes) {
                return lists[i];
            }
        }
        if (bytes < 1) {
            throw new IllegalArgumentException("a buffer needs at least 1 byte, asked for " + bytes);
        }
        if (sizes == lists.length) {
            lists = Arrays.copyOf(lists, sizes * 2);
        }
        SizeList list = new SizeList(bytes);
        lists[sizes++] = list;
        return list;
    }

    /** {@return how many buffers were allocated so far (a lease that found none idle)} */
    public long made() {
        return made;
    }

    /** {@return how many leases there were so far: {@link #made()} of them allocated, the others reused a buffer} */
    public long leases() {
        return leases;
    }

    /** {@return how many buffers are kept idle for the next lease} */
    public int idle() {
        return idle;
    }

    /** {@return how many buffers are lent out now} */
    public int lent() {
        return lent;
    }

    /** {@return bytes of the buffers kept idle} */
    public long idleBytes() {
        return idleBytes;
    }

    /** {@return bytes of the buffers lent out now} */
    public long lentBytes() {
        return lentBytes;
    }

    /**
     * Frees the idle buffers now, and each lent one when it is given back (its holder may still be receiving
     * into it). Further leases are refused.
     */
    @Override
    public void close() {
        closed = true;
        for (int i = 0; i < sizes; i++) {
            for (Block block = lists[i].head; block != null; block = block.next) {
                block.arena.close();
            }
            lists[i].head = null;
            lists[i].idle = 0;
        }
        idle = 0;
        idleBytes = 0;
    }

    @Override
    public String toString() {
        return "ReceiveBuffers[lent " + lent + " (" + lentBytes + " bytes), idle " + idle + " (" + idleBytes
                + " bytes), made " + made + " in " + leases + " leases" + (closed ? ", closed" : "") + "]";
    }
}
