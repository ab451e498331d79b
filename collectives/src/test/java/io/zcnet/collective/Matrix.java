package io.zcnet.collective;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One rank's side of the operation matrix: every operation with every algorithm that has it, over types,
 * reductions, counts (uneven splits among them), roots, in place and out of place, each checked element by
 * element against a sequential reference ({@link Data}), and the elements just past the output checked
 * untouched. Every rank runs the same calls in the same order, as the communicator requires; each case has
 * a seed of its own, so a result left over from an earlier case cannot pass.
 */
final class Matrix {
    /** Past every output: must still hold {@link #SENTINEL} afterwards. */
    private static final int GUARD = 3;
    /** A value no reduction of the test data gives. */
    private static final double SENTINEL = 99;

    private final Communicator c;
    private final Arena arena;
    private final int rank;
    private final int size;
    private int seed;

    Matrix(Communicator c, Arena arena) {
        this.c = c;
        this.arena = arena;
        this.rank = c.rank();
        this.size = c.size();
    }

    /** Counts that split unevenly among most rank counts, from one element to several pieces per block. */
    long[] counts() {
        return new long[] {1, size + 1, 1000, 3001, 10_007};
    }

    void allreduce(Algorithm algorithm, DataType type, ReduceOp op, long count, boolean inPlace) throws Exception {
        int s = ++seed;
        MemorySegment output = output(type, count);
        MemorySegment input = inPlace ? output : arena.allocate(count * type.byteSize(), 64);
        Data.fill(type, input, 0, count, rank, 0, s, op);
        c.allreduce(input, output, count, type, op, algorithm);
        Data.check(type, output, 0, count, 0, i -> Data.reduced(op, size, i, s), describe("allreduce", algorithm, type, op,
                count, inPlace));
        guard(type, output, count);
    }

    void reduceScatter(DataType type, ReduceOp op, long[] counts, boolean inPlace) throws Exception {
        int s = ++seed;
        long total = sum(counts, size);
        long start = sum(counts, rank);
        long mine = counts[rank];
        MemorySegment input = arena.allocate((total + GUARD) * type.byteSize(), 64);
        fillSentinel(type, input, total + GUARD);
        Data.fill(type, input, 0, total, rank, 0, s, op);
        MemorySegment output = inPlace ? input.asSlice(start * type.byteSize(), (mine + GUARD) * type.byteSize())
                : output(type, mine);
        if (uniform(counts)) {
            c.reduceScatter(input, output, counts[0], type, op);
        } else {
            c.reduceScatter(input, output, counts, type, op);
        }
        long first = start;
        Data.check(type, output, 0, mine, first, i -> Data.reduced(op, size, i, s), describe("reduce-scatter",
                Algorithm.RING, type, op, total, inPlace));
        if (!inPlace || rank == size - 1) {
            guard(type, output, mine);
        }
    }

    void allgather(Algorithm algorithm, DataType type, long[] counts, boolean inPlace) throws Exception {
        int s = ++seed;
        long total = sum(counts, size);
        long start = sum(counts, rank);
        MemorySegment output = output(type, total);
        MemorySegment input = inPlace ? output.asSlice(start * type.byteSize(), counts[rank] * type.byteSize())
                : arena.allocate(Math.max(1, counts[rank]) * type.byteSize(), 64);
        Data.fill(type, input, 0, counts[rank], rank, 0, s, ReduceOp.SUM);
        if (uniform(counts)) {
            c.allgather(input, output, counts[0], type, algorithm);
        } else {
            c.allgather(input, output, counts, type, algorithm);
        }
        long at = 0;
        for (int r = 0; r < size; r++) {
            int from = r;
            Data.check(type, output, at, counts[r], 0, i -> Data.value(from, i, s, ReduceOp.SUM),
                    describe("allgather", algorithm, type, null, total, inPlace) + ", block of rank " + r);
            at += counts[r];
        }
        guard(type, output, total);
    }

    void broadcast(Algorithm algorithm, DataType type, long count, int root) throws Exception {
        int s = ++seed;
        MemorySegment buffer = output(type, count);
        if (rank == root) {
            Data.fill(type, buffer, 0, count, rank, 0, s, ReduceOp.SUM);
        }
        c.broadcast(buffer, count, type, root, algorithm);
        Data.check(type, buffer, 0, count, 0, i -> Data.value(root, i, s, ReduceOp.SUM),
                describe("broadcast", algorithm, type, null, count, false) + " from root " + root);
        guard(type, buffer, count);
    }

    void reduce(Algorithm algorithm, DataType type, ReduceOp op, long count, int root, boolean inPlace) throws Exception {
        int s = ++seed;
        MemorySegment output = rank == root ? output(type, count) : null;
        MemorySegment input = inPlace && rank == root ? output : arena.allocate(count * type.byteSize(), 64);
        Data.fill(type, input, 0, count, rank, 0, s, op);
        c.reduce(input, output, count, type, op, root, algorithm);
        if (rank == root) {
            Data.check(type, output, 0, count, 0, i -> Data.reduced(op, size, i, s),
                    describe("reduce", algorithm, type, op, count, inPlace) + " to root " + root);
            guard(type, output, count);
        }
    }

    /**
     * All-to-all where rank q sends rank p {@code counts[q][p]} elements, element i being q's value for
     * {@code p * 2^20 + i}; {@code uniform} uses the one-count form (every count the same).
     */
    void allToAll(DataType type, long[][] counts, boolean uniform) throws Exception {
        int s = ++seed;
        long sending = 0;
        long receiving = 0;
        long[] sendCounts = new long[size];
        long[] receiveCounts = new long[size];
        for (int p = 0; p < size; p++) {
            sendCounts[p] = counts[rank][p];
            receiveCounts[p] = counts[p][rank];
            sending += sendCounts[p];
            receiving += receiveCounts[p];
        }
        MemorySegment input = arena.allocate(Math.max(1, sending) * type.byteSize(), 64);
        long at = 0;
        for (int p = 0; p < size; p++) {
            Data.fill(type, input, at, sendCounts[p], rank, (long) p << 20, s, ReduceOp.SUM);
            at += sendCounts[p];
        }
        MemorySegment output = output(type, receiving);
        if (uniform) {
            c.allToAll(input, output, counts[0][0], type);
        } else {
            c.allToAll(input, sendCounts, output, receiveCounts, type);
        }
        at = 0;
        for (int q = 0; q < size; q++) {
            int from = q;
            Data.check(type, output, at, receiveCounts[q], (long) rank << 20, i -> Data.value(from, i, s, ReduceOp.SUM),
                    "all-to-all " + type + (uniform ? " uniform" : "") + ", block from rank " + q);
            at += receiveCounts[q];
        }
        guard(type, output, receiving);
    }

    /** An output of {@code count} elements and the guard after them, all holding the sentinel. */
    private MemorySegment output(DataType type, long count) {
        MemorySegment s = arena.allocate((count + GUARD) * type.byteSize(), 64);
        fillSentinel(type, s, count + GUARD);
        return s;
    }

    private static void fillSentinel(DataType type, MemorySegment s, long count) {
        for (long i = 0; i < count; i++) {
            Data.put(type, s, i, SENTINEL);
        }
    }

    private static void guard(DataType type, MemorySegment s, long count) {
        Data.check(type, s, count, GUARD, 0, i -> SENTINEL, "the guard past the output");
    }

    /** The counts of the ranks before {@code rank}. */
    private static long sum(long[] counts, int rank) {
        long sum = 0;
        for (int r = 0; r < rank; r++) {
            sum += counts[r];
        }
        return sum;
    }

    private static boolean uniform(long[] counts) {
        for (long n : counts) {
            if (n != counts[0]) {
                return false;
            }
        }
        return true;
    }

    private String describe(String operation, Algorithm algorithm, DataType type, ReduceOp op, long count,
            boolean inPlace) {
        return operation + " " + algorithm + " " + type + (op == null ? "" : " " + op) + " of " + count + " elements"
                + (inPlace ? " in place" : "") + " on rank " + rank + " of " + size;
    }
}
