package io.zcnet.jmh;

import io.zcnet.buffer.Buffer;
import io.zcnet.buffer.BufferPool;
import io.zcnet.buffer.PoolConfig;
import io.zcnet.buffer.SizeClass;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Lease and release of a 4 KiB buffer on the pool's owner thread, one at a time and 32 at a time (the
 * shape of a receive burst). Results are returned as ints, so under {@code -prof gc} any allocation per
 * operation is the pool's own.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class BufferPoolBenchmark {
    private static final int SIZE = 4096;
    private static final int BATCH = 32;

    private BufferPool pool;
    private final Buffer[] held = new Buffer[BATCH];

    @Setup(Level.Trial)
    public void open() {
        pool = BufferPool.create(PoolConfig.of(new SizeClass(SIZE, 1024)));
        pool.bindOwner();
    }

    @TearDown(Level.Trial)
    public void close() {
        System.out.println("\n[pool] " + pool.stats());
        pool.close();
    }

    @Benchmark
    public int leaseRelease() {
        Buffer buffer = lease();
        int id = buffer.id();
        buffer.release();
        return id;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int leaseReleaseBatch32() {
        Buffer[] buffers = held;
        for (int i = 0; i < BATCH; i++) {
            buffers[i] = lease();
        }
        int sum = 0;
        for (int i = 0; i < BATCH; i++) {
            sum += buffers[i].id();
            buffers[i].release();
            buffers[i] = null;
        }
        return sum;
    }

    private Buffer lease() {
        Buffer buffer = pool.lease(SIZE);
        if (buffer == null) {
            throw new IllegalStateException("pool exhausted with at most " + BATCH + " buffers leased: " + pool.stats());
        }
        return buffer;
    }
}
