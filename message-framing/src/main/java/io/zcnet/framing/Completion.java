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

    /** An empty holder, filled by {@link CompletionQueue#poll}. */
    public Completion() {
    }

    /** {@return the id given when the receive (or read) was posted} */
    public long workRequestId() {
        return workRequestId;
    }

    /** {@return a {@link CompletionStatus} value} */
    public int status() {
        return status;
    }

    /**
     * {@return the {@link Opcode} of the message's last frame; -1 when the work request was flushed before it arrived}
     */
    public int opcode() {
        return opcode;
    }

    /** {@return the bytes placed by the message} (0 for an error completion). */
    public int byteCount() {
        return byteCount;
    }

    /** {@return the immediate data when {@link Opcode#hasImmediate} of {@link #opcode()}, else 0} */
    public int immediate() {
        return immediate;
    }

    /** {@return the MSN of the message, or -1 for a flushed work request no message reached} */
    public int msn() {
        return msn;
    }

    @Override
    public String toString() {
        return "Completion[wr=" + workRequestId + " " + CompletionStatus.name(status) + " "
                + (opcode < 0 ? "-" : Opcode.name(opcode)) + " bytes=" + byteCount + " imm=" + immediate + " msn=" + msn + "]";
    }
}
