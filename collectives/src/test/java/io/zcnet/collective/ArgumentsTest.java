package io.zcnet.collective;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Every argument is checked before anything is sent, with a message that names it; a refused call leaves
 * the communicator usable, which the valid call after each group of refusals shows.
 */
@Timeout(60)
class ArgumentsTest {

    @Test
    void badArgumentsAreRefusedByName() throws Exception {
        try (RankGroup group = RankGroup.start(2, EventLoopConfig.Choice.NIO, CommunicatorConfig.defaults())) {
            group.run(c -> {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment a = arena.allocate(4096, 64);
                    MemorySegment b = arena.allocate(4096, 64);
                    refused("not native", () -> c.allreduce(MemorySegment.ofArray(new float[8]), b, 8, DataType.FLOAT,
                            ReduceOp.SUM));
                    MemorySegment closed;
                    try (Arena gone = Arena.ofConfined()) {
                        closed = gone.allocate(64);
                    }
                    refused("arena that is closed", () -> c.allreduce(closed, b, 8, DataType.FLOAT, ReduceOp.SUM));
                    MemorySegment elsewhere = java.util.concurrent.CompletableFuture.supplyAsync(
                            () -> Arena.ofConfined().allocate(64)).join();
                    refused("confined to another thread", () -> c.broadcast(elsewhere, 8, DataType.INT, 0));
                    refused("not aligned", () -> c.allreduce(a.asSlice(2), b, 8, DataType.FLOAT, ReduceOp.SUM));
                    refused("too few for 2000", () -> c.allreduce(a, b, 2000, DataType.DOUBLE, ReduceOp.SUM));
                    refused("read-only", () -> c.allreduce(a, b.asReadOnly(), 8, DataType.FLOAT, ReduceOp.SUM));
                    refused("negative", () -> c.allreduce(a, b, -1, DataType.FLOAT, ReduceOp.SUM));
                    refused("op is null", () -> c.allreduce(a, b, 8, DataType.FLOAT, null));
                    refused("type is null", () -> c.broadcast(a, 8, null, 0));
                    refused("overlap", () -> c.allreduce(a, a.asSlice(4), 8, DataType.FLOAT, ReduceOp.SUM));
                    refused("has no TREE algorithm", () -> c.allreduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM,
                            Algorithm.TREE));
                    refused("has no DIRECT algorithm", () -> c.reduce(a, b, 8, DataType.FLOAT, ReduceOp.SUM, 0,
                            Algorithm.DIRECT));
                    refused("root 2 outside 0..1", () -> c.broadcast(a, 8, DataType.INT, 2));
                    refused("root -1", () -> c.reduce(a, b, 8, DataType.INT, ReduceOp.MIN, -1));
                    c.barrier();
                    refused("one count per rank (2), has 3", () -> c.allgather(a, b, new long[] {1, 2, 3}, DataType.INT,
                            Algorithm.AUTO));
                    refused("counts[1] = -4", () -> c.reduceScatter(a, b, new long[] {1, -4}, DataType.INT,
                            ReduceOp.SUM));
                    refused("no in-place form", () -> c.allToAll(a, a, 4, DataType.INT));
                    refused("sends itself 1 elements but expects 2", () -> c.allToAll(a, new long[] {1, 1}, b,
                            new long[] {2, 2}, DataType.INT));
                    refused("in place, the input must start", () -> c.allgather(b.asSlice(4 * (1 - c.rank())), b, 4,
                            DataType.FLOAT, Algorithm.RING));
                    refused("output is null", () -> c.reduce(a, null, 8, DataType.INT, ReduceOp.SUM, c.rank()));
                    c.allreduce(a, b, 512, DataType.FLOAT, ReduceOp.MAX);
                }
            });
        }
    }

    private static void refused(String says, Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call, says);
        assertTrue(e.getMessage().contains(says), () -> "expected '" + says + "' in: " + e.getMessage());
    }
}
