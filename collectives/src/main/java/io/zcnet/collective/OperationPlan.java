package io.zcnet.collective;

import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/**
 * One operation of a communicator as it is to run: a call's arguments checked ({@link Checks}), its
 * {@link Schedule} chosen from the algorithm asked for (or, for {@link Algorithm#AUTO}, from its size and the
 * rank count, as {@link Algorithm} tabulates), and its blocks laid out. A plan with no schedule sends nothing:
 * a count of 0, or a rank alone, which only copies {@link #aloneBytes} from input to output.
 *
 * <p>One per communicator, refilled by each call, so planning allocates nothing. The calling thread writes
 * it, then the thread that runs the operation ({@link ScheduleRunner}) reads it; handing the operation to
 * the loop thread orders the two. A refused call throws {@link IllegalArgumentException} and leaves what is
 * planned unspecified, never run.
 */
final class OperationPlan {
    private static final Set<Algorithm> ALLREDUCE = EnumSet.of(Algorithm.RING, Algorithm.HALVING_DOUBLING);
    private static final Set<Algorithm> ALLGATHER = EnumSet.of(Algorithm.RING, Algorithm.DIRECT);
    private static final Set<Algorithm> BROADCAST = EnumSet.of(Algorithm.TREE, Algorithm.RING, Algorithm.DIRECT);
    private static final Set<Algorithm> REDUCE = EnumSet.of(Algorithm.TREE, Algorithm.RING);

    private final int rank;
    private final int size;
    private final long smallMessageBytes;
    private final int slotBytes;
    private final boolean coresShared;

    /** The blocks of a ring or a direct allgather, in elements; the ring cuts them into slices. */
    final Slicing blocks;
    /** All-to-all: block p of the input starts at element {@code sendStarts[p]}, and ends at the next. */
    final long[] sendStarts;
    /** All-to-all: block p of the output starts at element {@code receiveStarts[p]}, and ends at the next. */
    final long[] receiveStarts;

    /** What runs; null when nothing is sent. */
    Schedule schedule;
    MemorySegment input;
    /** Where the result goes: the input itself for broadcast, null for reduce on a rank other than the root. */
    MemorySegment output;
    long count;
    DataType type;
    ReduceOp op;
    int root;
    /** The most bytes the operation sends or receives: what decides where it runs. */
    long bytes;
    /** With no schedule, what a rank alone copies from input to output (0: nothing). */
    long aloneBytes;

    /** Plans for {@code rank} of {@code size} ranks that joined with {@code config}, sharing cores or not. */
    OperationPlan(int rank, int size, CommunicatorConfig config, boolean coresShared) {
        this.rank = rank;
        this.size = size;
        this.smallMessageBytes = config.smallMessageBytes();
        this.slotBytes = config.slotBytes();
        this.coresShared = coresShared;
        this.blocks = new Slicing(size);
        this.sendStarts = new long[size + 1];
        this.receiveStarts = new long[size + 1];
    }

    void barrier() {
        runs(Schedule.BARRIER, 0, null, null, 0, null, null, 0);
    }

    void allreduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op,
            Algorithm algorithm) {
        Checks.reduction(type, op);
        Checks.count(count, "count");
        Checks.holds(input, "input", count, type);
        Checks.receives(output, "output", count, type);
        long bytes = count * type.byteSize();
        Checks.apartOrInPlace(input, bytes, output, bytes, 0);
        Algorithm a = choose(algorithm, ALLREDUCE, "allreduce", bytes, Algorithm.HALVING_DOUBLING, Algorithm.RING);
        if (count == 0) {
            nothing();
        } else if (size == 1) {
            alone(input, output, bytes);
        } else if (a == Algorithm.RING) {
            blocks.even(count);
            runs(Schedule.ALLREDUCE_RING, bytes, input, output, count, type, op, 0);
        } else {
            runs(HalvingDoubling.foldsAdaptively(size, coresShared, bytes, slotBytes) ? Schedule.ALLREDUCE_FOLDED
                    : Schedule.ALLREDUCE_HALVING_DOUBLING, bytes, input, output, count, type, op, 0);
        }
    }

    void reduceScatter(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op) {
        reduceScatterBlocks(input, output, uniformBlocks(count), type, op);
    }

    void reduceScatter(MemorySegment input, MemorySegment output, long[] counts, DataType type, ReduceOp op) {
        reduceScatterBlocks(input, output, countedBlocks(counts), type, op);
    }

    /** The blocks are in {@link #blocks}. */
    private void reduceScatterBlocks(MemorySegment input, MemorySegment output, long total, DataType type,
            ReduceOp op) {
        Checks.reduction(type, op);
        long[] starts = blocks.starts;
        long mine = starts[rank + 1] - starts[rank];
        Checks.holds(input, "input", total, type);
        Checks.receives(output, "output", mine, type);
        int e = type.byteSize();
        Checks.apartOrInPlace(output, mine * e, input, total * e, starts[rank] * e);
        if (total == 0) {
            nothing();
        } else if (size == 1) {
            alone(input, output, mine * e);
        } else {
            runs(Schedule.REDUCE_SCATTER_RING, total * e, input, output, total, type, op, 0);
        }
    }

    void allgather(MemorySegment input, MemorySegment output, long count, DataType type, Algorithm algorithm) {
        allgatherBlocks(input, output, uniformBlocks(count), type, algorithm);
    }

    void allgather(MemorySegment input, MemorySegment output, long[] counts, DataType type, Algorithm algorithm) {
        allgatherBlocks(input, output, countedBlocks(counts), type, algorithm);
    }

    /** The blocks are in {@link #blocks}. */
    private void allgatherBlocks(MemorySegment input, MemorySegment output, long total, DataType type,
            Algorithm algorithm) {
        Checks.type(type);
        long[] starts = blocks.starts;
        long mine = starts[rank + 1] - starts[rank];
        int e = type.byteSize();
        Checks.holds(input, "input", mine, type);
        Checks.receives(output, "output", total, type);
        Checks.apartOrInPlace(input, mine * e, output, total * e, starts[rank] * e);
        Algorithm a = choose(algorithm, ALLGATHER, "allgather", total * e, Algorithm.DIRECT, Algorithm.RING);
        if (total == 0) {
            nothing();
        } else if (size == 1) {
            alone(input, output, mine * e);
        } else {
            runs(a == Algorithm.RING ? Schedule.ALLGATHER_RING : Schedule.ALLGATHER_DIRECT, total * e, input, output,
                    total, type, null, 0);
        }
    }

    void broadcast(MemorySegment buffer, long count, DataType type, int root, Algorithm algorithm) {
        Checks.type(type);
        Checks.count(count, "count");
        Checks.root(root, size);
        if (rank == root) {
            Checks.holds(buffer, "buffer", count, type);
        } else {
            Checks.receives(buffer, "buffer", count, type);
        }
        long bytes = count * type.byteSize();
        Algorithm a = choose(algorithm, BROADCAST, "broadcast", bytes, Algorithm.TREE, Algorithm.RING);
        if (count == 0 || size == 1) {
            nothing();
            return;
        }
        Schedule schedule = switch (a) {
            case TREE -> Schedule.BROADCAST_TREE;
            case RING -> Schedule.BROADCAST_RING;
            default -> Schedule.BROADCAST_DIRECT;
        };
        runs(schedule, bytes, buffer, buffer, count, type, null, root);
    }

    void reduce(MemorySegment input, MemorySegment output, long count, DataType type, ReduceOp op, int root,
            Algorithm algorithm) {
        Checks.reduction(type, op);
        Checks.count(count, "count");
        Checks.root(root, size);
        Checks.holds(input, "input", count, type);
        long bytes = count * type.byteSize();
        MemorySegment into = null;
        if (rank == root) {
            Checks.receives(output, "output", count, type);
            Checks.apartOrInPlace(input, bytes, output, bytes, 0);
            into = output;
        }
        Algorithm a = choose(algorithm, REDUCE, "reduce", bytes, Algorithm.TREE, Algorithm.RING);
        if (count == 0) {
            nothing();
        } else if (size == 1) {
            alone(input, into, bytes);
        } else if (a == Algorithm.TREE) {
            runs(Schedule.REDUCE_TREE, bytes, input, into, count, type, op, root);
        } else {
            blocks.even(count);
            runs(Schedule.REDUCE_RING, bytes, input, into, count, type, op, root);
        }
    }

    void allToAll(MemorySegment input, MemorySegment output, long count, DataType type) {
        Checks.count(count, "count");
        Checks.times(count, size, "count");
        for (int p = 0; p <= size; p++) {
            sendStarts[p] = count * p;
            receiveStarts[p] = sendStarts[p];
        }
        allToAllBlocks(input, output, type);
    }

    void allToAll(MemorySegment input, long[] sendCounts, MemorySegment output, long[] receiveCounts,
            DataType type) {
        Checks.counts(sendCounts, size, "sendCounts");
        Checks.counts(receiveCounts, size, "receiveCounts");
        if (sendCounts[rank] != receiveCounts[rank]) {
            throw new IllegalArgumentException("rank " + rank + " sends itself " + sendCounts[rank]
                    + " elements but expects " + receiveCounts[rank]);
        }
        for (int p = 0; p < size; p++) {
            sendStarts[p + 1] = sendStarts[p] + sendCounts[p];
            receiveStarts[p + 1] = receiveStarts[p] + receiveCounts[p];
        }
        allToAllBlocks(input, output, type);
    }

    /**
     * The blocks are in {@link #sendStarts} and {@link #receiveStarts}. A rank alone runs the schedule too: its
     * block to itself is the whole of it.
     */
    private void allToAllBlocks(MemorySegment input, MemorySegment output, DataType type) {
        Checks.type(type);
        long sending = sendStarts[size];
        long receiving = receiveStarts[size];
        Checks.holds(input, "input", sending, type);
        Checks.receives(output, "output", receiving, type);
        int e = type.byteSize();
        Checks.apartOrInPlace(input, sending * e, output, receiving * e, -1);
        if (sending == 0 && receiving == 0) {
            nothing();
        } else {
            runs(Schedule.ALL_TO_ALL, Math.max(sending, receiving) * e, input, output, 0, type, null, 0);
        }
    }

    /** Lays out {@link #blocks} of {@code count} elements for every rank; returns the elements of all. */
    private long uniformBlocks(long count) {
        Checks.count(count, "count");
        blocks.uniform(count);
        return Checks.times(count, size, "count");
    }

    /** Lays out {@link #blocks} of {@code counts[r]} elements for rank r; returns the elements of all. */
    private long countedBlocks(long[] counts) {
        long total = Checks.counts(counts, size, "counts");
        blocks.counted(counts);
        return total;
    }

    /** Forgets the caller's memory, once the operation is over: the plan keeps none beyond the call. */
    void release() {
        input = null;
        output = null;
    }

    /** The algorithm asked for, or for AUTO the one for the size, refusing one the operation does not have. */
    private Algorithm choose(Algorithm asked, Set<Algorithm> allowed, String operation, long bytes, Algorithm small,
            Algorithm large) {
        if (asked == null) {
            throw new IllegalArgumentException("algorithm is null");
        }
        if (asked == Algorithm.AUTO) {
            return bytes <= smallMessageBytes ? small : large;
        }
        if (!allowed.contains(asked)) {
            throw new IllegalArgumentException(operation + " has no " + asked + " algorithm; it takes " + allowed);
        }
        return asked;
    }

    private void runs(Schedule schedule, long bytes, MemorySegment input, MemorySegment output, long count,
            DataType type, ReduceOp op, int root) {
        this.schedule = schedule;
        this.bytes = bytes;
        this.input = input;
        this.output = output;
        this.count = count;
        this.type = type;
        this.op = op;
        this.root = root;
        this.aloneBytes = 0;
    }

    private void nothing() {
        alone(null, null, 0);
    }

    private void alone(MemorySegment input, MemorySegment output, long bytes) {
        runs(null, 0, input, output, 0, null, null, 0);
        this.aloneBytes = bytes;
    }
}
