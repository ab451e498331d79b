package io.zcnet.ring;

import io.zcnet.ring.sys.Iovec;
import io.zcnet.ring.sys.Linux;
import io.zcnet.ring.sys.MsgHdr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The pieces of one gathered send ({@link EventLoop#sendMessage}, {@link EventLoop#sendMessageZeroCopy}):
 * a {@code struct msghdr} and its {@code iovec} array in off-heap memory, filled by {@link #add} and sent
 * in order as one byte stream, with no copy in user space. It is the operation's context beyond the SQE:
 * the kernel reads it while the operation runs, so it must stay unchanged until the operation's final
 * completion. Made once ({@link #allocate}), reused for every send after {@link #clear()}: nothing
 * allocates per send.
 *
 * <p>Memory layout (one segment from the caller's arena):
 * <pre>
 *  0                    56                  56 + 16 * capacity
 * +--------------------+-------------------+
 * | struct msghdr      | struct iovec[cap] |   msg_iov -> the array, msg_iovlen = count()
 * +--------------------+-------------------+
 * </pre>
 * Owner thread of the loop it is sent on; not thread-safe.
 */
public final class GatherList {
    private final MemorySegment memory;
    private final MemorySegment[] buffers;
    private final long[] offsets;
    private final long[] lengths;
    private int count;
    private long byteSize;

    private GatherList(MemorySegment memory, int capacity) {
        this.memory = memory;
        this.buffers = new MemorySegment[capacity];
        this.offsets = new long[capacity];
        this.lengths = new long[capacity];
        memory.set(JAVA_LONG, MsgHdr.MSG_IOV, memory.address() + MsgHdr.SIZE);
    }

    /**
     * {@return a list for up to {@code capacity} pieces in {@code arena}'s memory}
     *
     *
     * @param capacity 1 to {@value Linux#UIO_MAXIOV} ({@code UIO_MAXIOV}, the kernel's limit per sendmsg)
     * @param arena owns the list's memory; the list lives as long as it does
     */
    public static GatherList allocate(Arena arena, int capacity) {
        if (arena == null) {
            throw new IllegalArgumentException("arena is null");
        }
        if (capacity < 1 || capacity > Linux.UIO_MAXIOV) {
            throw new IllegalArgumentException("capacity must be in [1, " + Linux.UIO_MAXIOV + "], got " + capacity);
        }
        return new GatherList(arena.allocate(MsgHdr.SIZE + Iovec.SIZE * capacity, 8), capacity);
    }

    /**
     * Empties the list for the next send (the previous one must have had its final completion).
     *
     * @return this list
     */
    public GatherList clear() {
        count = 0;
        byteSize = 0;
        memory.set(JAVA_LONG, MsgHdr.MSG_IOVLEN, 0);
        return this;
    }

    /**
     * Appends {@code [offset, offset + length)} of {@code buffer}.
     *
     *
     * @param buffer native memory, alive until the send that uses the list completes
     * @param offset where the piece starts in {@code buffer}
     * @param length bytes in the piece
     * @return this list
     * @throws IllegalArgumentException if the segment is not native or not alive, the range lies outside
     *                                  it, the list is full, or the total would pass {@link Integer#MAX_VALUE}
     *                                  bytes (a completion reports the count as an int)
     */
    public GatherList add(MemorySegment buffer, long offset, long length) {
        if (buffer == null) {
            throw new IllegalArgumentException("buffer is null");
        }
        if (!buffer.isNative() || !buffer.scope().isAlive()) {
            throw new IllegalArgumentException("buffer must be alive native (off-heap) memory");
        }
        if (offset < 0 || length < 0 || offset > buffer.byteSize() - length) {
            throw new IllegalArgumentException("range [" + offset + ", " + offset + " + " + length
                    + ") is outside the segment of " + buffer.byteSize() + " bytes");
        }
        if (count == buffers.length) {
            throw new IllegalArgumentException("gather list is full (" + buffers.length + " pieces)");
        }
        if (byteSize + length > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("a gathered send carries at most " + Integer.MAX_VALUE + " bytes");
        }
        long iovec = MsgHdr.SIZE + Iovec.SIZE * count;
        memory.set(JAVA_LONG, iovec + Iovec.IOV_BASE, buffer.address() + offset);
        memory.set(JAVA_LONG, iovec + Iovec.IOV_LEN, length);
        buffers[count] = buffer;
        offsets[count] = offset;
        lengths[count] = length;
        count++;
        byteSize += length;
        memory.set(JAVA_LONG, MsgHdr.MSG_IOVLEN, count);
        return this;
    }

    /** {@return how many pieces the list holds} */
    public int count() {
        return count;
    }

    /** {@return the most pieces the list can hold} */
    public int capacity() {
        return buffers.length;
    }

    /** {@return the bytes in all pieces together} */
    public long byteSize() {
        return byteSize;
    }

    /**
     * {@return the segment of piece {@code i}}
     *
     * @param i a piece index in {@code [0, count())}
     */
    public MemorySegment buffer(int i) {
        checkIndex(i);
        return buffers[i];
    }

    /**
     * {@return where piece {@code i} starts in its segment}
     *
     * @param i a piece index in {@code [0, count())}
     */
    public long offset(int i) {
        checkIndex(i);
        return offsets[i];
    }

    /**
     * {@return the bytes in piece {@code i}}
     *
     * @param i a piece index in {@code [0, count())}
     */
    public long length(int i) {
        checkIndex(i);
        return lengths[i];
    }

    /** {@return whether the list's own memory and every piece's segment are still alive} */
    public boolean isAlive() {
        if (!memory.scope().isAlive()) {
            return false;
        }
        for (int i = 0; i < count; i++) {
            if (!buffers[i].scope().isAlive()) {
                return false;
            }
        }
        return true;
    }

    /** The address of the {@code struct msghdr} the kernel reads: for the io_uring engine's SQE. */
    long messageHeaderAddress() {
        return memory.address();
    }

    private void checkIndex(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("piece " + i + " of " + count);
        }
    }

    @Override
    public String toString() {
        return "GatherList[pieces=" + count + "/" + buffers.length + ", bytes=" + byteSize + "]";
    }
}
