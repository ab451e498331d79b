package io.zcnet.jmh.qp;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.qp.ListenerConfig;
import io.zcnet.qp.QpConfig;
import io.zcnet.qp.QpContext;
import io.zcnet.qp.QpListener;
import io.zcnet.qp.QueuePair;
import io.zcnet.qp.SharedCompletionQueue;
import io.zcnet.qp.SharedQueues;
import io.zcnet.qp.SharedReceiveQueue;
import io.zcnet.qp.WorkCompletion;
import io.zcnet.qp.WorkRequest;
import io.zcnet.ring.EventLoopConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The queue pair's data path per message and its allocations ({@code -prof gc}, which counts every thread
 * of the JVM, so both loop threads too): the benchmark thread posts a batch of SENDs (or RDMA WRITEs) on
 * one queue pair, only the last signaled, and waits for that completion; the server's loop thread takes
 * each message in a posted receive and posts it again from its completion listener. 0 B/op means neither
 * end allocates per message: not the rings, not the ledger, not the frames, not the completions.
 * {@code inlineSendBatch} sends its bytes as inline data from a heap array ({@link WorkRequest#inline}),
 * {@code size} of them up to {@link QpConfig#MAX_INLINE_DATA}, the most inline data can hold. With
 * {@code queues=shared} both ends complete into a {@link SharedCompletionQueue} and the server takes its receives
 * from a {@link SharedReceiveQueue}, the way a server of many clients runs: their data path must not allocate either.
 *
 * <pre>java -jar jmh/target/benchmarks.jar QueuePairBenchmark -prof gc</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class QueuePairBenchmark {
    private static final int BATCH = 64;
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @Param({"uring", "nio"})
    public String engine;

    @Param({"64", "65536"})
    public int size;

    @Param({"own", "shared"})
    public String queues;

    private final Arena arena = Arena.ofShared();
    private final WorkRequest request = new WorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    private final WorkCompletion serverCompletion = new WorkCompletion();
    private QpContext serverContext;
    private QpContext clientContext;
    private QueuePair client;
    private QueuePair server;
    private SharedCompletionQueue clientCq;
    private SharedCompletionQueue serverCq;
    private SharedReceiveQueue serverSrq;
    private MemoryRegion clientRegion;
    private MemoryRegion serverRegion;
    private MemorySegment heapBytes;
    private long next;

    @Setup(Level.Trial)
    public void connect() throws Exception {
        int inline = Math.min(size, QpConfig.MAX_INLINE_DATA);
        QpConfig config = QpConfig.defaults().withIcrc(false).withMessageWindow(256).withQueueDepths(256, 256)
                .withMaxInlineData(inline);
        heapBytes = MemorySegment.ofArray(new byte[inline]);
        serverContext = QpContext.open(EventLoopConfig.parseChoice(engine));
        clientContext = QpContext.open(EventLoopConfig.parseChoice(engine));
        boolean shared = queues.equals("shared");
        SharedQueues serverQueues = SharedQueues.NONE;
        SharedQueues clientQueues = SharedQueues.NONE;
        if (shared) {
            serverCq = serverContext.createCompletionQueue(1024);
            serverSrq = serverContext.createSharedReceiveQueue(2 * BATCH, 1, 2 * BATCH);
            clientCq = clientContext.createCompletionQueue(1024);
            serverQueues = new SharedQueues(serverCq, serverSrq);
            clientQueues = new SharedQueues(clientCq, null);
        }
        QpListener listener = serverContext.listen(new InetSocketAddress("127.0.0.1", 0),
                ListenerConfig.of(config).withSharedQueues(serverQueues));
        client = clientContext.connect(listener.address(), config, clientQueues);
        server = listener.accept(Duration.ofSeconds(10));
        clientRegion = clientContext.register(arena.allocate(size, 4096), Access.ALL);
        serverRegion = serverContext.register(arena.allocate((long) size * 2 * BATCH, 4096), Access.ALL);
        for (int i = 0; i < 2 * BATCH; i++) {
            postReceive(i);
        }
        if (shared) {
            serverCq.onCompletions(this::serverTurn);
        } else {
            server.onCompletions(this::serverTurn);
        }
    }

    private void postReceive(long slot) {
        if (serverSrq != null) {
            serverSrq.postReceive(slot, serverRegion.localKey(), slot * size, size);
        } else {
            server.postReceive(slot, serverRegion.localKey(), slot * size, size);
        }
    }

    /** Server loop thread: every message received is taken and its receive posted again. */
    private void serverTurn() {
        while (serverCq != null ? serverCq.poll(serverCompletion) : server.poll(serverCompletion)) {
            if (!serverCompletion.isSuccess()) {
                throw new IllegalStateException("receive failed: " + serverCompletion);
            }
            postReceive(serverCompletion.workRequestId());
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long sendBatch() {
        return batch(Kind.SEND);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long writeBatch() {
        return batch(Kind.WRITE);
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long inlineSendBatch() {
        return batch(Kind.INLINE_SEND);
    }

    private enum Kind { SEND, INLINE_SEND, WRITE }

    private long batch(Kind kind) {
        for (int i = 1; i <= BATCH; i++) {
            long id = ++next;
            switch (kind) {
                case SEND -> request.send(id, clientRegion.localKey(), 0, size);
                case INLINE_SEND -> request.send(id).inline(heapBytes, 0, (int) heapBytes.byteSize());
                case WRITE -> request.write(id, clientRegion.localKey(), 0, size, serverRegion.remoteKey(), 0);
            }
            if (!client.postSend(i == BATCH ? request : request.unsignaled())) {
                throw new IllegalStateException("send queue full: " + client);
            }
        }
        // Parks between polls: on a 2-core machine a spinning benchmark thread would take a core from the loops.
        boolean completed = clientCq != null ? clientCq.await(completion, TIMEOUT) : client.await(completion, TIMEOUT);
        if (!completed) {
            throw new IllegalStateException("no completion in 10 s: " + client);
        }
        if (!completion.isSuccess() || completion.workRequestId() != next) {
            throw new IllegalStateException("unexpected completion " + completion + " (expected wr " + next + ")");
        }
        return completion.workRequestId();
    }

    @TearDown(Level.Trial)
    public void close() {
        clientContext.close();
        serverContext.close();
        arena.close();
    }
}
