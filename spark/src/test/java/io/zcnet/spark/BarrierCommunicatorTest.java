package io.zcnet.spark;

import io.zcnet.collective.CollectiveException;
import io.zcnet.collective.CommunicatorConfig;
import io.zcnet.collective.ReduceOp;
import io.zcnet.ring.Availability;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import io.zcnet.spark.example.LogisticRegression;

import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkException;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Collectives among the 4 tasks of a barrier stage in Spark's local mode ({@code local[4]}: the tasks are
 * threads of this JVM, each with a communicator and queue-pair context of its own), on both engines.
 */
class BarrierCommunicatorTest {
    private static final int TASKS = 4;
    /** The handles the tasks joined, for the driver to look at after the stage: local mode shares this JVM. */
    private static final Queue<BarrierCommunicator> JOINED = new ConcurrentLinkedQueue<>();

    private static JavaSparkContext spark;

    @BeforeAll
    static void startSpark() {
        spark = new JavaSparkContext(new SparkConf().setMaster("local[" + TASKS + "]").setAppName("zcnet-spark-test")
                .set("spark.ui.enabled", "false"));
    }

    @AfterAll
    static void stopSpark() {
        if (spark != null) {
            spark.stop();
        }
    }

    private static CommunicatorConfig config(EventLoopConfig.Choice engine) {
        if (engine == EventLoopConfig.Choice.URING) {
            Availability uring = EventLoops.uringAvailability();
            assumeTrue(uring.usable(), () -> "io_uring not usable here: " + uring.reason());
        }
        return CommunicatorConfig.defaults().withEngine(engine);
    }

    private static JavaRDD<Integer> tasks() {
        return spark.parallelize(IntStream.range(0, TASKS).boxed().toList(), TASKS);
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"NIO", "URING"})
    void allreduceAllgatherAndBroadcastAgreeOnEveryTask(EventLoopConfig.Choice engine) {
        config(engine);
        List<double[]> results = BarrierStage.mapPartitions(tasks(), partition -> {
            try (BarrierCommunicator c = BarrierCommunicator.join(BarrierTaskContext.get(),
                    CommunicatorConfig.defaults().withEngine(engine))) {
                int r = c.rank();
                // Large enough for the ring algorithm and many slots, uneven so blocks differ in size.
                float[] sum = new float[300_001];
                for (int i = 0; i < sum.length; i++) {
                    sum[i] = r * 1000 + i % 1000;
                }
                c.allreduce(sum, ReduceOp.SUM);
                double[] max = {r, -r};
                c.allreduce(max, ReduceOp.MAX);
                float[] gathered = c.allgather(new float[] {r, r + 0.5f, r + 0.25f});
                double[] broadcast = r == 2 ? new double[] {2.5, 7.25} : new double[2];
                c.broadcast(broadcast, 2);
                double[] row = new double[3 + 2 + gathered.length + broadcast.length];
                row[0] = r;
                row[1] = sum[0];
                row[2] = sum[sum.length - 1];
                row[3] = max[0];
                row[4] = max[1];
                for (int i = 0; i < gathered.length; i++) {
                    row[5 + i] = gathered[i];
                }
                System.arraycopy(broadcast, 0, row, 5 + gathered.length, broadcast.length);
                return List.of(row).iterator();
            }
        }).collect();
        assertEquals(TASKS, results.size());
        for (double[] row : results) {
            int r = (int) row[0];
            // Ranks 0..3 contribute 1000 r + i % 1000: 6000 + 4 (i % 1000).
            assertEquals(6000, row[1], "rank " + r + " element 0");
            assertEquals(6000 + 4 * (300_000 % 1000), row[2], "rank " + r + " last element");
            assertEquals(TASKS - 1, row[3], "rank " + r + " max");
            assertEquals(0, row[4], "rank " + r + " max of -r");
            double[] gathered = Arrays.copyOfRange(row, 5, 5 + 3 * TASKS);
            double[] expected = new double[3 * TASKS];
            for (int p = 0; p < TASKS; p++) {
                expected[3 * p] = p;
                expected[3 * p + 1] = p + 0.5;
                expected[3 * p + 2] = p + 0.25;
            }
            assertArrayEquals(expected, gathered, "rank " + r + " allgather");
            assertArrayEquals(new double[] {2.5, 7.25}, Arrays.copyOfRange(row, 5 + 3 * TASKS, row.length),
                    "rank " + r + " broadcast from rank 2");
        }
    }

    @Test
    void theTaskEndClosesTheCommunicator() {
        JOINED.clear();
        List<Integer> ranks = BarrierStage.mapPartitions(tasks(), partition -> {
            BarrierCommunicator c = BarrierCommunicator.join(BarrierTaskContext.get(),
                    CommunicatorConfig.defaults().withEngine(EventLoopConfig.Choice.NIO));
            JOINED.add(c);
            c.allreduce(new float[] {1}, ReduceOp.SUM);
            return List.of(c.rank()).iterator();
        }).collect();
        assertEquals(List.of(0, 1, 2, 3), new ArrayList<>(ranks).stream().sorted().toList());
        assertEquals(TASKS, JOINED.size());
        for (BarrierCommunicator c : JOINED) {
            assertTrue(c.isClosed(), c::toString);
            IllegalStateException closed = assertThrows(IllegalStateException.class,
                    () -> c.allreduce(new float[] {1}, ReduceOp.SUM), c.toString());
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        }
    }

    @Test
    void aFailedStageLeavesNoCommunicatorOpen() throws InterruptedException {
        JOINED.clear();
        long start = System.nanoTime();
        JavaRDD<Integer> stage = BarrierStage.mapPartitions(tasks(), partition -> {
            BarrierCommunicator c = BarrierCommunicator.join(BarrierTaskContext.get(),
                    CommunicatorConfig.defaults().withEngine(EventLoopConfig.Choice.NIO));
            JOINED.add(c);
            if (c.rank() == 3) {
                throw new IllegalStateException("rank 3 gives up");
            }
            c.allreduce(new float[] {1}, ReduceOp.SUM);
            return List.of(c.rank()).iterator();
        });
        SparkException failed = assertThrows(SparkException.class, stage::collect);
        assertTrue(failed.getMessage().contains("rank 3 gives up"), failed.getMessage());
        // Rank 3's failure aborts its communicator, Spark kills the stage's other tasks, and their task ends abort
        // theirs: none waits for the 30 s operation timeout. The kills finish after the job has failed.
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (JOINED.stream().anyMatch(c -> !c.isClosed()) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(TASKS, JOINED.size());
        for (BarrierCommunicator c : JOINED) {
            assertTrue(c.isClosed(), c + " after " + (System.nanoTime() - start) / 1_000_000 + " ms");
        }
    }

    @ParameterizedTest
    @EnumSource(value = EventLoopConfig.Choice.class, names = {"NIO", "URING"})
    void logisticRegressionOnFourTasksEqualsTheSameTrainingInOneProcess(EventLoopConfig.Choice engine) {
        config(engine);
        List<float[]> rows = LogisticRegression.dataset(34, 20_000);
        List<float[]> models = LogisticRegression.trainOnSpark(spark, rows, TASKS, 100, 0.5f, engine);
        float[] local = LogisticRegression.trainLocally(rows, 100, 0.5f);
        assertEquals(TASKS, models.size());
        for (float[] model : models) {
            assertArrayEquals(models.getFirst(), model, "every task holds the same model");
            assertArrayEquals(local, model, 1e-4f, "the same training in one process");
        }
        // A model that learned something: the labels are drawn from a logistic model, so about 0.8 is the best.
        double accuracy = LogisticRegression.accuracy(local, rows);
        assertTrue(accuracy > 0.7, "accuracy " + accuracy);
    }

    @Test
    void joinValidatesItsArguments() {
        assertThrows(IllegalArgumentException.class, () -> BarrierCommunicator.join(null));
        assertThrows(IllegalArgumentException.class, () -> BarrierStage.mapPartitions(null, p -> p));
        assertThrows(IllegalArgumentException.class, () -> BarrierStage.mapPartitions(tasks(), null));
    }

    @Test
    void theArrayFormsValidateBeforeSending() {
        List<String> errors = BarrierStage.mapPartitions(tasks(), partition -> {
            List<String> seen = new ArrayList<>();
            try (BarrierCommunicator c = BarrierCommunicator.join(BarrierTaskContext.get(),
                    CommunicatorConfig.defaults().withEngine(EventLoopConfig.Choice.NIO))) {
                seen.add(assertThrows(IllegalArgumentException.class, () -> c.allreduce((float[]) null, ReduceOp.SUM))
                        .getMessage());
                seen.add(assertThrows(IllegalArgumentException.class, () -> c.allreduce(new float[1], null))
                        .getMessage());
                seen.add(assertThrows(IllegalArgumentException.class, () -> c.broadcast(new double[1], TASKS))
                        .getMessage());
                // Still usable: the errors sent nothing.
                float[] one = {1};
                c.allreduce(one, ReduceOp.SUM);
                assertEquals(TASKS, one[0]);
            }
            return seen.iterator();
        }).collect();
        assertEquals(3 * TASKS, errors.size());
    }
}
