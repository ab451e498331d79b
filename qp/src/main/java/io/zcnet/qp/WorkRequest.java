package io.zcnet.qp;

/**
 * One send work request, the {@code struct ibv_send_wr} of ibv_post_send(3) reduced to what zcnet does: a
 * reusable holder that {@link QueuePair#postSend} copies into the send queue, so posting allocates
 * nothing. Fill it with one of the operation methods, optionally {@link #immediate} and
 * {@link #unsignaled}, then post it; the holder may be refilled at once.
 *
 * <p>The local buffer ({@code lkey}, {@code offset}, {@code length}) is one scatter/gather element of a
 * region registered with the queue pair's context. It must stay unchanged (for a SEND or WRITE) or
 * untouched (the sink of a READ) until the work request completes: the data is sent from it, and sent
 * again from it when a subflow fails, as an RDMA adapter reads it when it retransmits.
 *
 * <p>Not thread-safe: one holder per posting thread.
 */
public final class WorkRequest {
    /** SEND: consumes the peer's next posted receive. */
    public static final int SEND = 0;
    /** SEND with immediate data, delivered in the peer's receive completion. */
    public static final int SEND_WITH_IMM = 1;
    /** RDMA WRITE into the peer's region {@code rkey} at {@code remoteOffset}; no completion at the peer. */
    public static final int RDMA_WRITE = 2;
    /** RDMA WRITE that also consumes a posted receive at the peer to deliver the immediate data. */
    public static final int RDMA_WRITE_WITH_IMM = 3;
    /** RDMA READ of the peer's region {@code rkey} at {@code remoteOffset} into the local buffer. */
    public static final int RDMA_READ = 4;

    long workRequestId;
    int opcode = -1;
    boolean signaled;
    int immediate;
    int lkey;
    long localOffset;
    int length;
    int rkey;
    long remoteOffset;

    /** A SEND of {@code length} bytes at {@code offset} of the local region {@code lkey}. */
    public WorkRequest send(long workRequestId, int lkey, long offset, int length) {
        return fill(SEND, workRequestId, lkey, offset, length, 0, 0);
    }

    /** A SEND with immediate data. */
    public WorkRequest sendWithImmediate(long workRequestId, int lkey, long offset, int length, int immediate) {
        fill(SEND_WITH_IMM, workRequestId, lkey, offset, length, 0, 0);
        this.immediate = immediate;
        return this;
    }

    /** An RDMA WRITE of the local bytes to the peer's region {@code rkey} from {@code remoteOffset}. */
    public WorkRequest write(long workRequestId, int lkey, long offset, int length, int rkey, long remoteOffset) {
        return fill(RDMA_WRITE, workRequestId, lkey, offset, length, rkey, remoteOffset);
    }

    /** An RDMA WRITE whose immediate data completes one of the peer's posted receives. */
    public WorkRequest writeWithImmediate(long workRequestId, int lkey, long offset, int length, int rkey,
            long remoteOffset, int immediate) {
        fill(RDMA_WRITE_WITH_IMM, workRequestId, lkey, offset, length, rkey, remoteOffset);
        this.immediate = immediate;
        return this;
    }

    /** An RDMA READ of {@code length} bytes of the peer's region {@code rkey} into the local region {@code lkey}. */
    public WorkRequest read(long workRequestId, int lkey, long offset, int length, int rkey, long remoteOffset) {
        return fill(RDMA_READ, workRequestId, lkey, offset, length, rkey, remoteOffset);
    }

    /**
     * No completion on success ({@code IBV_SEND_SIGNALED} left out); a failure still completes, and a
     * later signaled completion implies this one succeeded.
     */
    public WorkRequest unsignaled() {
        this.signaled = false;
        return this;
    }

    private WorkRequest fill(int opcode, long workRequestId, int lkey, long offset, int length, int rkey,
            long remoteOffset) {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("local range " + offset + "+" + length + " is negative");
        }
        if (remoteOffset < 0 || remoteOffset > Long.MAX_VALUE - length) {
            throw new IllegalArgumentException("remote offset " + remoteOffset + " with length " + length
                    + " is negative or overflows");
        }
        this.opcode = opcode;
        this.workRequestId = workRequestId;
        this.lkey = lkey;
        this.localOffset = offset;
        this.length = length;
        this.rkey = rkey;
        this.remoteOffset = remoteOffset;
        this.immediate = 0;
        this.signaled = true;
        return this;
    }

    public long workRequestId() {
        return workRequestId;
    }

    /** One of {@link #SEND} .. {@link #RDMA_READ}, or -1 before the holder is filled. */
    public int opcode() {
        return opcode;
    }

    static String opcodeName(int opcode) {
        return switch (opcode) {
            case SEND -> "SEND";
            case SEND_WITH_IMM -> "SEND_WITH_IMM";
            case RDMA_WRITE -> "RDMA_WRITE";
            case RDMA_WRITE_WITH_IMM -> "RDMA_WRITE_WITH_IMM";
            case RDMA_READ -> "RDMA_READ";
            default -> "opcode " + opcode;
        };
    }

    @Override
    public String toString() {
        return "WorkRequest[" + opcodeName(opcode) + " wr=" + workRequestId + " local=0x" + Integer.toHexString(lkey)
                + "@" + localOffset + "+" + length + " remote=0x" + Integer.toHexString(rkey) + "@" + remoteOffset
                + " imm=" + immediate + (signaled ? "" : " unsignaled") + "]";
    }
}
