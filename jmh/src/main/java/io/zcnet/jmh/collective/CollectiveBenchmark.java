package io.zcnet.jmh.collective;

import io.zcnet.collective.Algorithm;
import io.zcnet.collective.CollectiveException;
import io.zcnet.collective.Communicator;
import io.zcnet.collective.CommunicatorConfig;
import io.zcnet.collective.DataType;
import io.zcnet.collective.ReduceOp;
import io.zcnet.collective.RendezvousServer;
import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Collective operations per call and their allocations. {@code ranks} ranks run as threads of this JVM over
 * loopback; the benchmark thread is rank 0, and the other ranks call the same operation in a loop of their
 * own, so each benchmark call is one whole operation. {@code -prof gc} counts every thread of the JVM (the
 * loop threads and the engines under the queue pairs too); the line {@code rank threads: N B/op} after each
 * iteration counts only the threads that run the collective code (every rank's caller), measured with
 * {@link com.sun.management.ThreadMXBean#getThreadAllocatedBytes(long)}: 0 there means the algorithms, the
 * links and the posting and polling of the queue pairs allocate nothing per operation.
 *
 * <pre>java -jar jmh/target/benchmarks.jar CollectiveBenchmark -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class CollectiveBenchmark {
    @Param({"uring", "nio"})
    public String engine;

    @Param({"4"})
    public int ranks;

    /** What each call runs: allreduce-ring, allreduce-hd, broadcast, allgather, alltoall or barrier. */
    @Param({"allreduce-ring", "allreduce-hd", "broadcast", "allgather", "alltoall", "barrier"})
    public String operation;

    /** Bytes of the operation's buffer at each rank. */
    @Param({"4096", "1048576"})
    public int bytes;

    /** Whether the ranks busy-poll ({@link CommunicatorConfig#busyPoll()}); {@code -p busyPoll=true,false} for both. */
    @Param({"false"})
    public boolean busyPoll;

    private final Arena arena = Arena.ofShared();
    private final List<Thread> others = new ArrayList<>();
    private final com.sun.management.ThreadMXBean threadBean =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    /** The rank threads, by rank: the benchmark thread for rank 0 (set at its first call). */
    private final long[] rankThreads = new long[64];
    private long operations;
    private long allocatedBefore;
    private long operationsBefore;
    private Communicator[] communicators;
    private MemorySegment[] inputs;
    private MemorySegment[] outputs;

    @Setup(Level.Trial)
    public void join() throws Exception {
        CommunicatorConfig config = CommunicatorConfig.defaults().withEngine(EventLoopConfig.parseChoice(engine))
                .withHostStore(false).withTimeouts(Duration.ofMinutes(10), Duration.ofSeconds(60)).withBusyPoll(busyPoll);
        communicators = new Communicator[ranks];
        inputs = new MemorySegment[ranks];
        outputs = new MemorySegment[ranks];
        for (int r = 0; r < ranks; r++) {
            inputs[r] = arena.allocate(bytes, 64);
            outputs[r] = arena.allocate(bytes, 64);
        }
        try (RendezvousServer store = RendezvousServer.start(new InetSocketAddress("127.0.0.1", 0), ranks,
                Duration.ofSeconds(60))) {
            List<CompletableFuture<Communicator>> joining = new ArrayList<>();
            for (int r = 1; r < ranks; r++) {
                int rank = r;
                CompletableFuture<Communicator> joined = new CompletableFuture<>();
                joining.add(joined);
                Thread t = Thread.ofPlatform().name("rank-" + r).unstarted(() -> rank(rank, store.address(), config, joined));
                rankThreads[r] = t.threadId();
                others.add(t);
                t.start();
            }
            // Every rank joins on the thread that calls it (rank 0 on this one, the benchmark's): a busy-polling
            // rank is driven by the thread that joined.
            communicators[0] = Communicator.rendezvous(0, ranks, store.address(), config);
            for (int r = 1; r < ranks; r++) {
                communicators[r] = joining.get(r - 1).get(60, TimeUnit.SECONDS);
            }
        }
    }

    /** Rank {@code rank} on its own thread: joins, calls the operation until rank 0 aborts at the end of the trial, leaves. */
    private void rank(int rank, InetSocketAddress store, CommunicatorConfig config, CompletableFuture<Communicator> joined) {
        Communicator c;
        try {
            c = Communicator.rendezvous(rank, ranks, store, config);
        } catch (Exception | Error e) {
            joined.completeExceptionally(e);
            return;
        }
        joined.complete(c);
        try {
            loop(c, rank);
        } finally {
            c.close();
        }
    }

    /** Ranks 1.. call the operation until rank 0 aborts the communicator at the end of the trial. */
    private void loop(Communicator c, int rank) {
        try {
            while (true) {
                call(c, rank);
            }
        } catch (CollectiveException expected) {
            // rank 0 left: the trial is over
        }
    }

    @Benchmark
    public int operation() throws CollectiveException {
        operations++;
        return call(communicators[0], 0);
    }

    @Setup(Level.Iteration)
    public void countFrom() {
        allocatedBefore = -1; // counted from the first call, made on the benchmark thread of this iteration
    }

    private long rankThreadsAllocated() {
        long sum = 0;
        for (int r = 0; r < ranks; r++) {
            sum += threadBean.getThreadAllocatedBytes(rankThreads[r]);
        }
        return sum;
    }

    @TearDown(Level.Iteration)
    public void report() {
        if (allocatedBefore >= 0 && operations > operationsBefore) {
            System.out.printf("rank threads: %.1f B/op over %d operations%n",
                    (double) (rankThreadsAllocated() - allocatedBefore) / (operations - operationsBefore),
                    operations - operationsBefore);
        }
    }

    private int call(Communicator c, int rank) throws CollectiveException {
        if (rank == 0 && allocatedBefore < 0) {
            rankThreads[0] = Thread.currentThread().threadId();
            allocatedBefore = rankThreadsAllocated();
            operationsBefore = operations;
        }
        MemorySegment in = inputs[rank];
        MemorySegment out = outputs[rank];
        switch (operation) {
            case "allreduce-ring" -> c.allreduce(in, out, bytes / 4, DataType.FLOAT, ReduceOp.SUM, Algorithm.RING);
            case "allreduce-hd" -> c.allreduce(in, out, bytes / 4, DataType.FLOAT, ReduceOp.SUM,
                    Algorithm.HALVING_DOUBLING);
            case "broadcast" -> c.broadcast(out, bytes / 4, DataType.FLOAT, 0);
            case "allgather" -> c.allgather(in, out, bytes / 4 / ranks, DataType.FLOAT);
            case "alltoall" -> c.allToAll(in, out, bytes / 4 / ranks, DataType.FLOAT);
            case "barrier" -> c.barrier();
            default -> throw new IllegalArgumentException("no operation " + operation);
        }
        return rank;
    }

    @TearDown(Level.Trial)
    public void leave() throws Exception {
        communicators[0].abort();
        for (Thread t : others) {
            t.join(Duration.ofSeconds(60));
        }
        arena.close();
    }
}
