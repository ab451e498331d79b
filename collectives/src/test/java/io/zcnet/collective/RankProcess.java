package io.zcnet.collective;

import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One rank as a process of its own, for {@link ProcessRanksTest}: {@code RankProcess RANK SIZE HOST:PORT
 * ENGINE SCENARIO}. It reports on stdout, one line each, what the test waits for:
 * <ul>
 *   <li>{@code verify}: rank 0 hosts the store; every rank runs a set of operations checked against the
 *   reference, prints {@code rank R ok} and exits 0 (1 and {@code rank R failed: ...} otherwise);</li>
 *   <li>{@code loop}: joins a store hosted apart and runs allreduces of 16 MiB until one fails, printing
 *   {@code rank R started} after the first and {@code rank R failed peer=P: ...} at the failure, then
 *   exits 2 (the test kills one rank meanwhile).</li>
 * </ul>
 */
public final class RankProcess {
    private RankProcess() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[0]);
        int size = Integer.parseInt(args[1]);
        String[] hostPort = args[2].split(":");
        InetSocketAddress store = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
        EventLoopConfig.Choice engine = EventLoopConfig.Choice.valueOf(args[3]);
        String scenario = args[4];
        CommunicatorConfig config = CommunicatorConfig.defaults().withEngine(engine)
                .withTimeouts(Duration.ofSeconds(20), Duration.ofSeconds(60)).withHostStore(scenario.equals("verify"));
        int exit;
        try (Communicator c = Communicator.rendezvous(rank, size, store, config); Arena arena = Arena.ofConfined()) {
            exit = scenario.equals("verify") ? verify(c, arena) : loop(c, arena);
        }
        System.out.flush();
        System.exit(exit);
    }

    private static int verify(Communicator c, Arena arena) {
        try {
            Matrix m = new Matrix(c, arena);
            int size = c.size();
            for (Algorithm algorithm : new Algorithm[] {Algorithm.RING, Algorithm.HALVING_DOUBLING}) {
                m.allreduce(algorithm, DataType.FLOAT, ReduceOp.SUM, 300_007, false);
                m.allreduce(algorithm, DataType.BFLOAT16, ReduceOp.MAX, 70_001, true);
            }
            m.reduceScatter(DataType.INT, ReduceOp.SUM, new long[] {5000, 0, 123_457, 77}, false);
            m.allgather(Algorithm.RING, DataType.DOUBLE, new long[] {100_000, 3, 0, 65_536}, false);
            m.broadcast(Algorithm.AUTO, DataType.LONG, 300_001, size - 1);
            m.reduce(Algorithm.AUTO, DataType.FLOAT, ReduceOp.MIN, 200_000, 1, true);
            long[][] counts = new long[size][size];
            for (int q = 0; q < size; q++) {
                for (int p = 0; p < size; p++) {
                    counts[q][p] = (q + 1L) * (p + 2L) * 1000;
                }
            }
            m.allToAll(DataType.FLOAT, counts, false);
            c.barrier();
            System.out.println("rank " + c.rank() + " ok");
            return 0;
        } catch (Exception | AssertionError e) {
            System.out.println("rank " + c.rank() + " failed: " + e);
            return 1;
        }
    }

    private static int loop(Communicator c, Arena arena) {
        long count = 4L << 20;
        MemorySegment data = arena.allocate(count * 4, 64);
        for (int i = 0; ; i++) {
            try {
                c.allreduce(data, count, DataType.FLOAT, ReduceOp.SUM);
            } catch (CollectiveException e) {
                System.out.println("rank " + c.rank() + " failed peer=" + e.peer() + ": " + e.getMessage());
                return 2;
            }
            if (i == 0) {
                System.out.println("rank " + c.rank() + " started");
            }
        }
    }
}
