package io.zcnet.framing;

/**
 * A reusable holder that {@link CompletionQueue#poll} fills, so reading completions allocates nothing
 * (the verbs {@code struct ibv_wc}, reduced). Not thread-safe: owned by the polling thread.
 */
public final class Completion {
    long workRequestId;
    int status;
    int opcode;
    int byteCount;
    int immediate;
    int msn;

    /** The id given when the receive (or read) was posted. */
    public long workRequestId() {
        return workRequestId;
    }

    /** A {@link CompletionStatus} value. */
    public int status() {
        return status;
    }

    /** The {@link Opcode} of the message's last frame; -1 when the work request was flushed before it arrived. */
    public int opcode() {
        return opcode;
    }

    /** Bytes placed by the message (0 for an error completion). */
    public int byteCount() {
        return byteCount;
    }

    /** Immediate data when {@link Opcode#hasImmediate} of {@link #opcode()}, else 0. */
    public int immediate() {
        return immediate;
    }

    /** MSN of the message, or -1 for a flushed work request no message reached. */
    public int msn() {
        return msn;
    }

    @Override
    public String toString() {
        return "Completion[wr=" + workRequestId + " " + CompletionStatus.name(status) + " "
                + (opcode < 0 ? "-" : Opcode.name(opcode)) + " bytes=" + byteCount + " imm=" + immediate + " msn=" + msn + "]";
    }
}
