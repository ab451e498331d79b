package io.zcnet.jmh.echo;

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

import java.util.concurrent.TimeUnit;

/**
 * Echo over loopback, one connection, every transport in the same run: each has its own echo server on
 * one thread and its own client on the benchmark thread.
 *
 * <ul>
 *   <li>{@link #pingPong}: one 64-byte message, sent and echoed back, per invocation (latency; read
 *       the p50 of the sample-time result).</li>
 *   <li>{@link #pipelined}: 64-byte messages with {@code window} always in flight; score in
 *       messages/s. The zcnet rows carry system calls per message as secondary results.</li>
 *   <li>{@link #bulk}: 1 MiB written and echoed back per invocation; the score in ops/s is MiB/s.</li>
 * </ul>
 *
 * <p>The fork flags after {@code --enable-native-access} are for the Netty peer only (zcnet needs
 * none of them): they let Netty use its Unsafe-based and direct-buffer fast paths on JDK 25 and
 * switch off its leak detector, as its users do for speed.
 */
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 3)
@Fork(value = 1, jvmArgsAppend = {
    "--enable-native-access=ALL-UNNAMED",
    "--sun-misc-unsafe-memory-access=allow",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.leakDetection.level=disabled"
})
public class EchoBenchmark {
    /** Echoes awaited per pipelined invocation; the window stays full across invocations. */
    static final int PIPELINE_BATCH = 64;
    static final int BULK_BYTES = 1024 * 1024;

    /** The transport column of every echo benchmark. */
    @State(Scope.Thread)
    public abstract static class Echo {
        @Param({"zcnet-uring", "zcnet-nio", "netty-io_uring", "netty-epoll", "netty-nio"})
        public String transport;

        EchoPair pair;

        abstract int size();

        abstract int window();

        @Setup(Level.Trial)
        public void open() throws Exception {
            pair = EchoPair.open(transport, size(), window());
        }

        @TearDown(Level.Iteration)
        public void check() {
            pair.client.check();
        }

        @TearDown(Level.Trial)
        public void close() {
            if (pair != null) {
                System.out.println("\n[" + getClass().getSimpleName() + "] " + pair.finish());
            }
        }
    }

    /** One 64-byte message in flight. */
    @State(Scope.Thread)
    public static class PingPong extends Echo {
        @Override
        int size() {
            return 64;
        }

        @Override
        int window() {
            return 1;
        }
    }

    /** 64-byte messages, {@code window} in flight. */
    @State(Scope.Thread)
    public static class Pipelined extends Echo {
        @Param({"64"})
        public int window;

        private long clientBase;
        private long serverBase;
        private long messageBase;

        @Override
        int size() {
            return 64;
        }

        @Override
        int window() {
            return window;
        }

        @Setup(Level.Iteration)
        public void mark() {
            clientBase = pair.clientSyscalls();
            serverBase = pair.serverSyscalls();
            messageBase = pair.client.messagesEchoed();
        }

        void count(SyscallCounters counters) {
            counters.messages = pair.client.messagesEchoed() - messageBase;
            long client = pair.clientSyscalls();
            if (client >= 0) {
                counters.clientSyscalls = client - clientBase;
                counters.serverSyscalls = pair.serverSyscalls() - serverBase;
            }
        }
    }

    /** One 1 MiB message in flight. */
    @State(Scope.Thread)
    public static class Bulk extends Echo {
        @Override
        int size() {
            return BULK_BYTES;
        }

        @Override
        int window() {
            return 1;
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public long pingPong(PingPong state) {
        state.pair.client.exchange(1, false);
        return state.pair.client.messagesEchoed();
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(PIPELINE_BATCH)
    public long pipelined(Pipelined state, SyscallCounters counters) {
        state.pair.client.exchange(PIPELINE_BATCH, true);
        state.count(counters);
        return state.pair.client.messagesEchoed();
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public long bulk(Bulk state) {
        state.pair.client.exchange(1, false);
        return state.pair.client.messagesEchoed();
    }
}
