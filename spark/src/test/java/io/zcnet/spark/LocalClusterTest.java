package io.zcnet.spark;

import io.zcnet.ring.EventLoopConfig;
import io.zcnet.spark.example.LogisticRegression;

import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The training example on {@code local-cluster[2,2,1024]}: two workers, each starting an executor JVM of two
 * task slots, so the four ranks are two processes of two threads and their queue pairs cross processes.
 *
 * <p>A worker starts its executor with the command Spark's launcher builds, which wants a Spark installation:
 * {@code $SPARK_HOME/jars} must exist (the pom points SPARK_HOME into target/), and the executor's class path is
 * the jars there plus {@code spark.executor.extraClassPath}. The jars directory stays empty; the extra class
 * path is this JVM's, which holds Spark, zcnet and these tests.
 */
class LocalClusterTest {

    @Test
    void logisticRegressionAcrossTwoExecutorJvms() throws IOException {
        String home = System.getenv("SPARK_HOME");
        assumeTrue(home != null, "SPARK_HOME is not set (the spark module's pom sets it for surefire)");
        Files.createDirectories(Path.of(home, "jars"));
        String options = "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow";
        SparkConf conf = new SparkConf().setMaster("local-cluster[2,2,1024]").setAppName("zcnet-local-cluster")
                .set("spark.ui.enabled", "false")
                .set("spark.executor.extraClassPath", System.getProperty("java.class.path"))
                .set("spark.executor.extraJavaOptions", options);
        List<float[]> rows = LogisticRegression.dataset(34, 20_000);
        try (JavaSparkContext spark = new JavaSparkContext(conf)) {
            List<Long> processes = BarrierStage.mapPartitions(spark.parallelize(List.of(0, 1, 2, 3), 4), partition -> {
                try (BarrierCommunicator c = BarrierCommunicator.join(BarrierTaskContext.get())) {
                    double[] pid = {ProcessHandle.current().pid()};
                    return Arrays.stream(c.allgather(pid)).mapToObj(p -> (long) p).iterator();
                }
            }).collect();
            assertEquals(16, processes.size(), "every task's allgather of four process ids");
            assertEquals(2, new HashSet<>(processes).size(), "the ranks run in two executor JVMs: " + processes);
            assertFalse(processes.contains(ProcessHandle.current().pid()), "no rank runs in the driver");
            List<float[]> models = LogisticRegression.trainOnSpark(spark, rows, 4, 100, 0.5f,
                    EventLoopConfig.Choice.AUTO);
            float[] local = LogisticRegression.trainLocally(rows, 100, 0.5f);
            assertEquals(4, models.size());
            for (float[] model : models) {
                assertArrayEquals(local, model, 1e-4f, "the same training in one process");
            }
        }
    }
}
