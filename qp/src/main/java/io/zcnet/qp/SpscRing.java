package io.zcnet.qp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A ring of fixed-size entries in off-heap memory between exactly one producer thread and one consumer
 * thread, without locks: the shape of an io_uring SQ or CQ. The producer fills the entry at
 * {@link #claim()} in {@link #producerMemory()} and publishes it with {@link #publish()}; the consumer reads
 * the entry at {@link #peek()} in {@link #consumerMemory()} and frees it with {@link #advance()}.
 *
 * <pre>
 *   counters                                  entries (replaced when the ring grows)
 *   0                   64                  128
 *  +-------------------+-------------------+   +-------------------------------------------+
 *  | tail u64 (+pad)   | head u64 (+pad)   |   | entry 0 | entry 1 | ... | entry size-1     |
 *  +-------------------+-------------------+   +-------------------------------------------+
 *    written by the      written by the        entry i holds the i-th published item mod the
 *    producer (release)  consumer (release)    current size; entrySize bytes each
 * </pre>
 *
 * <p>Ordering: the producer writes an entry's bytes, then stores {@code tail} with release; the consumer
 * loads {@code tail} with acquire before reading the entry, so it sees the bytes. Symmetrically the
 * consumer stores {@code head} with release after reading, and the producer loads it with acquire before
 * reusing the entry. The two counters sit on their own cache lines so the threads do not share one. Each
 * side also keeps a private copy of the other side's counter and rereads the shared one only when its copy
 * says full (producer) or empty (consumer).
 *
 * <p>Growth: the entries start at {@link #INITIAL_CAPACITY} (or the capacity, if smaller) and double when the
 * producer finds them full, up to the capacity asked for: a queue pair with a few entries outstanding at a time
 * costs a few entries of memory, not its queues' depth (JCTools' {@code SpscGrowableArrayQueue} grows the same
 * way, by the producer). Growing copies the entries from the head the producer last read to its tail into the
 * new memory, each at its sequence modulo the new size, then publishes the new memory with release before any
 * entry written there is published; the consumer loads it with acquire whenever it rereads {@code tail}. Any
 * entry the consumer has still to read is at or past that head, so it is in whichever memory the consumer
 * holds: the old memory is never written again, and is freed by the collector once neither side holds it. Only
 * growth allocates; a ring at the size its use needs does not.
 *
 * <p>The one-producer, one-consumer rule is the caller's, and not checked here. It is one thread at a time
 * per side ({@link QueuePair}'s contract, as ibv_post_send(3)'s), not one fixed thread: a side handed from
 * thread to thread with a happens-before between them (a lock, an executor) is correct use, which a check of
 * the calling thread's identity would refuse. Telling that from two threads really overlapping needs an atomic
 * read-modify-write on every claim or peek, the cost this ring exists to avoid (it is what a many-producer
 * ring pays); a check with plain fields would itself race and catch only some overlaps.
 */
final class SpscRing {
    /** Entries a ring starts with. */
    static final int INITIAL_CAPACITY = 16;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle ENTRIES;
    private static final long TAIL = 0;
    private static final long HEAD = 64;
    private static final long COUNTERS = 128;

    static {
        try {
            ENTRIES = MethodHandles.lookup().findVarHandle(SpscRing.class, "entries", MemorySegment.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MemorySegment counters;
    private final int entrySize;
    private final int capacity;
    /** The newest entries, written by the producer with release when it grows them. */
    @SuppressWarnings("unused")
    private MemorySegment entries;

    // Producer's private state.
    private MemorySegment producerEntries;
    private int producerMask;
    private long producerTail;
    private long cachedHead;
    // Consumer's private state.
    private MemorySegment consumerEntries;
    private int consumerMask;
    private long consumerHead;
    private long cachedTail;

    /**
     * @param capacity  entries at most, a power of two from 1 to 2^20
     * @param entrySize bytes per entry, a multiple of 8
     */
    SpscRing(int capacity, int entrySize) {
        if (capacity < 1 || capacity > 1 << 20 || Integer.bitCount(capacity) != 1) {
            throw new IllegalArgumentException("ring capacity " + capacity + " must be a power of two in 1..2^20");
        }
        if (entrySize < 8 || (entrySize & 7) != 0) {
            throw new IllegalArgumentException("entry size " + entrySize + " must be a positive multiple of 8");
        }
        this.entrySize = entrySize;
        this.capacity = capacity;
        this.counters = Arena.ofAuto().allocate(COUNTERS, 64);
        int size = Math.min(INITIAL_CAPACITY, capacity);
        this.producerEntries = allocate(size);
        this.producerMask = size - 1;
        this.consumerEntries = producerEntries;
        this.consumerMask = producerMask;
        ENTRIES.setRelease(this, producerEntries); // the constructor's thread hands the ring on with a happens-before
    }

    /** {@return the most entries the ring may hold} */
    int capacity() {
        return capacity;
    }

    /** {@return how many entries its memory holds now} (the producer's view) */
    int allocated() {
        return producerMask + 1;
    }

    // ---------------------------------------------------------------- producer

    /** The memory {@link #claim()}'s offsets are in: good until the next claim. Producer only. */
    MemorySegment producerMemory() {
        return producerEntries;
    }

    /** Offset in {@link #producerMemory()} of the next free entry, or -1 when the ring is full. Producer only. */
    long claim() {
        if (producerTail - cachedHead > producerMask && !claimSlowPath()) {
            return -1;
        }
        return (producerTail & producerMask) * entrySize;
    }

    /** Rereads the head, and grows the entries if they are still full; false when the ring is full. */
    private boolean claimSlowPath() {
        cachedHead = (long) LONG.getAcquire(counters, HEAD); // acquire: the consumer is done with the entry
        if (producerTail - cachedHead <= producerMask) {
            return true;
        }
        if (producerMask + 1 >= capacity) {
            return false;
        }
        grow();
        return true;
    }

    /** Doubles the entries; every one is taken, so each published and unread one moves to its new place. */
    private void grow() {
        int size = 2 * (producerMask + 1);
        int mask = size - 1;
        MemorySegment grown = allocate(size);
        for (long seq = cachedHead; seq < producerTail; seq++) {
            MemorySegment.copy(producerEntries, (seq & producerMask) * entrySize, grown, (seq & mask) * entrySize,
                    entrySize);
        }
        producerEntries = grown;
        producerMask = mask;
        ENTRIES.setRelease(this, grown); // release: the copied entries before the memory the consumer may switch to
    }

    /**
     * Memory for {@code entries} entries, in an arena of its own, freed by the collector: neither side can tell
     * when the other let go of entries it grew out of, and one arena for them all would keep each until the ring
     * is dropped.
     */
    private MemorySegment allocate(int entries) {
        return Arena.ofAuto().allocate((long) entries * entrySize, 64);
    }

    /** Makes the entry last {@linkplain #claim() claimed} visible to the consumer. Producer only. */
    void publish() {
        producerTail++;
        LONG.setRelease(counters, TAIL, producerTail); // release: the entry's bytes before the new tail
    }

    // ---------------------------------------------------------------- consumer

    /** The memory {@link #peek()}'s offsets are in: good until the next peek. Consumer only. */
    MemorySegment consumerMemory() {
        return consumerEntries;
    }

    /** Offset in {@link #consumerMemory()} of the oldest published entry, or -1 when the ring is empty. Consumer only. */
    long peek() {
        if (consumerHead == cachedTail) {
            cachedTail = (long) LONG.getAcquire(counters, TAIL); // acquire: pairs with publish's release
            if (consumerHead == cachedTail) {
                return -1;
            }
            // After the tail: memory at least as new as the one the entries up to it were written in.
            MemorySegment m = (MemorySegment) ENTRIES.getAcquire(this); // acquire: pairs with grow's release
            if (m != consumerEntries) {
                consumerEntries = m;
                consumerMask = (int) (m.byteSize() / entrySize) - 1;
            }
        }
        return (consumerHead & consumerMask) * entrySize;
    }

    /** Frees the entry last {@linkplain #peek() peeked} for the producer. Consumer only. */
    void advance() {
        consumerHead++;
        LONG.setRelease(counters, HEAD, consumerHead); // release: the entry was read before it is reused
    }

    /** Entries ever published. Producer only. */
    long published() {
        return producerTail;
    }

    /** Entries ever consumed, as the consumer last published it (any thread). */
    long consumed() {
        return (long) LONG.getAcquire(counters, HEAD); // acquire: pairs with advance's release
    }

    /** Published entries not yet consumed, as the calling side last saw them (any thread, approximate). */
    int size() {
        return (int) ((long) LONG.getAcquire(counters, TAIL) - (long) LONG.getAcquire(counters, HEAD));
    }

    @Override
    public String toString() {
        return "SpscRing[" + size() + "/" + capacity + " x " + entrySize + " B, "
                + ((MemorySegment) ENTRIES.getAcquire(this)).byteSize() / entrySize + " allocated]";
    }
}
