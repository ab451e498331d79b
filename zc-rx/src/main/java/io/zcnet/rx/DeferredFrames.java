package io.zcnet.rx;

import io.zcnet.framing.FrameError;
import io.zcnet.framing.MessageAssembler;

import java.lang.foreign.MemorySegment;

/**
 * Whole frames the assembler answered {@link MessageAssembler#DEFERRED}: copies of a segment that another
 * subflow's direct placement is receiving right now (a retransmission after a failover), which must not be
 * dropped while that receive may still fail. (A SEND that overtakes an earlier message is never deferred: it
 * names its receive by its RSN and is placed at once.) Each is kept here, in fixed slots of a header plus one
 * segment, and offered again after every frame placed, so after the commit that makes it a duplicate, and
 * after every placement aborted, which makes it the copy to place.
 *
 * <p>Bounded on purpose: a peer can make frames wait only as far as the slots go; past that the connection
 * that brought one more fails ({@link #reserve} answers -1), instead of buffering without bound. One store
 * per assembler, shared by every receiver feeding it, on the assembler's loop thread. Its memory (slots of a
 * segment each, 4 MiB for a queue pair's 64 slots of 64 KiB) is leased from {@link ReceiveBuffers} when a frame
 * must wait and given back once none is kept: a failover is rare, and a process with thousands of queue pairs
 * should not hold megabytes for each in case. Nothing is written into a slot but by a receiver that reserved
 * it, so with no slot reserved no receive can write into the store. Nothing per frame: a lease is a pop from
 * the pool's free list.
 */
public final class DeferredFrames implements AutoCloseable {
    /** Header and extension bytes a kept frame may have. */
    static final int MAX_HEADER = 64;

    private final MessageAssembler assembler;
    private final ReceiveBuffers buffers;
    /** Whether {@link #buffers} is this store's alone, freed with it. */
    private final boolean ownsBuffers;
    /** Every slot's bytes; null while no frame is kept. */
    private ReceiveBuffers.Block store;
    private MemorySegment memory;
    private final int slotSize;
    /** Bytes of the frame in each slot; 0 when free. */
    private final int[] length;
    /** Whether the slot's frame is whole (its payload may still be arriving otherwise). */
    private final boolean[] complete;
    /** Arrival number of each slot's frame, so frames are offered again in the order they came. */
    private final long[] arrival;
    private long arrivals;
    private int held;

    /**
     * An empty store for one queue pair's receive direction, with memory of its own: once a frame has had to
     * wait, kept until {@link #close()}. Owner thread of the loop, like its receivers.
     *
     * @param assembler   the assembler the frames are offered to again
     * @param slots       frames that may wait at once
     * @param segmentSize the negotiated segment size (the longest payload a frame has)
     * @throws IllegalArgumentException if {@code assembler} is null or a size is out of range
     */
    public DeferredFrames(MessageAssembler assembler, int slots, int segmentSize) {
        this(assembler, slots, segmentSize, new ReceiveBuffers(1), true);
    }

    /**
     * An empty store for one queue pair's receive direction whose memory is leased from {@code buffers} while it
     * keeps a frame. Owner thread of the loop, like its receivers.
     *
     * @param assembler   the assembler the frames are offered to again
     * @param slots       frames that may wait at once
     * @param segmentSize the negotiated segment size (the longest payload a frame has)
     * @param buffers     the loop's receive buffers; must outlive this store's {@link #close()}
     * @throws IllegalArgumentException if {@code assembler} or {@code buffers} is null or a size is out of range
     */
    public DeferredFrames(MessageAssembler assembler, int slots, int segmentSize, ReceiveBuffers buffers) {
        this(assembler, slots, segmentSize, buffers, false);
    }

    private DeferredFrames(MessageAssembler assembler, int slots, int segmentSize, ReceiveBuffers buffers,
            boolean ownsBuffers) {
        if (assembler == null || buffers == null) {
            throw new IllegalArgumentException("assembler and buffers are required");
        }
        if (slots < 1 || slots > 256 || segmentSize < 1) {
            throw new IllegalArgumentException("slots must be in [1, 256] and segmentSize >= 1, got " + slots
                    + " and " + segmentSize);
        }
        this.assembler = assembler;
        this.buffers = buffers;
        this.ownsBuffers = ownsBuffers;
        this.slotSize = MAX_HEADER + segmentSize;
        this.length = new int[slots];
        this.complete = new boolean[slots];
        this.arrival = new long[slots];
    }

    /**
     * A free slot for a frame of {@code bytes} bytes, or -1 when every slot is taken. The caller writes the
     * frame into {@link #slot} and calls {@link #completed} once all of it is there.
     */
    int reserve(int bytes) {
        if (bytes > slotSize) {
            throw new IllegalArgumentException("a frame of " + bytes + " bytes exceeds a slot of " + slotSize);
        }
        if (memory == null) {
            try {
                store = buffers.lease((long) length.length * slotSize);
            } catch (OutOfMemoryError e) {
                return -1; // the connection that brought the frame fails, not the loop thread (whyFull says so)
            }
            memory = store.memory;
        }
        for (int i = 0; i < length.length; i++) {
            if (length[i] == 0) {
                length[i] = bytes;
                complete[i] = false;
                arrival[i] = arrivals++;
                held++;
                return i;
            }
        }
        return -1;
    }

    /** The memory of slot {@code index}, as long as the frame reserved there. */
    MemorySegment slot(int index) {
        return memory.asSlice((long) index * slotSize, length[index]);
    }

    /** The frame in slot {@code index} is whole. */
    void completed(int index) {
        complete[index] = true;
    }

    /**
     * Frees a slot: its frame was offered and taken, or will never be whole (its connection failed while
     * receiving it). The last one gives the store back.
     */
    void release(int index) {
        length[index] = 0;
        held--;
        if (held == 0) {
            buffers.giveBack(store);
            store = null;
            memory = null;
        }
    }

    /** {@return how many frames are kept} */
    public int held() {
        return held;
    }

    /**
     * {@return bytes of native memory the store holds now}: 0 while no frame is kept, but with memory of its own (no
     * {@link ReceiveBuffers} given), also the store kept idle once a frame has had to wait
     */
    public long allocatedBytes() {
        return (memory == null ? 0 : memory.byteSize()) + (ownsBuffers ? buffers.idleBytes() : 0);
    }

    /** {@return why {@link #reserve} answered -1, for the message of the connection it fails} */
    String whyFull() {
        return memory == null
                ? "no memory for the store of frames waiting for placements in flight (" + (long) length.length * slotSize
                        + " bytes)"
                : "more than " + held + " frames wait for placements in flight";
    }

    /**
     * Offers every whole frame kept to the assembler again, oldest first, and frees those it no longer
     * defers. Work is bounded by the slot count.
     *
     * @return how many of them the assembler placed (0 or more), or the negative {@link FrameError} with which
     *         it refused a frame (the queue pair is then in ERROR)
     */
    int offerAgain() {
        int placed = 0;
        boolean progress = true;
        while (progress && held > 0) {
            progress = false;
            int oldest = oldestComplete();
            // One pass in arrival order; a frame placed can unblock an older one, hence the outer loop.
            for (int n = 0; n < length.length && oldest >= 0; n++) {
                MemorySegment frame = slot(oldest);
                int result = assembler.onFrame(frame, 0, frame.byteSize());
                if (result < 0) {
                    return result;
                }
                if (result != MessageAssembler.DEFERRED) {
                    release(oldest);
                    progress = true;
                }
                if (result == MessageAssembler.ACCEPTED) {
                    placed++;
                }
                oldest = nextComplete(arrival[oldest]);
            }
        }
        return placed;
    }

    private int oldestComplete() {
        return nextComplete(-1);
    }

    /** The whole frame that arrived first after arrival number {@code after}, or -1. */
    private int nextComplete(long after) {
        int best = -1;
        for (int i = 0; i < length.length; i++) {
            if (length[i] != 0 && complete[i] && arrival[i] > after && (best < 0 || arrival[i] < arrival[best])) {
                best = i;
            }
        }
        return best;
    }

    /** Gives the store back, once the receivers feeding it are closed: none may still be receiving into a slot. */
    @Override
    public void close() {
        if (store != null) {
            buffers.giveBack(store);
            store = null;
            memory = null;
        }
        if (ownsBuffers) {
            buffers.close();
        }
    }
}
