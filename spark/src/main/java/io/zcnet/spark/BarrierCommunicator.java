package io.zcnet.spark;

import io.zcnet.collective.CollectiveException;
import io.zcnet.collective.Communicator;
import io.zcnet.collective.CommunicatorConfig;
import io.zcnet.collective.DataType;
import io.zcnet.collective.ReduceOp;
import io.zcnet.collective.RendezvousServer;

import org.apache.spark.BarrierTaskContext;
import org.apache.spark.BarrierTaskInfo;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.TaskFailureListener;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Array;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * A zcnet {@link Communicator} among the tasks of one Spark barrier stage ({@code rdd.barrier().mapPartitions(...)}):
 * rank = the task's partition, size = the stage's task count. {@link #join} forms it, and the task's end
 * closes it: a task that completes closes it collectively ({@link Communicator#close()}), a task that fails or
 * is killed aborts it ({@link Communicator#abort()}), so the other tasks' operations fail instead of waiting.
 *
 * <p>Two ways to run operations. Java code with native memory calls {@link #communicator()} and uses every
 * operation of {@link Communicator} on {@link MemorySegment}s. Code with heap arrays (Scala's
 * {@code Array[Float]}, {@code Array[Double]}) calls the array methods here, which copy through one native
 * staging buffer that the handle keeps and grows: one copy in and one out per call, on top of the
 * communicator's own staging.
 *
 * <p>Threads: the task's thread, or any one thread at a time, as for {@link Communicator}; every task of the
 * stage calls the same operations in the same order with matching lengths and roots.
 */
public final class BarrierCommunicator implements AutoCloseable {
    private final Communicator communicator;
    /** The rendezvous store, on rank 0 only; it ends by itself once every rank has joined. */
    private final RendezvousServer store;
    private Arena arena;
    private MemorySegment buffer = MemorySegment.NULL;
    /** Volatile for {@link #isClosed()} from other threads; every other use is on the calling thread. */
    private volatile boolean closed;

    private BarrierCommunicator(Communicator communicator, RendezvousServer store) {
        this.communicator = communicator;
        this.store = store;
    }

    /**
     * Joins the communicator of the barrier stage that {@code context} belongs to, with
     * {@link CommunicatorConfig#defaults()}.
     *
     * @param context the running task's context, {@code BarrierTaskContext.get()}
     * @return the joined communicator, closed when the task ends
     * @throws IOException              as {@link #join(BarrierTaskContext, CommunicatorConfig)}
     * @throws IllegalArgumentException if {@code context} is null
     */
    public static BarrierCommunicator join(BarrierTaskContext context) throws IOException {
        return join(context, CommunicatorConfig.defaults());
    }

    /**
     * Joins the communicator of the barrier stage that {@code context} belongs to: task 0 starts a
     * rendezvous store on a free port of its executor's address (or of {@code config.listenAddress()} when
     * set), every task learns it through {@link BarrierTaskContext#allGather(String)}, and every task joins
     * with rank = its partition and size = the stage's task count. Every task of the stage must call this,
     * once, with the same slot settings; it is a barrier of the stage (one {@code allGather}), so it must come
     * in the same place of every task's barrier calls. The communicator is closed when the task ends (see the
     * class comment) and may be closed earlier.
     *
     * @param context the running task's context, {@code BarrierTaskContext.get()}
     * @param config  how the ranks communicate; its {@code hostStore} is ignored (task 0 always hosts the store
     *                here, on a port it picks)
     * @return the joined communicator
     * @throws IOException              if the store cannot be started, or the ranks cannot join or connect within
     *                                  {@code config.connectTimeout()} (the message names which)
     * @throws IllegalArgumentException if {@code context} or {@code config} is null, or the executor's address that
     *                                  Spark reports cannot be resolved
     */
    public static BarrierCommunicator join(BarrierTaskContext context, CommunicatorConfig config) throws IOException {
        if (context == null || config == null) {
            throw new IllegalArgumentException("a barrier task context and a config are required");
        }
        BarrierTaskInfo[] tasks = context.getTaskInfos();
        int rank = context.partitionId();
        int size = tasks.length;
        RendezvousServer store = null;
        String published = "";
        if (rank == 0) {
            InetAddress host = config.listenAddress() != null ? config.listenAddress() : executorHost(tasks[0]);
            store = RendezvousServer.start(new InetSocketAddress(host, 0), size, config.connectTimeout(),
                    config.jobSecret());
            published = store.address().getAddress().getHostAddress() + " " + store.address().getPort();
        }
        try {
            InetSocketAddress address = storeAddress(context.allGather(published)[0]);
            Communicator communicator = Communicator.rendezvous(rank, size, address, config.withHostStore(false));
            BarrierCommunicator joined = new BarrierCommunicator(communicator, store);
            // Failure listeners run before completion listeners: a failed task aborts, and the close that
            // follows finds nothing left to do.
            context.addTaskFailureListener((TaskFailureListener) (task, error) -> joined.abort());
            context.addTaskCompletionListener((TaskCompletionListener) task -> {
                if (task.isInterrupted()) {
                    joined.abort();
                } else {
                    joined.close();
                }
            });
            return joined;
        } catch (IOException | RuntimeException e) {
            if (store != null) {
                store.close();
            }
            throw e;
        }
    }

    /** Spark reports an executor as {@code host:port}; the host is what the other executors reach it by. */
    private static InetAddress executorHost(BarrierTaskInfo task) {
        String address = task.address();
        int colon = address.lastIndexOf(':');
        String host = colon < 0 ? address : address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cannot resolve the executor address " + address
                    + " that Spark reports for task 0: " + e.getMessage(), e);
        }
    }

    /** Task 0 published {@code "ip port"}: a numeric address, so no lookup can resolve it differently here. */
    private static InetSocketAddress storeAddress(String published) throws IOException {
        int space = published.indexOf(' ');
        if (space < 0) {
            throw new IOException("task 0 published no rendezvous store address, but \"" + published + "\"");
        }
        return new InetSocketAddress(InetAddress.getByName(published.substring(0, space)),
                Integer.parseInt(published.substring(space + 1)));
    }

    /** {@return the communicator, for the operations on native memory}; it closes with this handle */
    public Communicator communicator() {
        return communicator;
    }

    /** {@return this task's rank: its partition in the barrier stage} */
    public int rank() {
        return communicator.rank();
    }

    /** {@return the number of ranks: the barrier stage's task count} */
    public int size() {
        return communicator.size();
    }

    /** {@return whether {@link #close()} or {@link #abort()} ran (the task's end runs one)}; any thread */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Reduces {@code values} across all tasks, in place: afterwards every task holds the same elements.
     *
     * @param values this task's elements, replaced by the result; the same length on every task
     * @param op     how elements combine, the same on every task
     * @throws CollectiveException      as {@link Communicator#allreduce(MemorySegment, long, DataType, ReduceOp)}
     * @throws IllegalArgumentException if {@code values} or {@code op} is null
     * @throws IllegalStateException    if this communicator is closed
     */
    public void allreduce(float[] values, ReduceOp op) throws CollectiveException {
        inPlace(values, length(values), ValueLayout.JAVA_FLOAT,
                s -> communicator.allreduce(s, values.length, DataType.FLOAT, op));
    }

    /**
     * Reduces {@code values} across all tasks, in place: afterwards every task holds the same elements.
     *
     * @param values this task's elements, replaced by the result; the same length on every task
     * @param op     how elements combine, the same on every task
     * @throws CollectiveException      as {@link Communicator#allreduce(MemorySegment, long, DataType, ReduceOp)}
     * @throws IllegalArgumentException if {@code values} or {@code op} is null
     * @throws IllegalStateException    if this communicator is closed
     */
    public void allreduce(double[] values, ReduceOp op) throws CollectiveException {
        inPlace(values, length(values), ValueLayout.JAVA_DOUBLE,
                s -> communicator.allreduce(s, values.length, DataType.DOUBLE, op));
    }

    /**
     * Gathers every task's {@code values}, in rank order.
     *
     * @param values this task's elements; the same length on every task
     * @return {@code size() * values.length} elements: rank r's at {@code r * values.length}
     * @throws CollectiveException      as {@link Communicator#allgather(MemorySegment, MemorySegment, long, DataType)}
     * @throws IllegalArgumentException if {@code values} is null, or the result would exceed an array's length
     * @throws IllegalStateException    if this communicator is closed
     */
    public float[] allgather(float[] values) throws CollectiveException {
        float[] out = new float[gatheredLength(length(values))];
        allgather(values, values.length, out, ValueLayout.JAVA_FLOAT, DataType.FLOAT);
        return out;
    }

    /**
     * Gathers every task's {@code values}, in rank order.
     *
     * @param values this task's elements; the same length on every task
     * @return {@code size() * values.length} elements: rank r's at {@code r * values.length}
     * @throws CollectiveException      as {@link Communicator#allgather(MemorySegment, MemorySegment, long, DataType)}
     * @throws IllegalArgumentException if {@code values} is null, or the result would exceed an array's length
     * @throws IllegalStateException    if this communicator is closed
     */
    public double[] allgather(double[] values) throws CollectiveException {
        double[] out = new double[gatheredLength(length(values))];
        allgather(values, values.length, out, ValueLayout.JAVA_DOUBLE, DataType.DOUBLE);
        return out;
    }

    /**
     * Sends {@code root}'s {@code values} to every task, in place.
     *
     * @param values at the root, the elements to send; elsewhere, overwritten with them; the same length on
     *               every task
     * @param root   the rank whose elements are sent, the same on every task
     * @throws CollectiveException      as {@link Communicator#broadcast(MemorySegment, long, DataType, int)}
     * @throws IllegalArgumentException if {@code values} is null or {@code root} is not a rank
     * @throws IllegalStateException    if this communicator is closed
     */
    public void broadcast(float[] values, int root) throws CollectiveException {
        inPlace(values, length(values), ValueLayout.JAVA_FLOAT,
                s -> communicator.broadcast(s, values.length, DataType.FLOAT, root));
    }

    /**
     * Sends {@code root}'s {@code values} to every task, in place.
     *
     * @param values at the root, the elements to send; elsewhere, overwritten with them; the same length on
     *               every task
     * @param root   the rank whose elements are sent, the same on every task
     * @throws CollectiveException      as {@link Communicator#broadcast(MemorySegment, long, DataType, int)}
     * @throws IllegalArgumentException if {@code values} is null or {@code root} is not a rank
     * @throws IllegalStateException    if this communicator is closed
     */
    public void broadcast(double[] values, int root) throws CollectiveException {
        inPlace(values, length(values), ValueLayout.JAVA_DOUBLE,
                s -> communicator.broadcast(s, values.length, DataType.DOUBLE, root));
    }

    // The array forms below take the array as an Object: MemorySegment.copy does, for every primitive array.

    /** One operation in place on a staged copy of {@code values}. */
    @FunctionalInterface
    private interface InPlace {
        void run(MemorySegment staged) throws CollectiveException;
    }

    private void inPlace(Object values, int length, ValueLayout layout, InPlace operation) throws CollectiveException {
        MemorySegment s = room(length, layout);
        MemorySegment.copy(values, 0, s, layout, 0, length);
        operation.run(s);
        MemorySegment.copy(s, layout, 0, values, 0, length);
    }

    private void allgather(Object values, int length, Object out, ValueLayout layout, DataType type)
            throws CollectiveException {
        MemorySegment s = room(length * size(), layout);
        // In place: this rank's block of the output is its input.
        MemorySegment own = s.asSlice(rank() * length * layout.byteSize(), length * layout.byteSize());
        MemorySegment.copy(values, 0, own, layout, 0, length);
        communicator.allgather(own, s, length, type);
        MemorySegment.copy(s, layout, 0, out, 0, length * size());
    }

    private static int length(Object values) {
        if (values == null) {
            throw new IllegalArgumentException("an array of values is required");
        }
        return Array.getLength(values);
    }

    private int gatheredLength(int length) {
        long total = (long) length * size();
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(size() + " ranks of " + length
                    + " elements are more than one array holds");
        }
        return (int) total;
    }

    /**
     * {@return the first {@code elements} of {@code layout} of the staging buffer}, grown first if it is
     * smaller. The buffer is of a shared arena, so the communicator's loop thread may run the operation.
     */
    private MemorySegment room(int elements, ValueLayout layout) {
        if (closed) {
            throw new IllegalStateException("the barrier communicator of rank " + rank() + " is closed");
        }
        long bytes = elements * layout.byteSize();
        if (buffer.byteSize() < bytes) {
            if (arena != null) {
                arena.close();
            }
            arena = Arena.ofShared();
            buffer = arena.allocate(bytes, 64);
        }
        return buffer.asSlice(0, bytes);
    }

    /**
     * Leaves the communicator collectively ({@link Communicator#close()}) and frees the staging buffer; the
     * task's completion does this too. Idempotent.
     *
     * @throws IllegalStateException as {@link Communicator#close()}
     */
    @Override
    public void close() {
        release(communicator::close);
    }

    /**
     * Leaves at once, alone ({@link Communicator#abort()}): every other task's running or next operation fails
     * naming this rank. A failed or killed task does this itself. Idempotent.
     *
     * @throws IllegalStateException as {@link Communicator#abort()}
     */
    public void abort() {
        release(communicator::abort);
    }

    private void release(Runnable leave) {
        if (closed) {
            return;
        }
        closed = true;
        try {
            leave.run();
        } finally {
            if (arena != null) {
                arena.close();
            }
            if (store != null) {
                store.close();
            }
        }
    }

    @Override
    public String toString() {
        return "BarrierCommunicator[" + communicator + (closed ? " closed" : "") + "]";
    }
}
