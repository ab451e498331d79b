package io.zcnet.qp;

/**
 * The states a {@link QueuePair} can be seen in, named as verbs name them (ibv_modify_qp(3)). Verbs walks a queue
 * pair through RESET, INIT and RTR by hand before it may send; here the handshake does all of that before
 * {@link QpContext#connect} or {@link QpListener#accept} hands the queue pair out, so a user only ever sees the
 * two states below, and there is no call that moves between them but the failure paths and {@link QueuePair#close}.
 */
public enum QpState {
    /** Ready to send: every work request kind flows, and receives are being filled. */
    RTS,
    /** Failed or closed: everything outstanding was (or is being) flushed with error completions. */
    ERROR
}
