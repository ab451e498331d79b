package io.zcnet.jmh.rx;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.MemoryRegion;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import io.zcnet.framing.Completion;
import io.zcnet.framing.CompletionQueue;
import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.Msn;
import io.zcnet.framing.Segmenter;
import io.zcnet.jmh.LoopbackConnect;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import io.zcnet.rx.DeferredFrames;
import io.zcnet.rx.FrameReceiver;
import io.zcnet.rx.ReceiveListener;
import io.zcnet.rx.ReceiverConfig;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.AuxCounters;
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
 * The receive path's cost per message and its allocations ({@code -prof gc}): a feeder thread streams SEND
 * frames over loopback (whole frames batched into one write, allocation-free), and the benchmark
 * thread, which owns the event loop, polls it: each turn places what arrived into posted receives and
 * completes it, and each completion posts its receive again. 64-byte payloads take the buffer ring
 * (frames cut from pool buffers), 64 KiB payloads direct placement. Both threads are counted by the GC
 * profiler, so 0 B/op means neither side allocates per message.
 *
 * <pre>java -jar jmh/target/benchmarks.jar FrameReceiverBenchmark -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FrameReceiverBenchmark {
    private static final int RECEIVES = 256;

    @Param({"uring", "nio"})
    String engine;

    @Param({"64", "65536"})
    int payloadBytes;

    private final Arena arena = Arena.ofShared();
    private final MemoryRegistry registry = new MemoryRegistry();
    private EventLoop loop;
    private BufferPool pool;
    private ServerSocketChannel listener;
    private SocketChannel peer;
    private Thread feeder;
    private volatile boolean feeding = true;
    private FrameReceiver receiver;
    private MessageAssembler assembler;
    private CompletionQueue completions;
    private DeferredFrames deferred;
    private MemoryRegion receives;
    private long completed;
    private String failure;

    @Setup(Level.Trial)
    public void open() throws Exception {
        FramingConfig framing = new FramingConfig(64 * 1024, false, 1024);
        loop = EventLoops.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.parseChoice(engine)));
        pool = BufferPool.create(PoolConfig.of(new SizeClass(16 * 1024, 64)));
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        InetSocketAddress address = (InetSocketAddress) listener.getLocalAddress();
        SocketChannel[] accepted = new SocketChannel[1];
        int socket = LoopbackConnect.connect(loop, address, listener::accept, accepted);
        peer = accepted[0];

        completions = new CompletionQueue(RECEIVES * 2);
        assembler = new MessageAssembler(framing, registry, RECEIVES, completions, new FlowControl(framing));
        receives = registry.register(arena.allocate((long) RECEIVES * payloadBytes, 4096), Access.LOCAL_WRITE);
        for (int i = 0; i < RECEIVES; i++) {
            assembler.postReceive(i, receives.localKey(), (long) i * payloadBytes, payloadBytes);
        }
        deferred = new DeferredFrames(assembler, 4, framing.segmentSize());
        Completion completion = new Completion();
        receiver = new FrameReceiver(loop, socket, loop.createBufferRing(1, pool, 64, 16 * 1024), assembler, deferred,
                framing, ReceiverConfig.defaults(), new ReceiveListener() {
                    @Override
                    public void onReceived() {
                        while (completions.poll(completion)) {
                            completed++;
                            long slot = completion.workRequestId();
                            assembler.postReceive(slot, receives.localKey(), slot * payloadBytes, payloadBytes);
                        }
                        assembler.resumeCompletions();
                    }

                    @Override
                    public void onClosed() {
                        failure = "closed";
                    }

                    @Override
                    public void onFailed(int frameError, int errno, String reason) {
                        failure = reason;
                    }
                });
        feeder = Thread.ofPlatform().daemon().name("feeder").start(() -> feed(framing));
    }

    /** Streams SEND messages without end, as many whole frames per write as fit, nothing allocated per message. */
    private void feed(FramingConfig framing) {
        Segmenter segmenter = new Segmenter(framing);
        MemorySegment payload = Arena.ofAuto().allocate(payloadBytes, 64);
        ByteBuffer batch = ByteBuffer.allocateDirect(256 * 1024);
        MemorySegment batchSegment = MemorySegment.ofBuffer(batch);
        int msn = 0;
        int rsn = 0; // every message is a SEND: message n consumes receive n
        try {
            peer.setOption(StandardSocketOptions.TCP_NODELAY, true);
            while (feeding) {
                int filled = 0;
                while (filled + 64 + payloadBytes <= batch.capacity()) {
                    segmenter.beginSend(msn, rsn++, payload, 0, payloadBytes);
                    filled += segmenter.writeFrame(0, batchSegment, filled);
                    MemorySegment.copy(payload, 0, batchSegment, filled, payloadBytes);
                    filled += payloadBytes;
                    msn = Msn.add(msn, 1);
                }
                batch.clear().limit(filled);
                while (batch.hasRemaining()) {
                    peer.write(batch);
                }
            }
        } catch (IOException closed) {
            // the trial ended
        }
    }

    /** Messages completed, reported by JMH as a rate beside the polls. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Messages {
        public long messages;
    }

    /**
     * One turn of the loop: everything that arrived is cut, placed and completed, however many messages that
     * is. The {@code messages} rate is the figure; {@code gc.alloc.rate.norm} is per turn, and a turn handles
     * hundreds of messages, so 0 B per turn is 0 B per message.
     */
    @Benchmark
    public int poll(Messages counted) {
        if (failure != null) {
            throw new IllegalStateException("receiver failed: " + failure);
        }
        long before = completed;
        int handled = loop.poll(-1);
        counted.messages += completed - before;
        return handled;
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        System.out.println("\n" + receiver.counters());
        feeding = false;
        receiver.close();
        loop.close();
        peer.close();
        listener.close();
        feeder.join(5_000);
        deferred.close();
        pool.close();
        arena.close();
    }
}
