package io.zcnet.jmh.echo;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The client half of an echo benchmark, shared by every transport: it keeps at most {@code window}
 * messages of {@code size} bytes in flight on one connection and counts the bytes that come back.
 *
 * <p>The byte stream is a pseudo-random pattern with period {@code window * size}; the pattern is
 * stored twice in a row so that any in-flight range (never longer than one period) is one contiguous
 * slice to send from or to compare with. Received chunks are compared against the pattern at their
 * stream offset on a sample of receives ({@link #verifyEvery}), and byte counts are checked exactly,
 * so a transport that drops, duplicates, reorders or corrupts data fails the run instead of looking
 * fast.
 *
 * <p>Confined to the benchmark thread, which also drives the transport's event loop through
 * {@link #runLoop}: no other thread is involved on the client side, for any transport.
 */
abstract class StreamClient implements AutoCloseable {
    /** How long the loop may make no progress at all before the run is declared stuck. */
    private static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(10);
    static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    final int size;
    final int window;
    /** Bytes in one period of the pattern: the most that can ever be in flight. */
    final int period;

    private long target;       // messages the current exchange waits for, counted from the start
    private long sendLimit;    // messages the client may hand to the transport in total
    private long sent;         // messages handed to the transport
    private long echoedBytes;  // bytes received back
    private long receives;
    private int verifyMask;
    private long verified;
    private String failure;

    StreamClient(int size, int window) {
        if (size < 1 || window < 1 || (long) size * window > 64L * 1024 * 1024) {
            throw new IllegalArgumentException("need size >= 1, window >= 1 and size * window <= 64 MiB, got size "
                    + size + " window " + window);
        }
        this.size = size;
        this.window = window;
        this.period = size * window;
    }

    /** Fills {@code twoPeriods} bytes with the pattern: {@code period} random bytes, then the same again. */
    static byte[] pattern(int period, long seed) {
        byte[] bytes = new byte[2 * period];
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < period; i++) {
            bytes[i] = (byte) random.nextInt();
        }
        System.arraycopy(bytes, 0, bytes, period, period);
        return bytes;
    }

    /**
     * Verify one receive in {@code n} (a power of two); 1 checks every byte. Used at full rate in setup,
     * sampled while measuring.
     */
    final void verifyEvery(int n) {
        if (n < 1 || Integer.bitCount(n) != 1) {
            throw new IllegalArgumentException("verifyEvery must be a power of two >= 1, got " + n);
        }
        verifyMask = n - 1;
    }

    /**
     * Waits until {@code messages} more echoes have come back. With {@code continuous} the window is kept
     * full beyond that point, so the pipe never drains between calls (throughput); without, nothing is
     * sent past the target, so each call is a closed exchange (latency, bulk).
     */
    final void exchange(int messages, boolean continuous) {
        target += messages;
        sendLimit = continuous ? Long.MAX_VALUE : target;
        sendMore();
        awaitEchoes(target);
    }

    /** Stops sending and waits until everything sent has come back. */
    final void drain() {
        sendLimit = sent;
        awaitEchoes(sent);
        target = sent; // what the next exchange waits for counts from here
    }

    private void awaitEchoes(long messages) {
        long wanted = messages * size;
        long idleSince = 0;
        while (echoedBytes < wanted) {
            if (failure != null) {
                throw new IllegalStateException(failure);
            }
            if (runLoop(POLL_NANOS) > 0) {
                idleSince = 0;
            } else if (idleSince == 0) {
                idleSince = System.nanoTime();
            } else if (System.nanoTime() - idleSince > STALL_NANOS) {
                throw new IllegalStateException("no progress for " + TimeUnit.NANOSECONDS.toSeconds(STALL_NANOS)
                        + " s: " + this);
            }
        }
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
    }

    /** Hands as many messages to the transport as the window and the limit allow, in one send. */
    final void sendMore() {
        if (!canSend() || failure != null) {
            return;
        }
        long allowed = Math.min(echoedBytes / size + window, sendLimit) - sent;
        if (allowed <= 0) {
            return;
        }
        int offset = (int) ((sent * size) % period);
        sent += allowed;
        transmit(offset, (int) (allowed * size));
    }

    /**
     * Records {@code bytes} received. Returns the pattern offset the chunk must match when this receive
     * is sampled for verification, or -1 when it is not.
     */
    final int received(int bytes) {
        long start = echoedBytes;
        echoedBytes += bytes;
        if (echoedBytes > sent * size) {
            fail("echoed " + echoedBytes + " bytes but only " + sent * size + " were sent");
            return -1;
        }
        if ((receives++ & verifyMask) != 0) {
            return -1;
        }
        if (bytes > period) {
            fail("a receive of " + bytes + " bytes is larger than all bytes that can be in flight (" + period + ")");
            return -1;
        }
        verified++;
        return (int) (start % period);
    }

    /** Records that a sampled chunk did not match, which fails the run. */
    final void mismatch(int patternOffset, int bytes) {
        fail("echoed bytes differ from the bytes sent (" + bytes + " bytes at pattern offset " + patternOffset
                + ", stream offset ~" + echoedBytes + ")");
    }

    /** Records a transport error; the waiting exchange throws it. */
    final void fail(String reason) {
        if (failure == null) {
            failure = transportName() + ": " + reason;
        }
    }

    /** Throws if anything went wrong; otherwise a summary line for the log. */
    final String check() {
        if (failure != null) {
            throw new IllegalStateException(failure);
        }
        if (verified == 0 && receives > 0) {
            throw new IllegalStateException(transportName() + ": no receive was verified");
        }
        return transportName() + ": " + sent + " messages sent, " + echoedBytes + " bytes echoed, " + verified
                + " of " + receives + " receives verified";
    }

    long messagesEchoed() {
        return echoedBytes / size;
    }

    /** Whether a new send may be started now (zcnet keeps one send in flight so bytes never reorder). */
    abstract boolean canSend();

    /** Sends {@code length} bytes of the doubled pattern starting at {@code offset}. */
    abstract void transmit(int offset, int length);

    /** Runs the client's event loop once, waiting up to {@code nanos}; returns how much work it did. */
    abstract int runLoop(long nanos);

    abstract String transportName();

    /** Closes the connection and the client's event loop; confined like everything else. */
    @Override
    public abstract void close();

    @Override
    public String toString() {
        return transportName() + "[size=" + size + " window=" + window + " sent=" + sent + " echoedBytes="
                + echoedBytes + " target=" + target + " receives=" + receives + "]";
    }
}
