package io.zcnet.collective;

/**
 * The 32-bit immediate of every collective message (an RDMA WRITE with immediate into a staging slot):
 * which schedule (operation and algorithm) sent it, in which operation of the communicator, and which
 * message of that operation it is on its link.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |schedule |  sequence   |                 index                 |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * (bit 0 is the most significant). {@code schedule}: one of the constants below; {@code sequence}: the
 * operation's number in the communicator, mod 128; {@code index}: the message's number among those the
 * operation sends on this link, mod 2^20. A link delivers in order, so a receiver knows all three of the
 * next message and compares: a difference means the ranks called different operations, counts or
 * algorithms, and is reported as such rather than reduced into garbage.
 *
 * <p>{@link #ALLREDUCE_FOLDED} sends one message each way on a link per operation, so its index is always 0
 * and the field carries a {@linkplain #carriesHint hint} instead: what the sender tells the receiver about
 * where the ranks run ({@link HalvingDoubling}).
 *
 * <p>Stateless, thread-safe.
 */
final class Immediate {
    static final int BARRIER = 1;
    static final int ALLREDUCE_RING = 2;
    static final int ALLREDUCE_HALVING_DOUBLING = 3;
    static final int REDUCE_SCATTER_RING = 4;
    static final int ALLGATHER_RING = 5;
    static final int ALLGATHER_DIRECT = 6;
    static final int BROADCAST_TREE = 7;
    static final int BROADCAST_RING = 8;
    static final int BROADCAST_DIRECT = 9;
    static final int REDUCE_TREE = 10;
    static final int REDUCE_RING = 11;
    static final int ALL_TO_ALL = 12;
    static final int ALLREDUCE_FOLDED = 13;
    /** The immediate of the 0-byte SEND that tells an accepting rank who connected: tag in the top byte. */
    static final int HELLO = 0x5A00_0000;

    private static final String[] NAMES = {"?", "barrier", "ring allreduce", "halving-doubling allreduce",
        "ring reduce-scatter", "ring allgather", "direct allgather", "tree broadcast", "ring broadcast",
        "direct broadcast", "tree reduce", "ring reduce", "all-to-all", "folded recursive-doubling allreduce"};

    private static final int SEQUENCE_BITS = 7;
    private static final int INDEX_BITS = 20;
    private static final int SEQUENCE_MASK = (1 << SEQUENCE_BITS) - 1;
    private static final int INDEX_MASK = (1 << INDEX_BITS) - 1;

    private Immediate() {
    }

    static int of(int schedule, long sequence, long index) {
        return schedule << (SEQUENCE_BITS + INDEX_BITS) | ((int) sequence & SEQUENCE_MASK) << INDEX_BITS
                | (int) index & INDEX_MASK;
    }

    /** Whether the index field of {@code schedule}'s messages carries a hint rather than the message's index. */
    static boolean carriesHint(int schedule) {
        return schedule == ALLREDUCE_FOLDED;
    }

    /** The largest hint: what the index field holds. */
    static int maxHint() {
        return INDEX_MASK;
    }

    static int schedule(int immediate) {
        return immediate >>> (SEQUENCE_BITS + INDEX_BITS);
    }

    static int sequence(int immediate) {
        return immediate >>> INDEX_BITS & SEQUENCE_MASK;
    }

    static int index(int immediate) {
        return immediate & INDEX_MASK;
    }

    static int hello(int rank) {
        return HELLO | rank;
    }

    /** The rank a hello names, or -1 if {@code immediate} is no hello. */
    static int helloRank(int immediate) {
        return (immediate & 0xFF00_0000) == HELLO ? immediate & 0x00FF_FFFF : -1;
    }

    static String name(int schedule) {
        return schedule > 0 && schedule < NAMES.length ? NAMES[schedule] : "schedule " + schedule;
    }

    /** {@code "ring allreduce #5 message 17"}, for error messages. */
    static String describe(int immediate) {
        int schedule = schedule(immediate);
        String field = carriesHint(schedule) ? " hint " : " message ";
        return name(schedule) + " #" + sequence(immediate) + field + index(immediate);
    }
}
