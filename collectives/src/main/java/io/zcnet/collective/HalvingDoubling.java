package io.zcnet.collective;

import io.zcnet.ring.CurrentCpu;

import java.lang.foreign.MemorySegment;
import java.util.function.IntSupplier;

/**
 * Allreduce by recursive halving and doubling (Rabenseifner's algorithm) over the largest power of two P of
 * ranks. Reduce-scatter by halving: in step k each rank exchanges half of the range it still holds with the
 * rank whose number differs in bit log2(P)-1-k, keeping the half that bit selects and reducing the
 * partner's copy of it into its own; after log2(P) steps it holds one P-th, fully reduced. Allgather by
 * doubling runs the steps backwards, swapping finished ranges. 2 log2(P) steps instead of the ring's
 * 2(N-1), for the same bytes: the choice for small and medium messages.
 *
 * <p>When N is not a power of two, the first 2(N-P) ranks fold in pairs before and after: each even one
 * sends its whole input to the odd one above it, which reduces it into its own and takes part in the
 * power-of-two algorithm under the number {@code r / 2}; at the end it sends the whole result back. Ranks
 * from 2(N-P) on take part as {@code r - (N-P)}.
 *
 * <p>Every step is a pair of {@link Streams}: what a rank sends in a step was finished in the steps before,
 * and what it receives it reduces straight into the output. The output holds the running result from the
 * first reduction on; the input is read only before it. One thread at a time; nothing allocates.
 *
 * <p>Up to {@link #DOUBLING_BYTES} (and one slot) the power-of-two ranks run recursive doubling instead:
 * log2(P) whole-vector swaps, half the steps, as MPICH does for short messages. When the ranks share CPU
 * cores ({@link CoreSharing}) and N is a power of two of at least 4, recursive doubling runs among P/2 ranks
 * after every rank folded in pairs: one step more, and (N/2)(log2(N) - 1) messages fewer (6 instead of 8
 * for four ranks), since there each message costs CPU that another rank waits for.
 *
 * <p>Four ranks folded that way choose {@linkplain #foldsAdaptively where to fold} (schedule
 * {@link Schedule#ALLREDUCE_FOLDED}). The two ranks of the middle step do the operation's work while the
 * other two wait; when the scheduler puts both on one core (one of the three ways to share two cores among
 * four polling ranks), all of it runs on that core while the other holds the waiting ranks, and the
 * operation takes some 1.5 times as long. So the middle ranks tell each other their CPU ({@link CurrentCpu})
 * in the hint of their exchange, and when both name the same one, ranks 0 and 1 swap roles for the next
 * operation: the survivor hands its role over in the hint of the result it sends back. Both middle ranks
 * decide alike from the same two numbers. With two ranks on each core, the new survivor is on the other
 * core, so one operation later the middle step runs on both cores again.
 */
final class HalvingDoubling {
    private final Streams streams;
    private final int rank;
    private final int size;
    /** Largest message allreduced by recursive doubling (MPICH's MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE). */
    static final int DOUBLING_BYTES = 2048;
    /** The hint of a folded result whose receiver runs the middle step of the next operation. */
    private static final int TAKE_OVER = 1;
    private final int powerOfTwo;
    /** How many ranks run recursive doubling: P, or P/2 when the ranks share cores and all fold. */
    private final int doublingRanks;
    /** Block starts, in elements, of the P blocks the power-of-two ranks share. */
    private final long[] starts;
    /** Whether each rank runs on this rank's kernel: only then do two CPU numbers compare. */
    private final boolean[] sameKernel;
    /** Where this rank runs: {@link CurrentCpu#get()}, or what a test says. */
    IntSupplier cpu = CurrentCpu::get;
    /**
     * Adaptive fold: whether ranks 0 and 1 fold into rank 0 (else into rank 1). Kept by ranks 0, 1 and 3, the
     * ones that ever talk to the survivor of that pair; rank 2's copy is never read.
     */
    private boolean evenSurvives;

    /** @param sameKernel per rank, whether it runs on this rank's kernel (so on the same CPUs) */
    HalvingDoubling(Streams streams, int rank, int size, boolean coresShared, boolean[] sameKernel) {
        this.streams = streams;
        this.rank = rank;
        this.size = size;
        this.sameKernel = sameKernel.clone();
        this.powerOfTwo = Integer.highestOneBit(size);
        this.doublingRanks = doublingRanks(size, coresShared);
        this.starts = new long[powerOfTwo + 1];
    }

    /** How many of {@code size} ranks run recursive doubling: P, or P/2 when they share cores and all fold. */
    private static int doublingRanks(int size, boolean coresShared) {
        int powerOfTwo = Integer.highestOneBit(size);
        return coresShared && size == powerOfTwo && size >= 4 ? powerOfTwo / 2 : powerOfTwo;
    }

    /**
     * Whether an allreduce of {@code bytes} among {@code size} ranks folds adaptively: four ranks sharing
     * cores, a message of one slot at most. Its schedule is then {@link Schedule#ALLREDUCE_FOLDED}, every
     * rank deciding alike, and {@link #foldedAdaptively} runs it instead of {@link #allreduce}.
     */
    static boolean foldsAdaptively(int size, boolean coresShared, long bytes, int slotBytes) {
        return size == 4 && doublingRanks(size, coresShared) == 2 && bytes <= Math.min(DOUBLING_BYTES, slotBytes);
    }

    void allreduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op, int slotBytes)
            throws CollectiveException {
        boolean doubling = count * type.byteSize() <= Math.min(DOUBLING_BYTES, slotBytes);
        int extra = size - (doubling ? doublingRanks : powerOfTwo);
        MemorySegment source = input;
        int virtual;
        if (rank < 2 * extra) {
            int partner = rank ^ 1;
            if ((rank & 1) == 0) {
                streams.clear().send(partner, input, 0, count).run(type, op, slotBytes);
                streams.clear().receive(partner, output, 0, count).run(type, op, slotBytes);
                return;
            }
            streams.clear().receiveReducing(partner, output, 0, count, input).run(type, op, slotBytes);
            source = output;
            virtual = rank / 2;
        } else {
            virtual = rank - extra;
        }
        if (doubling) {
            recursiveDoubling(source, output, count, type, op, slotBytes, virtual, extra);
        } else {
            halvingDoubling(source, output, count, type, op, slotBytes, virtual, extra);
        }
        if (rank < 2 * extra) {
            streams.clear().send(rank ^ 1, output, 0, count).run(type, op, slotBytes);
        }
    }

    /**
     * Four ranks folded in pairs, recursive doubling between the two survivors, the result sent back; the
     * survivor of ranks 0 and 1 chosen as the class comment says. The survivors reduce the same two operands
     * in the middle step (every operation is commutative), so every rank ends with the same bits.
     */
    void foldedAdaptively(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op,
            int slotBytes) throws CollectiveException {
        int pair = rank >> 1;
        int survivor = pair == 0 && evenSurvives ? 0 : 2 * pair + 1;
        int partner = rank ^ 1;
        if (rank != survivor) {
            streams.clear().send(partner, input, 0, count).run(type, op, slotBytes);
            streams.clear().receive(partner, output, 0, count).run(type, op, slotBytes);
            if (streams.receivedHint(partner) == TAKE_OVER) {
                evenSurvives = !evenSurvives;
            }
            return;
        }
        streams.clear().receiveReducing(partner, output, 0, count, input).run(type, op, slotBytes);
        int other = pair == 1 ? (evenSurvives ? 0 : 1) : 3;
        // CPU + 1, so that 0 says "unknown" (no native access, or another machine), which never matches.
        int where = sameKernel[other] ? Math.clamp(cpu.getAsInt() + 1L, 0, Immediate.maxHint()) : 0;
        streams.clear().send(other, output, 0, count).hint(other, where).run(type, op, slotBytes);
        streams.clear().receiveReducing(other, output, 0, count, output).run(type, op, slotBytes);
        boolean together = where > 0 && streams.receivedHint(other) == where;
        if (together) {
            evenSurvives = !evenSurvives;
        }
        streams.clear().send(partner, output, 0, count).hint(partner, together && pair == 0 ? TAKE_OVER : 0)
                .run(type, op, slotBytes);
    }

    /**
     * Recursive doubling, for messages of one slot or less: in step k each rank swaps its whole running result
     * with the rank whose number differs in bit k and reduces the two, so log2(P) steps of one message
     * instead of halving and doubling's 2 log2(P); the bytes do not matter at this size, the steps do (MPICH
     * takes it below 2 KiB). Both partners reduce the same two operands, and every operation is commutative,
     * so every rank ends with the same bits. The send is posted before the receive is looked at, so an
     * in-place output is copied to the outbox before the partner's message is reduced into it.
     */
    private void recursiveDoubling(MemorySegment source, MemorySegment output, long count, DataType type, ReduceOp op,
            int slotBytes, int virtual, int extra) throws CollectiveException {
        for (int mask = 1; mask < doublingRanks; mask <<= 1) {
            int partner = real(virtual ^ mask, extra);
            streams.clear().send(partner, source, 0, count).run(type, op, slotBytes);
            streams.clear().receiveReducing(partner, output, 0, count, source).run(type, op, slotBytes);
            source = output;
        }
    }

    private void halvingDoubling(MemorySegment source, MemorySegment output, long count, DataType type, ReduceOp op,
            int slotBytes, int virtual, int extra) throws CollectiveException {
        for (int b = 0; b <= powerOfTwo; b++) {
            starts[b] = count * b / powerOfTwo;
        }
        int lo = 0;
        int hi = powerOfTwo;
        for (int mask = powerOfTwo >> 1; mask > 0; mask >>= 1) {
            int mid = (lo + hi) >>> 1;
            boolean upper = (virtual & mask) != 0;
            int keepLo = upper ? mid : lo;
            int keepHi = upper ? hi : mid;
            int sendLo = upper ? lo : mid;
            int partner = real(virtual ^ mask, extra);
            streams.clear().send(partner, source, starts[sendLo], starts[sendLo + (hi - lo) / 2] - starts[sendLo])
                    .receiveReducing(partner, output, starts[keepLo], starts[keepHi] - starts[keepLo], source)
                    .run(type, op, slotBytes);
            source = output;
            lo = keepLo;
            hi = keepHi;
        }
        for (int mask = 1; mask < powerOfTwo; mask <<= 1) {
            int width = hi - lo;
            int theirLo = (virtual & mask) == 0 ? hi : lo - width;
            int partner = real(virtual ^ mask, extra);
            streams.clear().send(partner, output, starts[lo], starts[hi] - starts[lo])
                    .receive(partner, output, starts[theirLo], starts[theirLo + width] - starts[theirLo])
                    .run(type, op, slotBytes);
            lo = Math.min(lo, theirLo);
            hi = lo + 2 * width;
        }
    }

    /** The rank that takes part in the power-of-two algorithm as {@code virtual}. */
    private static int real(int virtual, int extra) {
        return virtual < extra ? virtual * 2 + 1 : virtual + extra;
    }
}
