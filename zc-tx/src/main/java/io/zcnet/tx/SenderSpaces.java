package io.zcnet.tx;

/**
 * The working storage of the {@link FrameSender}s of one event loop, lent to a sender while it has something
 * to send: from the first frame offered to an idle sender until every frame is reported sent, no send is in
 * flight and the kernel has sent every zero-copy notification. A connection that is idle then costs the
 * sender's positions and counters only, not its queue, header slots, staging buffer and gather lists (for
 * {@link SenderConfig#defaults()} about 144 KiB of heap and 352 KiB of native memory a space).
 *
 * <p>Every space is sized by one configuration's {@link SenderConfig#queueFrames()} and
 * {@link SenderConfig#stagingBytes()}; senders of other sizes are refused. A space given back waits in a free
 * list and is the next one lent (last in, first out: the one whose memory is warm); when the list is empty a
 * new one is made. At most {@link #maxIdle()} wait: one given back beyond that is freed, so a burst on many
 * connections at once does not pin its peak for good.
 *
 * <p>Owner thread of the loop only, like the senders it serves. Made by whoever owns the loop, one per loop,
 * and closed with it, after its senders.
 */
public final class SenderSpaces implements AutoCloseable {
    /**
     * Spaces kept idle when no bound is given: enough for the connections a loop serves in one turn of a
     * busy spell to take turns without making and freeing memory, about 8 MiB at the default sizes.
     */
    public static final int DEFAULT_MAX_IDLE = 16;

    private final int frames;
    private final int stagingBytes;
    private final SenderSpace[] idle;
    private int idleCount;
    private long made;
    private int lent;
    private boolean closed;

    /**
     * A pool of spaces for senders of {@code config}'s sizes, keeping at most {@link #DEFAULT_MAX_IDLE} idle.
     *
     * @param config the sizes of every space: {@link SenderConfig#queueFrames()} and
     *               {@link SenderConfig#stagingBytes()}
     * @throws IllegalArgumentException if {@code config} is null
     */
    public SenderSpaces(SenderConfig config) {
        this(config, DEFAULT_MAX_IDLE);
    }

    /**
     * A pool of spaces for senders of {@code config}'s sizes, keeping at most {@code maxIdle} idle.
     *
     * @param config the sizes of every space: {@link SenderConfig#queueFrames()} and
     *               {@link SenderConfig#stagingBytes()}
     * @param maxIdle spaces kept for reuse once given back, 0 to 65536; more are freed as they come back
     * @throws IllegalArgumentException if {@code config} is null or {@code maxIdle} is out of range
     */
    public SenderSpaces(SenderConfig config, int maxIdle) {
        if (config == null) {
            throw new IllegalArgumentException("config is required");
        }
        if (maxIdle < 0 || maxIdle > 1 << 16) {
            throw new IllegalArgumentException("maxIdle must be in [0, 65536], got " + maxIdle);
        }
        this.frames = config.queueFrames();
        this.stagingBytes = config.stagingBytes();
        this.idle = new SenderSpace[maxIdle];
    }

    /** {@return whether a sender of {@code config} works in spaces of this pool's sizes} */
    boolean fits(SenderConfig config) {
        return config.queueFrames() == frames && config.stagingBytes() == stagingBytes;
    }

    /** {@return a space for a sender that has something to send: the last one given back, else a new one} */
    SenderSpace take() {
        if (closed) {
            throw new IllegalStateException("the pool of sender spaces is closed");
        }
        lent++;
        if (idleCount == 0) {
            made++;
            return new SenderSpace(frames, stagingBytes);
        }
        SenderSpace space = idle[--idleCount];
        idle[idleCount] = null;
        return space;
    }

    /** Takes back a space no send or notification uses any more: kept for the next sender, or freed. */
    void giveBack(SenderSpace space) {
        lent--;
        if (closed || idleCount == idle.length) {
            space.free();
        } else {
            idle[idleCount++] = space;
        }
    }

    /** {@return how many spaces this pool has made} (including those freed since) */
    public long made() {
        return made;
    }

    /** {@return how many spaces wait in the free list} */
    public int idle() {
        return idleCount;
    }

    /** {@return how many spaces senders hold now} */
    public int lent() {
        return lent;
    }

    /** {@return the most spaces kept idle} */
    public int maxIdle() {
        return idle.length;
    }

    /**
     * Frees the idle spaces; a space still lent is freed when its sender gives it back, and none is lent
     * any more. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        while (idleCount > 0) {
            idle[--idleCount].free();
            idle[idleCount] = null;
        }
    }

    @Override
    public String toString() {
        return "SenderSpaces[frames=" + frames + " staging=" + stagingBytes + " made=" + made + " idle=" + idleCount
                + "/" + idle.length + " lent=" + lent + (closed ? " closed" : "") + "]";
    }
}
