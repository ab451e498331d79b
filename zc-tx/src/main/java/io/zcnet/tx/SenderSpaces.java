package io.zcnet.tx;

import java.util.Arrays;

/**
 * The working storage of the {@link FrameSender}s of one event loop, lent to a sender while it has something
 * to send: from the first frame offered to an idle sender until every frame is reported sent, no send is in
 * flight and the kernel has sent every zero-copy notification. A connection that is idle then costs the
 * sender's positions and counters only, not its queue, header slots, staging buffer and gather lists (for
 * {@link SenderConfig#defaults()} about 144 KiB of heap and 352 KiB of native memory a space).
 *
 * <p>Spaces come in at most two sizes, each a configuration's {@link SenderConfig#queueFrames()} and
 * {@link SenderConfig#stagingBytes()}: a sender starts in a small one and, when it fills it, moves into a large
 * one (a request-reply connection never needs more than the small, a bulk stream takes the large), so a thousand
 * busy connections of small messages hold a thousand small spaces, not a thousand bulk ones. Senders of other
 * sizes than the large are refused. A space given back waits in its size's free list and is the next one lent
 * (last in, first out: the one whose memory is warm); when the list is empty a new one is made. Between two
 * {@link #trim()}s every space given back waits (up to {@link #HARD_IDLE_LIMIT} of each size); a trim frees those
 * beyond what the busiest moment since the last one held, and never below {@link #maxIdle()}. So a loop serving
 * thousands of request-reply connections, each taking a space per reply and giving it back, makes none after
 * the first spell (each one made and freed is a malloc, the JDK's zeroing and the kernel's fresh pages: 15% of a
 * server's CPU with 10,000 connections), and a burst that ends costs its memory for two trims at most.
 *
 * <p>Owner thread of the loop only, like the senders it serves. Made by whoever owns the loop, one per loop,
 * and closed with it, after its senders.
 */
public final class SenderSpaces implements AutoCloseable {
    /**
     * The spaces of each size a trim keeps idle when no bound is given, however quiet the loop was since the
     * last: about 8 MiB at the default large size, enough for a loop's next short spell to start without making
     * any.
     */
    public static final int DEFAULT_MAX_IDLE = 16;
    /** Spaces of one size kept idle between two trims at most: 65,536, 2.6 GiB of small ones. */
    public static final int HARD_IDLE_LIMIT = 1 << 16;

    private final int frames;
    private final int stagingBytes;
    private final int smallFrames;
    private final int smallStagingBytes;
    private final int floor;
    private SenderSpace[] idle;
    private int idleCount;
    private SenderSpace[] idleSmall;
    private int idleSmallCount;
    private long made;
    private int lent;
    /** The most spaces lent at once since the last trim. */
    private int peakLent;
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
     * @param maxIdle spaces kept for reuse once given back, 0 to 65536, at every trim
     * @throws IllegalArgumentException if {@code config} is null or {@code maxIdle} is out of range
     */
    public SenderSpaces(SenderConfig config, int maxIdle) {
        this(config, config, maxIdle);
    }

    /**
     * A pool of spaces in two sizes: senders of {@code large}'s sizes start in spaces of {@code small}'s and move
     * into one of {@code large}'s when they fill it; at most {@code maxIdle} of each size kept idle.
     *
     * @param small the sizes a sender starts in; at most those of {@code large}
     * @param large the sizes of the senders served, and of the spaces they grow into
     * @param maxIdle spaces of each size kept for reuse once given back, 0 to 65536, at every trim
     * @throws IllegalArgumentException if a config is null, {@code small} is larger than {@code large} in either
     *                                  size, or {@code maxIdle} is out of range
     */
    public SenderSpaces(SenderConfig small, SenderConfig large, int maxIdle) {
        if (small == null || large == null) {
            throw new IllegalArgumentException("both configs are required");
        }
        if (small.queueFrames() > large.queueFrames() || small.stagingBytes() > large.stagingBytes()) {
            throw new IllegalArgumentException("the small spaces (" + small.queueFrames() + " frames, " + small.stagingBytes()
                    + " staging bytes) must not be larger than the large (" + large.queueFrames() + ", "
                    + large.stagingBytes() + ")");
        }
        if (maxIdle < 0 || maxIdle > 1 << 16) {
            throw new IllegalArgumentException("maxIdle must be in [0, 65536], got " + maxIdle);
        }
        this.frames = large.queueFrames();
        this.stagingBytes = large.stagingBytes();
        this.smallFrames = small.queueFrames();
        this.smallStagingBytes = small.stagingBytes();
        this.floor = maxIdle;
        this.idle = new SenderSpace[Math.max(1, maxIdle)];
        this.idleSmall = new SenderSpace[Math.max(1, maxIdle)];
    }

    /** {@return whether a sender starts in a smaller space than the largest, and may grow} */
    boolean grows() {
        return smallFrames != frames || smallStagingBytes != stagingBytes;
    }

    /** {@return whether {@code space} is of the large size} */
    boolean isLarge(SenderSpace space) {
        return space.frames == frames && space.staging.byteSize() == stagingBytes;
    }

    /** {@return the frames of the spaces a sender starts in} */
    int startFrames() {
        return smallFrames;
    }

    /** {@return whether a sender of {@code config} works in spaces of this pool's sizes} */
    boolean fits(SenderConfig config) {
        return config.queueFrames() == frames && config.stagingBytes() == stagingBytes;
    }

    /**
     * {@return a space of the size senders start in, for a sender that has something to send: the last one of that
     * size given back, else a new one}
     */
    SenderSpace take() {
        if (!grows()) {
            return takeLarge();
        }
        checkOpen();
        lend();
        if (idleSmallCount == 0) {
            made++;
            return new SenderSpace(smallFrames, smallStagingBytes);
        }
        SenderSpace space = idleSmall[--idleSmallCount];
        idleSmall[idleSmallCount] = null;
        return space;
    }

    /** {@return a space of the large size: the last one given back, else a new one} */
    SenderSpace takeLarge() {
        checkOpen();
        lend();
        if (idleCount == 0) {
            made++;
            return new SenderSpace(frames, stagingBytes);
        }
        SenderSpace space = idle[--idleCount];
        idle[idleCount] = null;
        return space;
    }

    private void lend() {
        if (++lent > peakLent) {
            peakLent = lent;
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the pool of sender spaces is closed");
        }
    }

    /** Takes back a space no send or notification uses any more: kept for the next sender of its size, or freed. */
    void giveBack(SenderSpace space) {
        lent--;
        boolean large = isLarge(space);
        int count = large ? idleCount : idleSmallCount;
        if (closed || count == HARD_IDLE_LIMIT) {
            space.free();
        } else if (large) {
            idle = room(idle, idleCount);
            idle[idleCount++] = space;
        } else {
            idleSmall = room(idleSmall, idleSmallCount);
            idleSmall[idleSmallCount++] = space;
        }
    }

    /** {@code list}, or a copy twice as long when it has no room past {@code count}. */
    private static SenderSpace[] room(SenderSpace[] list, int count) {
        return count < list.length ? list : Arrays.copyOf(list, Math.min(HARD_IDLE_LIMIT, list.length * 2));
    }

    /**
     * Frees the idle spaces of each size beyond what the busiest moment since the last trim needed on top of those
     * lent now, keeping at least {@link #maxIdle()}: called at intervals by the loop (its heartbeat clock), so a
     * steady load reuses its spaces and the memory of a burst that ended goes back.
     *
     * @return how many spaces were freed
     */
    public int trim() {
        int keep = Math.max(floor, peakLent - lent);
        peakLent = lent;
        int freed = 0;
        while (idleCount > keep) {
            idle[--idleCount].free();
            idle[idleCount] = null;
            freed++;
        }
        while (idleSmallCount > keep) {
            idleSmall[--idleSmallCount].free();
            idleSmall[idleSmallCount] = null;
            freed++;
        }
        return freed;
    }

    /** {@return whether more spaces of either size wait than a trim keeps at least}: a later trim may free some */
    public boolean aboveFloor() {
        return idleCount > floor || idleSmallCount > floor;
    }

    /** {@return how many spaces this pool has made} (including those freed since) */
    public long made() {
        return made;
    }

    /** {@return how many spaces wait in the free lists} */
    public int idle() {
        return idleCount + idleSmallCount;
    }

    /** {@return how many spaces senders hold now} */
    public int lent() {
        return lent;
    }

    /** {@return the spaces of each size a trim keeps idle at least} */
    public int maxIdle() {
        return floor;
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
        while (idleSmallCount > 0) {
            idleSmall[--idleSmallCount].free();
            idleSmall[idleSmallCount] = null;
        }
    }

    @Override
    public String toString() {
        return "SenderSpaces[frames=" + (grows() ? smallFrames + ".." : "") + frames + " staging="
                + (grows() ? smallStagingBytes + ".." : "") + stagingBytes + " made=" + made + " idle=" + idle()
                + "/" + floor + " lent=" + lent + (closed ? " closed" : "") + "]";
    }
}
