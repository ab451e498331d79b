package io.zcnet.jmh;

import io.zcnet.ring.CompletionHandler;
import io.zcnet.ring.Errno;
import io.zcnet.ring.EventLoop;
import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.EventLoops;
import io.zcnet.ring.Op;
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

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The cost of the submission/completion machinery alone: {@code batch} NOPs are prepared, then the loop
 * is polled until every one of them has been dispatched to its handler. The score is nanoseconds per NOP,
 * so batch 1 shows the fixed cost of one {@code io_uring_enter} (or one selector turn) and batch 256 how
 * far batching amortises it.
 *
 * <p>The loop lives on the benchmark thread (its owner) and the handler only counts, so under
 * {@code -prof gc} any allocation per operation is the engine's own.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class NopRoundTripBenchmark {
    /** Polls that may pass without the batch completing before the run is declared stuck. */
    private static final int MAX_POLLS = 10_000;
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    @Param({"uring", "nio"})
    public String engine;

    private EventLoop loop;
    private final Counter counter = new Counter();
    private int handler;

    /** Counts NOP completions; anything else is an engine error that fails the run at iteration end. */
    private static final class Counter implements CompletionHandler {
        long completed;
        long unexpected;
        int lastBadOp;
        int lastBadResult;

        @Override
        public void onCompletion(int op, int tag, int result, int flags) {
            if (op == Op.NOP && result == 0) {
                completed++;
            } else {
                unexpected++;
                lastBadOp = op;
                lastBadResult = result;
            }
        }
    }

    @Setup(Level.Trial)
    public void open() throws IOException {
        // 256 SQ entries hold the largest batch; the CQ is 4x so it never overflows here.
        EventLoopConfig config = EventLoopConfig.defaults()
                .withEngine(EventLoopConfig.parseChoice(engine))
                .withEntries(256, 1024);
        loop = EventLoops.open(config);
        handler = loop.registerHandler(counter);
        roundTrip(1); // makes this thread the owner before measuring
    }

    @TearDown(Level.Iteration)
    public void check() {
        if (counter.unexpected != 0) {
            throw new IllegalStateException(counter.unexpected + " unexpected completions on " + loop.engine()
                    + ", last: op " + Op.name(counter.lastBadOp) + " result " + counter.lastBadResult
                    + (counter.lastBadResult < 0 ? " (" + Errno.name(counter.lastBadResult) + ")" : ""));
        }
    }

    @TearDown(Level.Trial)
    public void close() {
        System.out.println("\n[nop " + loop.engine() + "] " + loop.counters());
        loop.close();
    }

    @Benchmark
    @OperationsPerInvocation(1)
    public long batch1() {
        return roundTrip(1);
    }

    @Benchmark
    @OperationsPerInvocation(32)
    public long batch32() {
        return roundTrip(32);
    }

    @Benchmark
    @OperationsPerInvocation(256)
    public long batch256() {
        return roundTrip(256);
    }

    private long roundTrip(int batch) {
        Counter c = counter;
        long target = c.completed + batch;
        for (int i = 0; i < batch; i++) {
            loop.nop(handler, i);
        }
        int polls = 0;
        while (c.completed < target) {
            loop.poll(POLL_NANOS);
            if (++polls > MAX_POLLS) {
                throw stuck(batch, target - c.completed);
            }
        }
        return c.completed;
    }

    private IllegalStateException stuck(int batch, long missing) {
        return new IllegalStateException(missing + " of " + batch + " NOPs did not complete after " + MAX_POLLS
                + " polls on " + loop.engine() + " (pending=" + loop.pending() + ", " + loop.counters() + ")");
    }
}
