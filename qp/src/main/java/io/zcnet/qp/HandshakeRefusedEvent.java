package io.zcnet.qp;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

import java.net.InetSocketAddress;

/**
 * A JFR event for every connection a listener turned away before it became a queue pair or a subflow: an
 * operator sees who knocked, and why they were refused, without a log line per stranger.
 */
@Name("io.zcnet.HandshakeRefused")
@Label("zcnet Handshake Refused")
@Category({"zcnet", "Queue Pairs"})
@Description("A connection a queue-pair listener refused or dropped during its handshake")
@StackTrace(false)
final class HandshakeRefusedEvent extends Event {
    @Label("Listener")
    String listener;

    @Label("Peer")
    String peer;

    @Label("Cause")
    String cause;

    @Label("Reason")
    String reason;

    /** Records one refusal, if the event is enabled: nothing is built otherwise. */
    static void emit(InetSocketAddress listener, InetSocketAddress peer, Refusal cause, String reason) {
        HandshakeRefusedEvent e = new HandshakeRefusedEvent();
        if (!e.isEnabled()) {
            return;
        }
        e.listener = String.valueOf(listener);
        e.peer = String.valueOf(peer);
        e.cause = cause.name();
        e.reason = reason;
        e.commit();
    }
}
