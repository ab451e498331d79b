package io.zcnet.qp;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A JFR event for every state a queue pair enters: RTS once its first subflow is up, ERROR with the reason. */
@Name("io.zcnet.QueuePairState")
@Label("zcnet Queue Pair State")
@Category({"zcnet", "Queue Pairs"})
@Description("A queue pair entered a state")
@StackTrace(false)
final class QueuePairStateEvent extends Event {
    @Label("Token")
    @Description("The queue pair's token, as its handshake agreed it")
    long token;

    @Label("State")
    String state;

    @Label("Status")
    @Description("The work completion status it went to ERROR with; empty in RTS")
    String status;

    @Label("Reason")
    String reason;

    /** Records one state change, if the event is enabled. */
    static void emit(long token, QpState state, int status, String reason) {
        QueuePairStateEvent e = new QueuePairStateEvent();
        if (!e.isEnabled()) {
            return;
        }
        e.token = token;
        e.state = state.name();
        e.status = state == QpState.ERROR ? WorkCompletion.statusName(status) : "";
        e.reason = reason == null ? "" : reason;
        e.commit();
    }
}
