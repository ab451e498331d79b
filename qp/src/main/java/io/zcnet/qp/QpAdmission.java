package io.zcnet.qp;

/**
 * A listener's say over who may open a queue pair: asked for every OPEN whose proposal is well formed, before
 * anything is allocated for it, on the loop thread the OPEN was routed to; with several loops
 * ({@link QpContext#open(io.zcnet.ring.EventLoopConfig, int)}) on several at once, so an admission that keeps state
 * must be thread-safe. It must answer at once (no I/O, no waiting): every handshake of that loop waits while it
 * runs. What it throws refuses the OPEN as if it had refused it.
 */
@FunctionalInterface
public interface QpAdmission {

    /**
     * {@return null to go on with the handshake, or why not} A refused peer gets REFUSE {@code NOT_ADMITTED} and the
     * connection is closed; the reason is counted ({@link Refusal#NOT_ADMITTED}) and recorded in JFR, not sent.
     *
     * @param proposal what the OPEN asks for, and from where
     */
    String refusal(QpProposal proposal);

    /** {@return an admission that lets every well-formed OPEN go on} */
    static QpAdmission everyone() {
        return proposal -> null;
    }
}
