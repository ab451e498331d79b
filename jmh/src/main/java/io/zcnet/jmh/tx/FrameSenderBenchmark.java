package io.zcnet.jmh.tx;

import io.zcnet.jmh.LoopbackConnect;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import io.zcnet.tx.FrameSender;
import io.zcnet.tx.SendListener;
import io.zcnet.tx.SenderConfig;

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

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;

/**
 * The send path's cost per frame and its allocations ({@code -prof gc}): a burst of small frames offered
 * to a {@link FrameSender} in one loop turn, flushed as one coalesced send over loopback, polled until the
 * sender reports them all sent. A thread on the other end reads and discards.
 *
 * <pre>java -jar jmh/target/benchmarks.jar FrameSenderBenchmark -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FrameSenderBenchmark {

    @Param({"uring", "nio"})
    String engine;

    @Param({"16"})
    int burst;

    @Param({"64", "65536"})
    int payloadBytes;

    private final Arena arena = Arena.ofShared();
    private EventLoop loop;
    private ServerSocket listener;
    private Socket peer;
    private Thread drain;
    private FrameSender sender;
    private MemorySegment header;
    private MemorySegment payload;
    private long lastSent = -1;

    @Setup(Level.Trial)
    public void open() throws Exception {
        loop = EventLoops.open(EventLoopConfig.defaults().withEngine(EventLoopConfig.parseChoice(engine)));
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), listener.getLocalPort());
        Socket[] accepted = new Socket[1];
        int socket = LoopbackConnect.connect(loop, address, listener::accept, accepted);
        peer = accepted[0];
        loop.setTcpNoDelay(socket, true);
        drain = Thread.ofPlatform().daemon().start(this::discard);
        header = arena.allocate(32);
        payload = arena.allocate(payloadBytes);
        sender = new FrameSender(loop, socket, SenderConfig.defaults(), new SendListener() {
            @Override
            public void onSent(long token) {
                lastSent = token;
            }

            @Override
            public void onWritable() {
            }

            @Override
            public void onFailed(int errno) {
                throw new IllegalStateException("send failed: errno " + errno);
            }
        });
    }

    private void discard() {
        byte[] sink = new byte[256 * 1024];
        try (InputStream in = peer.getInputStream()) {
            while (in.read(sink) >= 0) {
                // discard
            }
        } catch (IOException closed) {
            // the trial ended
        }
    }

    @Benchmark
    public long burst() {
        long token = -1;
        for (int i = 0; i < burst; i++) {
            token = sender.offer(header, 0, 32, payload, 0, payloadBytes);
        }
        sender.flush();
        while (lastSent < token) {
            loop.poll(0);
        }
        return token;
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        sender.close();
        loop.close();
        peer.close();
        listener.close();
        drain.join(5_000);
        arena.close();
    }
}
