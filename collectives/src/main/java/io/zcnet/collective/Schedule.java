package io.zcnet.collective;

/**
 * What an operation runs: the operation and its algorithm. Its {@link #code} is the schedule field of every
 * message's immediate ({@link Immediate}), so the codes are wire format: never renumber one. Stateless,
 * thread-safe.
 */
enum Schedule {
    BARRIER(1, "barrier"),
    ALLREDUCE_RING(2, "ring allreduce"),
    ALLREDUCE_HALVING_DOUBLING(3, "halving-doubling allreduce"),
    REDUCE_SCATTER_RING(4, "ring reduce-scatter"),
    ALLGATHER_RING(5, "ring allgather"),
    ALLGATHER_DIRECT(6, "direct allgather"),
    BROADCAST_TREE(7, "tree broadcast"),
    BROADCAST_RING(8, "ring broadcast"),
    BROADCAST_DIRECT(9, "direct broadcast"),
    REDUCE_TREE(10, "tree reduce"),
    REDUCE_RING(11, "ring reduce"),
    ALL_TO_ALL(12, "all-to-all"),
    /**
     * Sends one message each way on a link per operation, so its index is always 0 and the field carries a
     * {@linkplain #carriesHint hint} instead: what the sender tells the receiver about where the ranks run
     * ({@link HalvingDoubling}).
     */
    ALLREDUCE_FOLDED(13, "folded recursive-doubling allreduce");

    private static final Schedule[] BY_CODE = new Schedule[32];

    static {
        for (Schedule s : values()) {
            BY_CODE[s.code] = s;
        }
    }

    /** The immediate's 5-bit schedule field. */
    final int code;
    private final String label;

    Schedule(int code, String label) {
        this.code = code;
        this.label = label;
    }

    /** Whether the index field of this schedule's messages carries a hint rather than the message's index. */
    boolean carriesHint() {
        return this == ALLREDUCE_FOLDED;
    }

    /** {@return what the schedule field {@code code} of a received immediate names}, for error messages */
    static String describe(int code) {
        Schedule s = code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
        return s == null ? "schedule " + code : s.label;
    }

    @Override
    public String toString() {
        return label;
    }
}
