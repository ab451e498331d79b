package io.zcnet.spark.bench;

import io.zcnet.collective.Communicator;
import io.zcnet.collective.CommunicatorConfig;
import io.zcnet.collective.DataType;
import io.zcnet.collective.ReduceOp;
import io.zcnet.collective.RendezvousServer;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.spark.BarrierCommunicator;
import io.zcnet.spark.BarrierStage;

import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

/**
 * A 64 MiB float allreduce among 4 ranks: as the 4 tasks of a barrier stage in Spark's local mode, and as 4
 * threads of this JVM with a communicator each, joined through a {@link RendezvousServer} without Spark. Both
 * time the same loop of allreduces on native memory after the same warm-up, and the slowest rank's time
 * counts; Spark's part excludes the stage's start and the join, which happen once per stage. The two
 * alternate for some rounds, so that whatever else the machine runs meanwhile falls on both alike. Prints
 * every round, the median seconds per allreduce of each and their ratio (the throughput under Spark over the
 * one without).
 *
 * <p>Arguments: {@code [bytes] [iterations] [rounds] [engine]}, by default {@code 67108864 10 5 auto}. Run by
 * bench/spark.sh.
 */
public final class SparkAllreduceBench {
    private static final int RANKS = 4;
    private static final int WARMUP = 3;

    private SparkAllreduceBench() {
    }

    /**
     * Runs both and prints the figures.
     *
     * @param args bytes, iterations, engine (auto, uring, nio)
     * @throws Exception if a run fails
     */
    public static void main(String[] args) throws Exception {
        long bytes = args.length > 0 ? Long.parseLong(args[0]) : 64L << 20;
        int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(args.length > 3 ? args[3] : "auto");
        long count = bytes / Float.BYTES;
        System.out.printf("allreduce %d MiB float, %d ranks, %d iterations after %d, %d rounds, engine %s%n",
                bytes >> 20, RANKS, iterations, WARMUP, rounds, engine);
        SparkConf conf = new SparkConf().setMaster("local[" + RANKS + "]").setAppName("zcnet-allreduce-bench")
                .set("spark.ui.enabled", "false");
        double[] threads = new double[rounds];
        double[] spark = new double[rounds];
        try (JavaSparkContext context = new JavaSparkContext(conf)) {
            for (int i = 0; i < rounds; i++) {
                threads[i] = withoutSpark(count, iterations, engine);
                spark[i] = inSpark(context, count, iterations, engine);
                System.out.printf("round %d: threads %.1f ms/op, Spark %.1f ms/op%n", i, threads[i] * 1e3,
                        spark[i] * 1e3);
            }
        }
        double t = median(threads);
        double s = median(spark);
        System.out.printf("threads without Spark  %.1f ms/op  %.0f MiB/s (median)%n", t * 1e3, bytes / t / (1 << 20));
        System.out.printf("Spark local[%d]         %.1f ms/op  %.0f MiB/s (median)%n", RANKS, s * 1e3,
                bytes / s / (1 << 20));
        System.out.printf("ratio (Spark / threads throughput) %.3f%n", t / s);
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** {@return seconds per allreduce, the slowest rank's, of 4 threads with a communicator each} */
    private static double withoutSpark(long count, int iterations, EventLoopConfig.Choice engine) throws Exception {
        CommunicatorConfig config = CommunicatorConfig.defaults().withEngine(engine).withHostStore(false);
        ExecutorService pool = Executors.newFixedThreadPool(RANKS);
        try (RendezvousServer store = RendezvousServer.start(new InetSocketAddress("127.0.0.1", 0), RANKS,
                config.connectTimeout())) {
            List<Future<Double>> ranks = new ArrayList<>();
            for (int r = 0; r < RANKS; r++) {
                int rank = r;
                ranks.add(pool.submit(() -> {
                    try (Communicator c = Communicator.rendezvous(rank, RANKS, store.address(), config)) {
                        return timed(c, count, iterations);
                    }
                }));
            }
            double slowest = 0;
            for (Future<Double> f : ranks) {
                slowest = Math.max(slowest, f.get());
            }
            return slowest;
        } finally {
            pool.shutdownNow();
        }
    }

    /** {@return seconds per allreduce, the slowest task's, of the 4 tasks of a barrier stage} */
    private static double inSpark(JavaSparkContext spark, long count, int iterations, EventLoopConfig.Choice engine) {
        List<Double> perTask = BarrierStage.mapPartitions(
                spark.parallelize(IntStream.range(0, RANKS).boxed().toList(), RANKS), partition -> {
                    try (BarrierCommunicator c = BarrierCommunicator.join(BarrierTaskContext.get(),
                            CommunicatorConfig.defaults().withEngine(engine))) {
                        return List.of(timed(c.communicator(), count, iterations)).iterator();
                    }
                }).collect();
        return Collections.max(perTask);
    }

    /** {@return seconds per allreduce of {@code iterations} after the warm-up, from a barrier to the last} */
    private static double timed(Communicator c, long count, int iterations) throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(count * Float.BYTES, 64);
            for (long i = 0; i < count; i++) {
                buffer.setAtIndex(ValueLayout.JAVA_FLOAT, i, c.rank() + i % 7);
            }
            for (int i = 0; i < WARMUP; i++) {
                c.allreduce(buffer, count, DataType.FLOAT, ReduceOp.SUM);
            }
            c.barrier();
            long start = System.nanoTime();
            for (int i = 0; i < iterations; i++) {
                c.allreduce(buffer, count, DataType.FLOAT, ReduceOp.SUM);
            }
            c.barrier();
            return (System.nanoTime() - start) / 1e9 / iterations;
        }
    }
}
