package io.zcnet.collective;

import io.zcnet.ring.EventLoopConfig;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One rank as a process of its own, for {@link ProcessRanksTest}: {@code RankProcess RANK SIZE HOST:PORT
 * ENGINE BUSY_POLL}, rank 0 hosting the store at HOST:PORT. It runs a set of operations checked against the
 * reference and prints {@code rank R ok} (or {@code rank R failed: ...} and exits 1), then runs allreduces
 * of 16 MiB until one fails, printing {@code rank R looping} after the first and {@code rank R failed
 * peer=P: ...} at the failure, and exits 2: the test kills one rank meanwhile.
 *
 * <p>For {@link LauncherContractTest}: {@code RankProcess --from-env ok|loop} joins as its launcher's
 * environment says ({@link Communicator#fromEnvironment}, the engine from {@code -Dzcnet.engine}), prints
 * {@code rank R of N on ENGINE} and runs the same operations; with {@code ok} it closes and exits 0 after
 * them, with {@code loop} it goes on as above.
 */
public final class RankProcess {
    private RankProcess() {
    }

    public static void main(String[] args) throws Exception {
        boolean fromEnvironment = args[0].equals("--from-env");
        CommunicatorConfig config = CommunicatorConfig.defaults().withTimeouts(Duration.ofSeconds(20),
                Duration.ofSeconds(60));
        int exit;
        try (Communicator c = fromEnvironment ? Communicator.fromEnvironment(config) : join(args, config);
                Arena arena = Arena.ofConfined()) {
            if (fromEnvironment) {
                System.out.println("rank " + c.rank() + " of " + c.size() + " on " + c.engine());
            }
            boolean verified = verify(c, arena);
            exit = !verified ? 1 : fromEnvironment && args[1].equals("ok") ? 0 : loop(c, arena);
        }
        System.out.flush();
        System.exit(exit);
    }

    private static Communicator join(String[] args, CommunicatorConfig config) throws IOException {
        int rank = Integer.parseInt(args[0]);
        int size = Integer.parseInt(args[1]);
        String[] hostPort = args[2].split(":");
        InetSocketAddress store = new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1]));
        return Communicator.rendezvous(rank, size, store, config.withEngine(EventLoopConfig.Choice.valueOf(args[3]))
                .withBusyPoll(Boolean.parseBoolean(args[4])));
    }

    private static boolean verify(Communicator c, Arena arena) {
        try {
            Matrix m = new Matrix(c, arena);
            int size = c.size();
            for (Algorithm algorithm : new Algorithm[] {Algorithm.RING, Algorithm.HALVING_DOUBLING}) {
                m.allreduce(algorithm, DataType.FLOAT, ReduceOp.SUM, 100_003, false);
                m.allreduce(algorithm, DataType.BFLOAT16, ReduceOp.MAX, 30_001, true);
            }
            m.reduceScatter(DataType.INT, ReduceOp.SUM, new long[] {5000, 0, 33_457, 77}, false);
            m.allgather(Algorithm.RING, DataType.DOUBLE, new long[] {30_000, 3, 0, 16_384}, false);
            m.broadcast(Algorithm.AUTO, DataType.LONG, 100_001, size - 1);
            m.reduce(Algorithm.AUTO, DataType.FLOAT, ReduceOp.MIN, 60_000, 1, true);
            long[][] counts = new long[size][size];
            for (int q = 0; q < size; q++) {
                for (int p = 0; p < size; p++) {
                    counts[q][p] = (q + 1L) * (p + 2L) * 300;
                }
            }
            m.allToAll(DataType.FLOAT, counts, false);
            c.barrier();
            System.out.println("rank " + c.rank() + " ok");
            return true;
        } catch (Exception | AssertionError e) {
            System.out.println("rank " + c.rank() + " failed: " + e);
            return false;
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
                System.out.println("rank " + c.rank() + " looping");
            }
        }
    }
}
