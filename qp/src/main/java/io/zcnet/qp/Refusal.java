package io.zcnet.qp;

/**
 * Why a listener turned a connection away before it became a queue pair or a subflow: the causes its counters
 * ({@link QpListener#refused(Refusal)}) and the {@code io.zcnet.HandshakeRefused} JFR event name.
 */
public enum Refusal {
    /** Not a zcnet handshake, a proposal out of range, or a frame of the handshake that breaks a rule. */
    MALFORMED,
    /** The listener's {@link QpAdmission} refused the OPEN (REFUSE {@code NOT_ADMITTED}). */
    NOT_ADMITTED,
    /** As many queue pairs waited to be accepted as the listener holds (REFUSE {@code BUSY}). */
    BUSY,
    /** The listener had as many handshakes in progress as it may, and this one was the cheapest to lose. */
    HANDSHAKE_LIMIT,
    /** Its source address had as many handshakes in progress as one source may: closed unread. */
    SOURCE_LIMIT,
    /** The handshake did not finish within the handshake timeout. */
    TIMED_OUT,
    /** The pre-shared key was missing, or a proof did not verify (a stranger, or a replay). */
    BAD_PROOF,
    /** A JOIN named no queue pair, one in ERROR, or one with as many subflows as it may have. */
    BAD_JOIN,
    /** The connection broke or was closed by the peer during the handshake. */
    DISCONNECTED,
    /** The listener closed while the handshake was in progress. */
    CLOSED
}
