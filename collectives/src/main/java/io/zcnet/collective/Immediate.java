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
 * (bit 0 is the most significant). {@code schedule}: a {@link Schedule}'s code; {@code sequence}: the
 * operation's number in the communicator, mod 128; {@code index}: the message's number among those the
 * operation sends on this link, mod 2^20. A link delivers in order, so a receiver knows all three of the
 * next message and compares: a difference means the ranks called different operations, counts or
 * algorithms, and is reported as such rather than reduced into garbage.
 *
 * <p>{@link Schedule#ALLREDUCE_FOLDED}'s index field carries a {@linkplain Schedule#carriesHint hint} instead.
 *
 * <p>Stateless, thread-safe.
 */
final class Immediate {
    /** The immediate of the 0-byte SEND that tells an accepting rank who connected: tag in the top byte. */
    static final int HELLO = 0x5A00_0000;

    private static final int SEQUENCE_BITS = 7;
    private static final int INDEX_BITS = 20;
    private static final int SEQUENCE_MASK = (1 << SEQUENCE_BITS) - 1;
    private static final int INDEX_MASK = (1 << INDEX_BITS) - 1;

    private Immediate() {
    }

    static int of(Schedule schedule, long sequence, long index) {
        return schedule.code << (SEQUENCE_BITS + INDEX_BITS) | ((int) sequence & SEQUENCE_MASK) << INDEX_BITS
                | (int) index & INDEX_MASK;
    }

    /** The largest hint: what the index field holds. */
    static int maxHint() {
        return INDEX_MASK;
    }

    /** {@return the schedule field}: a {@link Schedule}'s code if the sender is a rank of this communicator */
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

    /** {@code "ring allreduce #5 message 17"}, for error messages. */
    static String describe(int immediate) {
        int schedule = schedule(immediate);
        String field = schedule == Schedule.ALLREDUCE_FOLDED.code ? " hint " : " message ";
        return Schedule.describe(schedule) + " #" + sequence(immediate) + field + index(immediate);
    }
}
