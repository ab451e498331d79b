package io.zcnet.qp;

/**
 * How a {@link QpListener} serves strangers as well as clients; immutable, thread-safe. Its bounds keep the
 * listener's memory bounded before any peer has proved anything: handshakes in progress are at most
 * {@code maxHandshakes} in all and {@code maxHandshakesPerSource} from one address, and at most
 * {@code maxWaiting} queue pairs wait to be taken by {@link QpListener#accept}.
 *
 * @param queuePairs             what this side asks for in every handshake
 * @param admission              asked before anything is allocated for an OPEN
 * @param maxHandshakes          handshakes in progress at most; past it the cheapest to lose goes (one that has
 *                               not yet sent its first message, the oldest first), or if there is none the new
 *                               connection does
 * @param maxHandshakesPerSource handshakes in progress at most from one source address; past it a new
 *                               connection from there is closed unread
 * @param maxWaiting             queue pairs established and not yet taken by {@code accept}; past it an OPEN is
 *                               refused with REFUSE {@code BUSY} before anything is allocated for it
 * @param sharedQueues           the shared completion and receive queues every accepted queue pair uses
 */
public record ListenerConfig(QpConfig queuePairs, QpAdmission admission, int maxHandshakes, int maxHandshakesPerSource,
        int maxWaiting, SharedQueues sharedQueues) {
    /** The default {@link #maxHandshakes}. */
    public static final int DEFAULT_MAX_HANDSHAKES = 512;
    /** The default {@link #maxHandshakesPerSource}. */
    public static final int DEFAULT_MAX_HANDSHAKES_PER_SOURCE = 64;
    /** The default {@link #maxWaiting}. */
    public static final int DEFAULT_MAX_WAITING = 1024;

    /** Checks every component. */
    public ListenerConfig {
        if (queuePairs == null || admission == null || sharedQueues == null) {
            throw new IllegalArgumentException("queuePairs, admission and sharedQueues are required (SharedQueues.NONE for none)");
        }
        if (maxHandshakes < 1 || maxHandshakes > 1 << 20) {
            throw new IllegalArgumentException("maxHandshakes " + maxHandshakes + " outside 1..2^20");
        }
        if (maxHandshakesPerSource < 1 || maxHandshakesPerSource > maxHandshakes) {
            throw new IllegalArgumentException("maxHandshakesPerSource " + maxHandshakesPerSource + " outside 1..maxHandshakes ("
                    + maxHandshakes + ")");
        }
        if (maxWaiting < 1 || maxWaiting > 1 << 20) {
            throw new IllegalArgumentException("maxWaiting " + maxWaiting + " outside 1..2^20");
        }
    }

    /**
     * {@return a listener configuration for {@code queuePairs} that admits every well-formed OPEN, with the default
     * bounds}
     *
     * @param queuePairs what this side asks for in every handshake
     */
    public static ListenerConfig of(QpConfig queuePairs) {
        return new ListenerConfig(queuePairs, QpAdmission.everyone(), DEFAULT_MAX_HANDSHAKES,
                DEFAULT_MAX_HANDSHAKES_PER_SOURCE, DEFAULT_MAX_WAITING, SharedQueues.NONE);
    }

    /**
     * {@return this configuration with another admission}
     *
     * @param policy asked before anything is allocated for an OPEN
     */
    public ListenerConfig withAdmission(QpAdmission policy) {
        return new ListenerConfig(queuePairs, policy, maxHandshakes, maxHandshakesPerSource, maxWaiting, sharedQueues);
    }

    /**
     * {@return this configuration with other bounds}
     *
     * @param handshakes handshakes in progress at most
     * @param perSource  handshakes in progress at most from one source address
     * @param waiting    queue pairs waiting to be accepted at most
     */
    public ListenerConfig withLimits(int handshakes, int perSource, int waiting) {
        return new ListenerConfig(queuePairs, admission, handshakes, perSource, waiting, sharedQueues);
    }

    /**
     * {@return this configuration with every accepted queue pair completing into and receiving from {@code queues}}
     *
     * @param queues shared queues of the listener's context
     */
    public ListenerConfig withSharedQueues(SharedQueues queues) {
        return new ListenerConfig(queuePairs, admission, maxHandshakes, maxHandshakesPerSource, maxWaiting, queues);
    }
}
