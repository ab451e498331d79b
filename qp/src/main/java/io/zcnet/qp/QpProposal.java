package io.zcnet.qp;

import java.net.InetSocketAddress;

/**
 * What an OPEN asks for, as a listener's {@link QpAdmission} sees it: read and checked, before the listener has
 * made a token, a secret or any part of a queue pair for it.
 *
 * @param peer          where the connection comes from
 * @param segmentSize   the payload bytes per frame proposed
 * @param icrc          whether the peer asks for the ICRC
 * @param messageWindow the message window proposed
 * @param maxSubflows   the subflow limit proposed
 * @param silenceMillis the silence timeout proposed
 * @param preSharedKey  whether the peer says it holds the listener's pre-shared key (proven only later)
 */
public record QpProposal(InetSocketAddress peer, int segmentSize, boolean icrc, int messageWindow, int maxSubflows,
        long silenceMillis, boolean preSharedKey) {
}
