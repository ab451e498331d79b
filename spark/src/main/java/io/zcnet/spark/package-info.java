/**
 * zcnet collectives among the tasks of a Spark barrier stage: {@link io.zcnet.spark.BarrierCommunicator}
 * forms a {@link io.zcnet.collective.Communicator} per task through
 * {@link org.apache.spark.BarrierTaskContext#allGather(String)} and closes it with the task.
 */
package io.zcnet.spark;
