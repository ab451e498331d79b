package io.zcnet.examples;

import io.zcnet.collective.Algorithm;
import io.zcnet.collective.CollectiveException;
import io.zcnet.collective.Communicator;
import io.zcnet.collective.DataType;
import io.zcnet.collective.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One operation at one size on one rank: its buffers (float32, allocated in the caller's arena), how to
 * fill them, run the operation and check what it produced. Rank r contributes {@link #value} at element g
 * of the whole vector (the one reduced, or the one gathered); those are small integers, so every sum of N
 * of them, and every partial sum on the way, is an exact float32 whatever order an algorithm adds in.
 * Outputs are filled with -1, which no result can be, so that an operation that wrote nothing fails its
 * check. Allreduce runs in place and sums its last result again each time: k operations after a fill
 * each element is its sum times N^(k-1), so a check after many operations finds one that was skipped
 * ({@link #refillEvery} keeps those values exact). The root of broadcast and reduce is rank 0. The
 * calling thread only.
 */
abstract class Workload {
    private static final float UNSET = -1;
    private static final int MAX_REFILL_EVERY = 16;
    /** {@link #value} repeats every 11 elements. */
    private static final int PERIOD = 11;

    final Communicator comm;
    final int rank;
    final int n;
    /** Floats in the row's size. */
    final long count;
    /** Floats in one rank's block, for the operations that split the size into blocks. */
    final long block;
    final Algorithm algorithm;
    /** The sums by element modulo {@link #PERIOD}, on which they depend alone. */
    private final float[] sums;

    private Workload(Communicator comm, long count, Algorithm algorithm) {
        this.comm = comm;
        this.rank = comm.rank();
        this.n = comm.size();
        this.count = count;
        this.block = count / n;
        this.algorithm = algorithm;
        this.sums = new float[PERIOD];
        for (int g = 0; g < PERIOD; g++) {
            for (int r = 0; r < n; r++) {
                sums[g] += value(r, g);
            }
        }
    }

    /** {@code op} over {@code bytes} (a multiple of {@link CollectiveOp#unit}) with {@code algorithm} as resolved. */
    static Workload of(CollectiveOp op, Communicator comm, Arena arena, long bytes, Algorithm algorithm) {
        long count = bytes / Float.BYTES;
        return switch (op) {
            case ALLREDUCE -> new Allreduce(comm, arena, count, algorithm);
            case ALLGATHER -> new Allgather(comm, arena, count, algorithm);
            case REDUCE_SCATTER -> new ReduceScatter(comm, arena, count, algorithm);
            case BROADCAST -> new Broadcast(comm, arena, count, algorithm);
            case REDUCE -> new Reduce(comm, arena, count, algorithm);
            case ALLTOALL -> new AllToAll(comm, arena, count, algorithm);
            case BARRIER -> new Barrier(comm);
        };
    }

    /** Fresh inputs, and outputs that no result can equal. */
    abstract void fill();

    abstract void run() throws CollectiveException;

    /** Whether this rank's output is right {@code sinceFill} (at least 1) operations after the last fill. */
    abstract boolean check(int sinceFill);

    /**
     * After how many operations the inputs must be filled again: allreduce's values grow N-fold per
     * operation, and stay exact while they are integers below 2^24, the largest sum being 11 N.
     */
    static int refillEvery(int n) {
        long largest = 11L * n;
        int k = 1;
        while (k < MAX_REFILL_EVERY && largest * n < 1 << 24) {
            largest *= n;
            k++;
        }
        return k;
    }

    /** What rank {@code r} contributes at element {@code g}: 1..11. */
    static float value(int r, long g) {
        return (g * 7 + r * 3L) % PERIOD + 1;
    }

    /** The sum of every rank's value at element {@code g}. */
    final float sum(long g) {
        return sums[(int) (g % PERIOD)];
    }

    static MemorySegment floats(Arena arena, long count) {
        return arena.allocate(Math.max(1, count) * Float.BYTES, 64);
    }

    /** {@code count} of this rank's values, for elements {@code first..} of the whole vector. */
    final void fillValues(MemorySegment s, long first, long count) {
        for (long i = 0; i < count; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, value(rank, first + i));
        }
    }

    static void unset(MemorySegment s, long count) {
        for (long i = 0; i < count; i++) {
            s.setAtIndex(ValueLayout.JAVA_FLOAT, i, UNSET);
        }
    }

    /** Whether elements {@code 0..count-1} of {@code s} are the sums of elements {@code first..}, times scale. */
    final boolean holdsSums(MemorySegment s, long first, long count, float scale) {
        for (long i = 0; i < count; i++) {
            if (s.getAtIndex(ValueLayout.JAVA_FLOAT, i) != sum(first + i) * scale) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code s} holds rank {@code r}'s values of elements {@code first..first+count-1}. */
    static boolean holdsValues(MemorySegment s, long at, int r, long first, long count) {
        for (long i = 0; i < count; i++) {
            if (s.getAtIndex(ValueLayout.JAVA_FLOAT, at + i) != value(r, first + i)) {
                return false;
            }
        }
        return true;
    }

    /** In place. */
    private static final class Allreduce extends Workload {
        private final MemorySegment buffer;

        Allreduce(Communicator comm, Arena arena, long count, Algorithm algorithm) {
            super(comm, count, algorithm);
            buffer = floats(arena, count);
        }

        @Override
        void fill() {
            fillValues(buffer, 0, count);
        }

        @Override
        void run() throws CollectiveException {
            comm.allreduce(buffer, buffer, count, DataType.FLOAT, ReduceOp.SUM, algorithm);
        }

        @Override
        boolean check(int sinceFill) {
            float scale = 1;
            for (int i = 1; i < sinceFill; i++) {
                scale *= n;
            }
            return holdsSums(buffer, 0, count, scale);
        }
    }

    /**
     * An operation with an input apart from its output: the input holds this rank's values of some elements,
     * the output starts unset.
     */
    private abstract static class OutOfPlace extends Workload {
        MemorySegment input;
        MemorySegment output;
        private long inputFirst;
        private long inputCount;
        private long outputCount;

        OutOfPlace(Communicator comm, long count, Algorithm algorithm) {
            super(comm, count, algorithm);
        }

        /** An input of this rank's values of elements {@code inputFirst..}; an output of {@code outputCount}. */
        final void allocate(Arena arena, long inputFirst, long inputCount, long outputCount) {
            this.inputFirst = inputFirst;
            this.inputCount = inputCount;
            this.outputCount = outputCount;
            input = floats(arena, inputCount);
            output = floats(arena, outputCount);
        }

        @Override
        final void fill() {
            fillValues(input, inputFirst, inputCount);
            unset(output, outputCount);
        }

        /** Whether output block r holds rank r's values of the elements of block {@code own ? this rank : r}. */
        final boolean blocksHold(boolean own) {
            for (int r = 0; r < n; r++) {
                if (!holdsValues(output, r * block, r, (own ? rank : r) * block, block)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** Each rank's block of the whole vector into every rank's copy of it. */
    private static final class Allgather extends OutOfPlace {
        Allgather(Communicator comm, Arena arena, long count, Algorithm algorithm) {
            super(comm, count, algorithm);
            allocate(arena, rank * block, block, count);
        }

        @Override
        void run() throws CollectiveException {
            comm.allgather(input, output, block, DataType.FLOAT, algorithm);
        }

        @Override
        boolean check(int sinceFill) {
            return blocksHold(false);
        }
    }

    /** Out of place, so that every operation's result can be checked, not only the first after a fill. */
    private static final class ReduceScatter extends OutOfPlace {
        ReduceScatter(Communicator comm, Arena arena, long count, Algorithm algorithm) {
            super(comm, count, algorithm);
            allocate(arena, 0, count, block);
        }

        @Override
        void run() throws CollectiveException {
            comm.reduceScatter(input, output, block, DataType.FLOAT, ReduceOp.SUM);
        }

        @Override
        boolean check(int sinceFill) {
            return holdsSums(output, rank * block, block, 1);
        }
    }

    private static final class Broadcast extends Workload {
        private final MemorySegment buffer;

        Broadcast(Communicator comm, Arena arena, long count, Algorithm algorithm) {
            super(comm, count, algorithm);
            buffer = floats(arena, count);
        }

        @Override
        void fill() {
            if (rank == 0) {
                fillValues(buffer, 0, count);
            } else {
                unset(buffer, count);
            }
        }

        @Override
        void run() throws CollectiveException {
            comm.broadcast(buffer, count, DataType.FLOAT, 0, algorithm);
        }

        @Override
        boolean check(int sinceFill) {
            return holdsValues(buffer, 0, 0, 0, count);
        }
    }

    /** Only the root has an output. */
    private static final class Reduce extends OutOfPlace {
        Reduce(Communicator comm, Arena arena, long count, Algorithm algorithm) {
            super(comm, count, algorithm);
            allocate(arena, 0, count, rank == 0 ? count : 0);
        }

        @Override
        void run() throws CollectiveException {
            comm.reduce(input, output, count, DataType.FLOAT, ReduceOp.SUM, 0, algorithm);
        }

        @Override
        boolean check(int sinceFill) {
            return rank != 0 || holdsSums(output, 0, count, 1);
        }
    }

    /**
     * Block p of a rank's input goes to rank p: rank r sends its values of elements p*block.. to p, so rank
     * p's block r holds rank r's values of p's own block of elements.
     */
    private static final class AllToAll extends OutOfPlace {
        AllToAll(Communicator comm, Arena arena, long count, Algorithm algorithm) {
            super(comm, count, algorithm);
            allocate(arena, 0, count, count);
        }

        @Override
        void run() throws CollectiveException {
            comm.allToAll(input, output, block, DataType.FLOAT);
        }

        @Override
        boolean check(int sinceFill) {
            return blocksHold(true);
        }
    }

    /** Nothing to fill or check: returning at all is the barrier's result. */
    private static final class Barrier extends Workload {
        Barrier(Communicator comm) {
            super(comm, 0, Algorithm.AUTO);
        }

        @Override
        void fill() {
        }

        @Override
        void run() throws CollectiveException {
            comm.barrier();
        }

        @Override
        boolean check(int sinceFill) {
            return true;
        }
    }
}
