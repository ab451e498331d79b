package io.zcnet.qp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A ring of fixed-size entries in off-heap memory between exactly one producer thread and one consumer
 * thread, without locks: the shape of an io_uring SQ or CQ. The producer fills the entry at
 * {@link #claim()} and publishes it with {@link #publish()}; the consumer reads the entry at
 * {@link #peek()} and frees it with {@link #advance()}.
 *
 * <pre>
 *   0                   64                  128
 *  +-------------------+-------------------+-------------------------------------------+
 *  | tail u64 (+pad)   | head u64 (+pad)   | entry 0 | entry 1 | ... | entry capacity-1 |
 *  +-------------------+-------------------+-------------------------------------------+
 *    written by the      written by the      entry i holds the i-th published item mod
 *    producer (release)  consumer (release)  capacity; entrySize bytes each
 * </pre>
 *
 * <p>Ordering: the producer writes an entry's bytes, then stores {@code tail} with release; the consumer
 * loads {@code tail} with acquire before reading the entry, so it sees the bytes. Symmetrically the
 * consumer stores {@code head} with release after reading, and the producer loads it with acquire before
 * reusing the entry. The two counters sit on their own cache lines so the threads do not share one. Each
 * side also keeps a private copy of the other side's counter and rereads the shared one only when its copy
 * says full (producer) or empty (consumer).
 *
 * <p>The one-producer, one-consumer rule is the caller's, and not checked here. It is one thread at a time
 * per side ({@link QueuePair}'s contract, as ibv_post_send(3)'s), not one fixed thread: a side handed from
 * thread to thread with a happens-before between them (a lock, an executor) is correct use, which a check of
 * the calling thread's identity would refuse. Telling that from two threads really overlapping needs an atomic
 * read-modify-write on every claim or peek, the cost this ring exists to avoid (it is what a many-producer
 * ring pays); a check with plain fields would itself race and catch only some overlaps.
 */
final class SpscRing {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long TAIL = 0;
    private static final long HEAD = 64;
    private static final long ENTRIES = 128;

    private final MemorySegment memory;
    private final int entrySize;
    private final int mask;

    // Producer's private state.
    private long producerTail;
    private long cachedHead;
    // Consumer's private state.
    private long consumerHead;
    private long cachedTail;

    /**
     * @param capacity  entries, a power of two from 1 to 2^20
     * @param entrySize bytes per entry, a multiple of 8
     */
    SpscRing(Arena arena, int capacity, int entrySize) {
        if (capacity < 1 || capacity > 1 << 20 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("ring capacity " + capacity + " must be a power of two in 1..2^20");
        }
        if (entrySize < 8 || (entrySize & 7) != 0) {
            throw new IllegalArgumentException("entry size " + entrySize + " must be a positive multiple of 8");
        }
        this.entrySize = entrySize;
        this.mask = capacity - 1;
        this.memory = arena.allocate(ENTRIES + (long) capacity * entrySize, 64);
    }

    MemorySegment memory() {
        return memory;
    }

    int capacity() {
        return mask + 1;
    }

    // ---------------------------------------------------------------- producer

    /** Offset in {@link #memory()} of the next free entry, or -1 when the ring is full. Producer only. */
    long claim() {
        if (producerTail - cachedHead > mask) {
            cachedHead = (long) LONG.getAcquire(memory, HEAD); // acquire: the consumer is done with the entry
            if (producerTail - cachedHead > mask) {
                return -1;
            }
        }
        return ENTRIES + (producerTail & mask) * entrySize;
    }

    /** Makes the entry last {@linkplain #claim() claimed} visible to the consumer. Producer only. */
    void publish() {
        producerTail++;
        LONG.setRelease(memory, TAIL, producerTail); // release: the entry's bytes before the new tail
    }

    // ---------------------------------------------------------------- consumer

    /** Offset in {@link #memory()} of the oldest published entry, or -1 when the ring is empty. Consumer only. */
    long peek() {
        if (consumerHead == cachedTail) {
            cachedTail = (long) LONG.getAcquire(memory, TAIL); // acquire: pairs with publish's release
            if (consumerHead == cachedTail) {
                return -1;
            }
        }
        return ENTRIES + (consumerHead & mask) * entrySize;
    }

    /** Frees the entry last {@linkplain #peek() peeked} for the producer. Consumer only. */
    void advance() {
        consumerHead++;
        LONG.setRelease(memory, HEAD, consumerHead); // release: the entry was read before it is reused
    }

    /** Entries ever published. Producer only. */
    long published() {
        return producerTail;
    }

    /** Entries ever consumed, as the consumer last published it (any thread). */
    long consumed() {
        return (long) LONG.getAcquire(memory, HEAD); // acquire: pairs with advance's release
    }

    /** Published entries not yet consumed, as the calling side last saw them (any thread, approximate). */
    int size() {
        return (int) ((long) LONG.getAcquire(memory, TAIL) - (long) LONG.getAcquire(memory, HEAD));
    }

    @Override
    public String toString() {
        return "SpscRing[" + size() + "/" + capacity() + " x " + entrySize + " B]";
    }
}
