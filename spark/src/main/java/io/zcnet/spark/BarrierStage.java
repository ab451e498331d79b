package io.zcnet.spark;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;

import scala.Function1;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

import java.io.Serializable;
import java.util.Iterator;

/**
 * Runs a barrier stage from Java. Spark has no Java form of {@code rdd.barrier().mapPartitions(...)}: it takes
 * a Scala function of Scala iterators and a {@code ClassTag}. Scala code calls that directly; Java code calls
 * {@link #mapPartitions} with a {@link FlatMapFunction}, inside which {@link BarrierCommunicator#join} forms the
 * tasks' communicator.
 */
public final class BarrierStage {
    private BarrierStage() {
    }

    /**
     * {@return the RDD of what {@code body} makes of each partition of {@code rdd}, computed as one barrier stage}:
     * all its tasks are launched together (or the job fails at once where there are fewer free slots than
     * partitions), a failed task restarts them all, and {@link org.apache.spark.BarrierTaskContext#get()} works
     * inside {@code body}. Lazy, as {@code mapPartitions} is: an action on the result runs it.
     *
     * @param rdd  the partitions, one task each
     * @param body what each task does with its partition; serialized to the executors
     * @param <T>  the input's element type
     * @param <R>  the output's element type
     * @throws IllegalArgumentException if {@code rdd} or {@code body} is null
     */
    public static <T, R> JavaRDD<R> mapPartitions(JavaRDD<T> rdd, FlatMapFunction<Iterator<T>, R> body) {
        if (rdd == null || body == null) {
            throw new IllegalArgumentException("an RDD and a partition function are required");
        }
        Function1<scala.collection.Iterator<T>, scala.collection.Iterator<R>> task =
                (Function1<scala.collection.Iterator<T>, scala.collection.Iterator<R>> & Serializable) partition -> {
                    try {
                        return CollectionConverters.asScala(body.call(CollectionConverters.asJava(partition)));
                    } catch (RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new IllegalStateException("barrier task of partition " + partitionId() + " failed: "
                                + e.getMessage(), e);
                    }
                };
        // Erased at run time: Spark uses the tag only to make arrays of R, and Object[] holds any R.
        @SuppressWarnings("unchecked")
        ClassTag<R> any = (ClassTag<R>) (ClassTag<?>) ClassTag$.MODULE$.AnyRef();
        return JavaRDD.fromRDD(rdd.rdd().barrier().mapPartitions(task, false, any), any);
    }

    private static int partitionId() {
        return org.apache.spark.TaskContext.getPartitionId();
    }
}
