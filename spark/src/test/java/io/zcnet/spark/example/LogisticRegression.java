package io.zcnet.spark.example;

import io.zcnet.collective.CommunicatorConfig;
import io.zcnet.collective.ReduceOp;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.spark.BarrierCommunicator;
import io.zcnet.spark.BarrierStage;

import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Logistic regression by full-batch gradient descent, data parallel: each task of a barrier stage holds one
 * partition of the data set, computes its gradient, and an allreduce sums the gradients, so every task takes
 * the same step and ends with the same model. {@link #trainLocally} is the same training in one process, to
 * compare against.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED [Spark's --add-opens, see spark/pom.xml] \
 *     -cp ... io.zcnet.spark.example.LogisticRegression
 * </pre>
 */
public final class LogisticRegression {
    /** Features per example; the model has one weight more, the bias. */
    public static final int FEATURES = 8;

    private LogisticRegression() {
    }

    /**
     * {@return {@code count} examples, each {@code FEATURES} standard normal features and a 0/1 label drawn with
     * the probability a fixed true model gives}: the same for the same seed.
     *
     * @param seed  the generator's seed
     * @param count how many examples
     */
    public static List<float[]> dataset(long seed, int count) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] truth = new float[FEATURES + 1];
        for (int j = 0; j < truth.length; j++) {
            truth[j] = (float) (2 * random.nextDouble() - 1);
        }
        List<float[]> rows = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            float[] row = new float[FEATURES + 1];
            for (int j = 0; j < FEATURES; j++) {
                row[j] = (float) random.nextGaussian();
            }
            row[FEATURES] = random.nextDouble() < probability(truth, row) ? 1 : 0;
            rows.add(row);
        }
        return rows;
    }

    /**
     * {@return the model after {@code iterations} steps of {@code rate} on all of {@code rows} in this process}
     *
     * @param rows       the examples, as {@link #dataset} makes them
     * @param iterations how many gradient steps
     * @param rate       the learning rate
     */
    public static float[] trainLocally(List<float[]> rows, int iterations, float rate) {
        float[] model = new float[FEATURES + 1];
        for (int i = 0; i < iterations; i++) {
            step(model, gradient(model, rows), rate, rows.size());
        }
        return model;
    }

    /**
     * {@return the model of every task after {@code iterations} steps of {@code rate}, trained on
     * {@code partitions} tasks of one barrier stage, each with its slice of {@code rows}}: one row per task, all
     * equal (the allreduce gives every task the same sums).
     *
     * @param spark      the Spark context
     * @param rows       the examples, as {@link #dataset} makes them
     * @param partitions how many tasks; the cluster needs that many free slots at once
     * @param iterations how many gradient steps
     * @param rate       the learning rate
     * @param engine     the engine of every task's communicator
     */
    public static List<float[]> trainOnSpark(JavaSparkContext spark, List<float[]> rows, int partitions,
            int iterations, float rate, EventLoopConfig.Choice engine) {
        JavaRDD<float[]> data = spark.parallelize(rows, partitions);
        JavaRDD<float[]> models = BarrierStage.mapPartitions(data, partition -> {
            List<float[]> mine = new ArrayList<>();
            partition.forEachRemaining(mine::add);
            try (BarrierCommunicator c = BarrierCommunicator.join(BarrierTaskContext.get(),
                    CommunicatorConfig.defaults().withEngine(engine))) {
                double[] count = {mine.size()};
                c.allreduce(count, ReduceOp.SUM);
                float[] model = new float[FEATURES + 1];
                for (int i = 0; i < iterations; i++) {
                    float[] g = gradient(model, mine);
                    c.allreduce(g, ReduceOp.SUM);
                    step(model, g, rate, (long) count[0]);
                }
                return List.of(model).iterator();
            }
        });
        return models.collect();
    }

    /** {@return the sum over {@code rows} of the log-loss gradient at {@code model}}, summed in double. */
    static float[] gradient(float[] model, List<float[]> rows) {
        double[] sum = new double[FEATURES + 1];
        for (float[] row : rows) {
            double error = probability(model, row) - row[FEATURES];
            for (int j = 0; j < FEATURES; j++) {
                sum[j] += error * row[j];
            }
            sum[FEATURES] += error;
        }
        float[] g = new float[FEATURES + 1];
        for (int j = 0; j < g.length; j++) {
            g[j] = (float) sum[j];
        }
        return g;
    }

    private static void step(float[] model, float[] gradientSum, float rate, long count) {
        for (int j = 0; j < model.length; j++) {
            model[j] -= rate * gradientSum[j] / count;
        }
    }

    /** {@return P(label 1 | row) under {@code model}}; the bias is the model's last weight. */
    static double probability(float[] model, float[] row) {
        double z = model[FEATURES];
        for (int j = 0; j < FEATURES; j++) {
            z += model[j] * row[j];
        }
        return 1 / (1 + Math.exp(-z));
    }

    /**
     * {@return the share of {@code rows} whose label the model predicts (probability above one half)}
     *
     * @param model a trained model
     * @param rows  the examples
     */
    public static double accuracy(float[] model, List<float[]> rows) {
        long right = rows.stream().filter(r -> (probability(model, r) > 0.5) == (r[FEATURES] == 1)).count();
        return (double) right / rows.size();
    }

    /**
     * Trains on 4 tasks of a local Spark and in this process, and prints both models and their largest difference.
     *
     * @param args none
     */
    public static void main(String[] args) {
        List<float[]> rows = dataset(34, 20_000);
        SparkConf conf = new SparkConf().setMaster("local[4]").setAppName("zcnet logistic regression");
        try (JavaSparkContext spark = new JavaSparkContext(conf)) {
            float[] distributed = trainOnSpark(spark, rows, 4, 200, 0.5f, EventLoopConfig.Choice.AUTO).getFirst();
            float[] local = trainLocally(rows, 200, 0.5f);
            double largest = 0;
            for (int j = 0; j < local.length; j++) {
                largest = Math.max(largest, Math.abs(distributed[j] - local[j]));
            }
            System.out.printf("spark  %s%nlocal  %s%nlargest difference %.3g, accuracy %.3f%n",
                    java.util.Arrays.toString(distributed), java.util.Arrays.toString(local), largest,
                    accuracy(distributed, rows));
        }
    }
}
