package io.zcnet.jmh.framing;

import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.Segmenter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * Segmenting a 1 MiB SEND into 64 KiB frames (headers written, payload described, not copied), with and
 * without the ICRC, which reads every payload byte. Report GB/s as 1 MiB / (time per op); expect 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SegmentationBenchmark {

    private static final int MESSAGE = 1 << 20;

    @Param({"false", "true"})
    public boolean icrc;

    private Arena arena;
    private MemorySegment source;
    private MemorySegment headers;
    private Segmenter segmenter;

    @Setup
    public void setUp() {
        arena = Arena.ofConfined();
        source = arena.allocate(MESSAGE);
        headers = arena.allocate(64 * 64);
        segmenter = new Segmenter(new FramingConfig(64 * 1024, icrc, 64));
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public long segmentOneMiB() {
        segmenter.beginSend(1, 0, source, 0, MESSAGE);
        long described = 0;
        long at = 0;
        while (segmenter.hasNext()) {
            at += segmenter.next(headers, at);
            described += segmenter.payloadLength();
        }
        return described;
    }
}
