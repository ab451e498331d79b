package io.zcnet.qp;

/** Queue-pair states, as verbs names them (ibv_modify_qp(3)). */
public enum QpState {
    /** Created, no connection yet. */
    RESET,
    /** The handshake agreed the parameters; the ready-to-receive exchange is under way. */
    INIT,
    /** Ready to receive: receives may be posted and are being filled. */
    RTR,
    /** Ready to send: every work request kind flows. */
    RTS,
    /** Failed or closed: everything outstanding was (or is being) flushed with error completions. */
    ERROR
}
