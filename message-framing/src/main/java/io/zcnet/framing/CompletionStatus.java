package io.zcnet.framing;

/**
 * Status of a completion, after {@code enum ibv_wc_status} of ibv_poll_cq(3): the statuses a
 * verbs-style receiver reports, reduced to those this protocol can produce. Stateless, thread-safe.
 */
public final class CompletionStatus {

    /** {@code IBV_WC_SUCCESS}. */
    public static final int SUCCESS = 0;
    /** {@code IBV_WC_LOC_LEN_ERR}: the message was longer than the posted receive buffer. */
    public static final int LOCAL_LENGTH_ERROR = 1;
    /** {@code IBV_WC_REM_ACCESS_ERR}: a key, offset or right was refused. */
    public static final int REMOTE_ACCESS_ERROR = 2;
    /** {@code IBV_WC_RNR_RETRY_EXC_ERR}: a message needed a receive and none was posted. */
    public static final int RNR_ERROR = 3;
    /** {@code IBV_WC_FATAL_ERR}-like: a malformed or inconsistent frame; {@link FrameError} says which. */
    public static final int PROTOCOL_ERROR = 4;
    /** {@code IBV_WC_WR_FLUSH_ERR}: the queue pair went to ERROR before this work request completed. */
    public static final int FLUSH_ERROR = 5;
    /** {@code IBV_WC_LOC_PROT_ERR}: the posted receive's memory region was deregistered before the data came. */
    public static final int LOCAL_PROTECTION_ERROR = 6;

    private static final String[] NAMES = {
        "SUCCESS", "LOCAL_LENGTH_ERROR", "REMOTE_ACCESS_ERROR", "RNR_ERROR", "PROTOCOL_ERROR", "FLUSH_ERROR",
        "LOCAL_PROTECTION_ERROR"
    };

    private CompletionStatus() {
    }

    /**
     * {@return the constant's name, or {@code UNKNOWN(n)}}
     *
     * @param status one of this class's constants, or any int
     */
    public static String name(int status) {
        return status >= 0 && status < NAMES.length ? NAMES[status] : "UNKNOWN(" + status + ")";
    }
}
