package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Which schedule each call gets, and what it refuses, without a network: AUTO's choice at the small-message
 * size, the folded allreduce of four ranks sharing cores, the blocks laid out for the ring, and what a count
 * of 0 or a rank alone does instead of sending.
 */
class OperationPlanTest {
    /** AUTO's threshold in these tests: 1 KiB, 256 floats. */
    private static final CommunicatorConfig CONFIG = CommunicatorConfig.defaults().withSmallMessageBytes(1024);
    private final Arena arena = Arena.ofConfined();
    private final MemorySegment a = arena.allocate(64 * 1024, 64);
    private final MemorySegment b = arena.allocate(64 * 1024, 64);

    @AfterEach
    void free() {
        arena.close();
    }

    private static OperationPlan plan(int rank, int size) {
        return new OperationPlan(rank, size, CONFIG, false);
    }

    @Test
    void allreduceTakesHalvingDoublingUpToTheSmallMessageSizeAndTheRingAbove() {
        OperationPlan p = plan(1, 3);
        p.allreduce(a, b, 256, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO);
        assertEquals(Schedule.ALLREDUCE_HALVING_DOUBLING, p.schedule);
        assertEquals(1024, p.bytes);
        assertSame(a, p.input);
        assertSame(b, p.output);
        assertEquals(256, p.count);
        p.allreduce(a, b, 257, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO);
        assertEquals(Schedule.ALLREDUCE_RING, p.schedule);
        assertArrayEquals(new long[] {0, 85, 171, 257}, p.blocks.starts, "even blocks");
        p.allreduce(a, a, 8, DataType.FLOAT, ReduceOp.SUM, Algorithm.RING);
        assertEquals(Schedule.ALLREDUCE_RING, p.schedule, "asked for, whatever the size");
        p.allreduce(a, b, 4096, DataType.FLOAT, ReduceOp.SUM, Algorithm.HALVING_DOUBLING);
        assertEquals(Schedule.ALLREDUCE_HALVING_DOUBLING, p.schedule);
    }

    @Test
    void fourRanksSharingCoresFoldSmallAllreducesAdaptively() {
        OperationPlan shared = new OperationPlan(2, 4, CONFIG.withSmallMessageBytes(1 << 20), true);
        shared.allreduce(a, b, 512, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO);
        assertEquals(Schedule.ALLREDUCE_FOLDED, shared.schedule, "2 KiB");
        shared.allreduce(a, b, 513, DataType.FLOAT, ReduceOp.SUM, Algorithm.HALVING_DOUBLING);
        assertEquals(Schedule.ALLREDUCE_HALVING_DOUBLING, shared.schedule, "over 2 KiB");
        OperationPlan apart = new OperationPlan(2, 4, CONFIG, false);
        apart.allreduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO);
        assertEquals(Schedule.ALLREDUCE_HALVING_DOUBLING, apart.schedule, "cores not shared");
        OperationPlan eight = new OperationPlan(2, 8, CONFIG, true);
        eight.allreduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO);
        assertEquals(Schedule.ALLREDUCE_HALVING_DOUBLING, eight.schedule, "eight ranks");
    }

    @Test
    void reduceScatterRunsTheRingOverBlocksOfEveryRank() {
        OperationPlan p = plan(1, 3);
        p.reduceScatter(a, b, 10, DataType.INT, ReduceOp.SUM);
        assertEquals(Schedule.REDUCE_SCATTER_RING, p.schedule);
        assertArrayEquals(new long[] {0, 10, 20, 30}, p.blocks.starts);
        assertEquals(30, p.count);
        assertEquals(120, p.bytes);
        p.reduceScatter(a, b, new long[] {1, 2, 3}, DataType.DOUBLE, ReduceOp.MAX);
        assertArrayEquals(new long[] {0, 1, 3, 6}, p.blocks.starts);
        assertEquals(48, p.bytes);
        p.reduceScatter(a, a.asSlice(8), new long[] {1, 2, 3}, DataType.DOUBLE, ReduceOp.MAX);
        assertEquals(Schedule.REDUCE_SCATTER_RING, p.schedule, "in place: the output is this rank's block");
    }

    @Test
    void allgatherTakesDirectUpToTheSmallMessageSizeAndTheRingAbove() {
        OperationPlan p = plan(0, 4);
        p.allgather(a, b, 64, DataType.FLOAT, Algorithm.AUTO);
        assertEquals(Schedule.ALLGATHER_DIRECT, p.schedule, "4 x 64 floats: 1 KiB");
        assertArrayEquals(new long[] {0, 64, 128, 192, 256}, p.blocks.starts);
        p.allgather(a, b, 65, DataType.FLOAT, Algorithm.AUTO);
        assertEquals(Schedule.ALLGATHER_RING, p.schedule);
        p.allgather(a, b, new long[] {1, 0, 5, 2}, DataType.BFLOAT16, Algorithm.RING);
        assertEquals(Schedule.ALLGATHER_RING, p.schedule);
        assertArrayEquals(new long[] {0, 1, 1, 6, 8}, p.blocks.starts);
        assertEquals(16, p.bytes);
        assertNull(p.op);
    }

    @Test
    void broadcastTakesTheTreeUpToTheSmallMessageSizeAndTheChainAbove() {
        OperationPlan p = plan(2, 3);
        p.broadcast(a, 128, DataType.LONG, 1, Algorithm.AUTO);
        assertEquals(Schedule.BROADCAST_TREE, p.schedule);
        assertEquals(1, p.root);
        p.broadcast(a, 129, DataType.LONG, 1, Algorithm.AUTO);
        assertEquals(Schedule.BROADCAST_RING, p.schedule);
        p.broadcast(a, 129, DataType.LONG, 1, Algorithm.DIRECT);
        assertEquals(Schedule.BROADCAST_DIRECT, p.schedule);
        assertSame(a, p.input);
        assertSame(a, p.output);
        OperationPlan root = plan(1, 3);
        root.broadcast(a.asReadOnly(), 8, DataType.LONG, 1, Algorithm.TREE);
        assertEquals(Schedule.BROADCAST_TREE, root.schedule, "the root only reads");
        refused("buffer is read-only", () -> p.broadcast(a.asReadOnly(), 8, DataType.LONG, 1, Algorithm.TREE));
    }

    @Test
    void reduceTakesTheTreeUpToTheSmallMessageSizeAndTheRingAbove() {
        OperationPlan p = plan(0, 3);
        p.reduce(a, null, 256, DataType.FLOAT, ReduceOp.SUM, 2, Algorithm.AUTO);
        assertEquals(Schedule.REDUCE_TREE, p.schedule);
        assertNull(p.output, "not the root: no output");
        p.reduce(a, b, 257, DataType.FLOAT, ReduceOp.SUM, 2, Algorithm.AUTO);
        assertEquals(Schedule.REDUCE_RING, p.schedule);
        assertNull(p.output, "not the root: its output is not used");
        assertArrayEquals(new long[] {0, 85, 171, 257}, p.blocks.starts);
        p.reduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, 0, Algorithm.RING);
        assertSame(b, p.output, "the root's");
        refused("output is null", () -> p.reduce(a, null, 8, DataType.FLOAT, ReduceOp.SUM, 0, Algorithm.AUTO));
    }

    @Test
    void allToAllLaysOutTheBlocksAndRunsEvenForOneRank() {
        OperationPlan p = plan(1, 3);
        p.allToAll(a, b, 4, DataType.INT);
        assertEquals(Schedule.ALL_TO_ALL, p.schedule);
        assertArrayEquals(new long[] {0, 4, 8, 12}, p.sendStarts);
        assertArrayEquals(new long[] {0, 4, 8, 12}, p.receiveStarts);
        p.allToAll(a, new long[] {1, 2, 3}, b, new long[] {0, 2, 7}, DataType.INT);
        assertArrayEquals(new long[] {0, 1, 3, 6}, p.sendStarts);
        assertArrayEquals(new long[] {0, 0, 2, 9}, p.receiveStarts);
        assertEquals(36, p.bytes, "the larger side");
        OperationPlan alone = plan(0, 1);
        alone.allToAll(a, b, 4, DataType.INT);
        assertEquals(Schedule.ALL_TO_ALL, alone.schedule, "its block to itself goes through the schedule too");
    }

    @Test
    void aCountOfZeroSendsNothingAndARankAloneOnlyCopies() {
        OperationPlan p = plan(0, 2);
        p.allreduce(a, b, 0, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO);
        assertNothing(p);
        p.reduceScatter(a, b, new long[] {0, 0}, DataType.FLOAT, ReduceOp.SUM);
        assertNothing(p);
        p.allgather(a, b, 0, DataType.FLOAT, Algorithm.RING);
        assertNothing(p);
        p.broadcast(a, 0, DataType.FLOAT, 1, Algorithm.AUTO);
        assertNothing(p);
        p.reduce(a, b, 0, DataType.FLOAT, ReduceOp.SUM, 0, Algorithm.AUTO);
        assertNothing(p);
        p.allToAll(a, b, 0, DataType.FLOAT);
        assertNothing(p);

        OperationPlan alone = plan(0, 1);
        alone.allreduce(a, b, 10, DataType.FLOAT, ReduceOp.SUM, Algorithm.RING);
        assertAlone(alone, 40);
        alone.reduceScatter(a, b, 10, DataType.DOUBLE, ReduceOp.SUM);
        assertAlone(alone, 80);
        alone.allgather(a, b, new long[] {3}, DataType.BFLOAT16, Algorithm.DIRECT);
        assertAlone(alone, 6);
        alone.reduce(a, b, 5, DataType.LONG, ReduceOp.MIN, 0, Algorithm.TREE);
        assertAlone(alone, 40);
        alone.broadcast(a, 5, DataType.LONG, 0, Algorithm.AUTO);
        assertNothing(alone);
        alone.barrier();
        assertEquals(Schedule.BARRIER, alone.schedule);
    }

    @Test
    void releaseForgetsTheCallersMemory() {
        OperationPlan p = plan(0, 2);
        p.allreduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO);
        p.release();
        assertNull(p.input);
        assertNull(p.output);
    }

    @Test
    void refusesWhatNoScheduleTakes() {
        OperationPlan p = plan(1, 2);
        refused("algorithm is null", () -> p.allreduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, null));
        refused("allreduce has no TREE algorithm; it takes [RING, HALVING_DOUBLING]",
                () -> p.allreduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, Algorithm.TREE));
        refused("allgather has no TREE algorithm; it takes [RING, DIRECT]",
                () -> p.allgather(a, b, 8, DataType.FLOAT, Algorithm.TREE));
        refused("broadcast has no HALVING_DOUBLING algorithm; it takes [RING, TREE, DIRECT]",
                () -> p.broadcast(a, 8, DataType.FLOAT, 0, Algorithm.HALVING_DOUBLING));
        refused("reduce has no DIRECT algorithm; it takes [RING, TREE]",
                () -> p.reduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, 1, Algorithm.DIRECT));
        refused("count -1 is negative", () -> p.reduceScatter(a, b, -1, DataType.FLOAT, ReduceOp.SUM));
        refused("count 4611686018427387904 times 2 ranks overflows",
                () -> p.allgather(a, b, 1L << 62, DataType.INT, Algorithm.AUTO));
        refused("count 4611686018427387904 times 2 ranks overflows", () -> p.allToAll(a, b, 1L << 62, DataType.INT));
        refused("counts must have one count per rank (2), has none",
                () -> p.reduceScatter(a, b, null, DataType.FLOAT, ReduceOp.SUM));
        refused("counts add up to more than", () -> p.allgather(a, b, new long[] {Long.MAX_VALUE, 1}, DataType.INT,
                Algorithm.AUTO));
        refused("rank 1 sends itself 2 elements but expects 3",
                () -> p.allToAll(a, new long[] {1, 2}, b, new long[] {1, 3}, DataType.INT));
        refused("root 2 outside 0..1", () -> p.broadcast(a, 8, DataType.INT, 2, Algorithm.AUTO));
        refused("op is null", () -> p.reduceScatter(a, b, 8, DataType.INT, null));
        refused("type is null", () -> p.allToAll(a, b, 8, null));
        refused("input has 65536 bytes, too few for 8193 LONG elements",
                () -> p.allreduce(a, b, 8193, DataType.LONG, ReduceOp.SUM, Algorithm.AUTO));
        refused("output has 65528 bytes, too few for 8192 LONG elements",
                () -> p.allreduce(a, b.asSlice(8), 8192, DataType.LONG, ReduceOp.SUM, Algorithm.AUTO));
        refused("input has 65536 bytes, too few for 16386 INT elements",
                () -> p.reduceScatter(a, b, 8193, DataType.INT, ReduceOp.SUM));
        refused("in place, the input must start 0 bytes into the output",
                () -> p.allreduce(a, a.asSlice(4), 8, DataType.FLOAT, ReduceOp.SUM, Algorithm.AUTO));
        refused("in place, the input must start 32 bytes into the output",
                () -> p.reduceScatter(a, a, 8, DataType.FLOAT, ReduceOp.SUM));
        refused("this operation has no in-place form", () -> p.allToAll(a, a, 8, DataType.FLOAT));
    }

    private void assertNothing(OperationPlan p) {
        assertNull(p.schedule);
        assertEquals(0, p.aloneBytes);
    }

    private void assertAlone(OperationPlan p, long bytes) {
        assertNull(p.schedule);
        assertEquals(bytes, p.aloneBytes);
        assertSame(a, p.input);
        assertSame(b, p.output);
    }

    private static void refused(String says, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call, says);
        assertTrue(e.getMessage().contains(says), () -> "expected '" + says + "' in: " + e.getMessage());
    }
}
