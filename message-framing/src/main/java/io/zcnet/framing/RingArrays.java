package io.zcnet.framing;

import java.lang.reflect.Array;

/**
 * Growing a ring of parallel arrays indexed by sequence number modulo their length, a power of two: the tables
 * of a queue pair that start small and grow on demand up to their bound ({@link CompletionQueue}, the receive
 * queue, the qp layer's send ledger and resend records). Growth is the only time these tables allocate, so it
 * may take the reflective way to one method for every column type.
 */
public final class RingArrays {

    private RingArrays() {
    }

    /**
     * {@return a copy of {@code old} with {@code size} entries, in which every entry of the sequences
     * {@code [from, to)} sits at its sequence modulo the new size; the others are as a new array has them}
     *
     * @param <A>  the array type ({@code long[]}, {@code int[]}, {@code SgeList[]}, ...)
     * @param old  the entries, a power of two of them
     * @param size the new length, a power of two at least {@code to - from}
     * @param from the oldest sequence still held
     * @param to   the sequence after the newest held
     */
    @SuppressWarnings("unchecked")
    public static <A> A grown(A old, int size, long from, long to) {
        int length = Array.getLength(old);
        A grown = (A) Array.newInstance(old.getClass().getComponentType(), size);
        for (long seq = from; seq < to; ) {
            int at = (int) seq & (length - 1);
            int into = (int) seq & (size - 1);
            int run = (int) Math.min(to - seq, Math.min(length - at, size - into));
            System.arraycopy(old, at, grown, into, run);
            seq += run;
        }
        return grown;
    }

    /**
     * {@return {@code old} {@linkplain #grown(Object, int, long, long) grown}, with new lists of up to
     * {@code maxSge} pieces (one {@link SgeList#table}) in the places the held ones left} The held lists are
     * the same objects, so a list taken before the growth stays its entry's.
     *
     * @param old    the lists, a power of two of them
     * @param size   the new length, a power of two at least {@code to - from}
     * @param from   the oldest sequence still held
     * @param to     the sequence after the newest held
     * @param maxSge pieces per new list
     */
    public static SgeList[] grownLists(SgeList[] old, int size, long from, long to, int maxSge) {
        SgeList[] lists = grown(old, size, from, to);
        SgeList[] added = SgeList.table(size - (int) (to - from), maxSge);
        int next = 0;
        for (int i = 0; i < size; i++) {
            if (lists[i] == null) {
                lists[i] = added[next++];
            }
        }
        return lists;
    }
}
