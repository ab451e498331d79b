package io.zcnet.collective;

import java.io.IOException;

/**
 * A collective operation failed on this rank: a queue pair to a peer failed (its process died, its host went
 * silent, it closed), the ranks disagreed about what they were doing (different operations, counts or
 * algorithms), or nothing moved for the communicator's timeout. The communicator is broken from then on:
 * its queue pairs are closed, so every other rank's operation fails too, and later calls throw at once.
 */
public class CollectiveException extends IOException {
    private static final long serialVersionUID = 1L;

    /** The rank the failure is laid to, or -1; see {@link #peer()}. */
    private final int peer;

    /**
     * Creates the exception of a failed operation.
     *
     * @param message what failed: the operation, its sequence number and this rank, and what went wrong
     * @param peer    the rank the failure is laid to, or -1 when no single peer is known
     * @param cause   the underlying failure (a queue pair's error, an earlier failure of this communicator), or
     *                null
     */
    public CollectiveException(String message, int peer, Throwable cause) {
        super(message, cause);
        this.peer = peer;
    }

    /**
     * {@return the rank whose link failed or who broke the protocol, or -1 when none is known (a timeout waiting
     * on several)}
     */
    public int peer() {
        return peer;
    }
}
