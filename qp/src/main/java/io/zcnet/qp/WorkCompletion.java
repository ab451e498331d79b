package io.zcnet.qp;

/**
 * One completion, the {@code struct ibv_wc} of ibv_poll_cq(3) reduced: a reusable holder that
 * {@link QueuePair#poll} or {@link SharedCompletionQueue#poll} fills, so polling allocates nothing. Not
 * thread-safe: one holder per polling thread.
 */
public final class WorkCompletion {
    /** The work request did what it asked. */
    public static final int SUCCESS = 0;
    /** A received message was longer than the posted receive. */
    public static final int LOCAL_LENGTH_ERROR = 1;
    /** A local key, range or right was refused, or the region went away while in use. */
    public static final int LOCAL_PROTECTION_ERROR = 2;
    /** The peer refused a remote key, range or right (RDMA WRITE, WRITE with immediate, READ). */
    public static final int REMOTE_ACCESS_ERROR = 3;
    /** The peer found the request invalid: it broke the protocol, or no receive was posted for it. */
    public static final int REMOTE_INVALID_REQUEST = 4;
    /** Flushed: the queue pair went to ERROR (or was closed) before this work request finished. */
    public static final int FLUSH_ERROR = 5;
    /** Every subflow failed, or the peer broke the protocol on one: the transport gave up. */
    public static final int TRANSPORT_ERROR = 6;
    /**
     * The peer could not carry out the request for a reason of its own: the region of the receive it
     * posted went away before the data landed ({@code IBV_WC_REM_OP_ERR}).
     */
    public static final int REMOTE_OPERATIONAL_ERROR = 7;
    /**
     * The peer stopped taking what this side sends: outstanding work made no progress (nothing it was owed was
     * acknowledged) for {@link QpConfig#sendTimeout()} while the subflows stayed up, as verbs report
     * {@code IBV_WC_RETRY_EXC_ERR} once {@code timeout} and {@code retry_cnt} are spent.
     */
    public static final int RETRY_EXCEEDED_ERROR = 8;
    /**
     * Something on this side threw while running for the queue pair (its completion listener, or a fault of
     * zcnet's own): the queue pair failed alone, {@link QueuePair#errorReason()} names the exception
     * ({@code IBV_WC_GENERAL_ERR}).
     */
    public static final int GENERAL_ERROR = 9;
    /**
     * The context's event loop stopped with an error: every queue pair of it failed with this status, and
     * {@link QpContext#failure()} holds the cause ({@code IBV_WC_FATAL_ERR}).
     */
    public static final int FATAL_ERROR = 10;

    /** Completion of a SEND or SEND with immediate. */
    public static final int OP_SEND = 0;
    /** Completion of an RDMA WRITE (with or without immediate). */
    public static final int OP_RDMA_WRITE = 1;
    /** Completion of an RDMA READ. */
    public static final int OP_RDMA_READ = 2;
    /** A posted receive took a SEND. */
    public static final int OP_RECV = 3;
    /** A posted receive took the immediate data of an RDMA WRITE with immediate. */
    public static final int OP_RECV_RDMA_WITH_IMM = 4;

    long workRequestId;
    int status;
    int opcode;
    int byteCount;
    int immediate;
    boolean hasImmediate;
    QueuePair queuePair;

    /** An empty holder, filled by {@link QueuePair#poll}. */
    public WorkCompletion() {
    }

    /** {@return the id the work request or receive was posted with} */
    public long workRequestId() {
        return workRequestId;
    }

    /** {@return {@link #SUCCESS} or the error status} */
    public int status() {
        return status;
    }

    /** {@return whether the status is {@link #SUCCESS}} */
    public boolean isSuccess() {
        return status == SUCCESS;
    }

    /** {@return the kind of work that completed}: {@link #OP_SEND} .. {@link #OP_RECV_RDMA_WITH_IMM}. */
    public int opcode() {
        return opcode;
    }

    /** {@return the bytes received (receive completions) or transferred} */
    public int byteCount() {
        return byteCount;
    }

    /** {@return the immediate data}, when {@link #hasImmediate()}. */
    public int immediate() {
        return immediate;
    }

    /** {@return whether the message carried immediate data ({@code IBV_WC_WITH_IMM})} */
    public boolean hasImmediate() {
        return hasImmediate;
    }

    /**
     * {@return the queue pair the completion is of ({@code ibv_wc.qp_num})}: the one polled, or for a
     * {@link SharedCompletionQueue} the one among its members that completed it (possibly closed since).
     */
    public QueuePair queuePair() {
        return queuePair;
    }

    /**
     * {@return the name of a status constant, or {@code "status N"}}
     *
     * @param status a status constant
     */
    public static String statusName(int status) {
        return switch (status) {
            case SUCCESS -> "SUCCESS";
            case LOCAL_LENGTH_ERROR -> "LOCAL_LENGTH_ERROR";
            case LOCAL_PROTECTION_ERROR -> "LOCAL_PROTECTION_ERROR";
            case REMOTE_ACCESS_ERROR -> "REMOTE_ACCESS_ERROR";
            case REMOTE_INVALID_REQUEST -> "REMOTE_INVALID_REQUEST";
            case FLUSH_ERROR -> "FLUSH_ERROR";
            case TRANSPORT_ERROR -> "TRANSPORT_ERROR";
            case REMOTE_OPERATIONAL_ERROR -> "REMOTE_OPERATIONAL_ERROR";
            case RETRY_EXCEEDED_ERROR -> "RETRY_EXCEEDED_ERROR";
            case GENERAL_ERROR -> "GENERAL_ERROR";
            case FATAL_ERROR -> "FATAL_ERROR";
            default -> "status " + status;
        };
    }

    /**
     * {@return the name of an opcode constant}
     *
     * @param opcode an {@code OP_*} constant
     */
    public static String opcodeName(int opcode) {
        return switch (opcode) {
            case OP_SEND -> "SEND";
            case OP_RDMA_WRITE -> "RDMA_WRITE";
            case OP_RDMA_READ -> "RDMA_READ";
            case OP_RECV -> "RECV";
            case OP_RECV_RDMA_WITH_IMM -> "RECV_RDMA_WITH_IMM";
            default -> "opcode " + opcode;
        };
    }

    @Override
    public String toString() {
        return "WorkCompletion[wr=" + workRequestId + " " + statusName(status) + " " + opcodeName(opcode)
                + " bytes=" + byteCount + (hasImmediate ? " imm=" + immediate : "") + "]";
    }
}
