package io.zcnet.jmh.framing;

import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FrameValidator;
import io.zcnet.framing.Opcode;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/** Encoding and decoding (full validation) of one 32-byte frame header, ns/op; expect 0 B/op under -prof gc. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class HeaderCodecBenchmark {

    private static final int SEGMENT_SIZE = 64 * 1024;
    private Arena arena;
    private final FrameHeader header = new FrameHeader();
    private int msn;

    @Setup
    public void setUp() {
        arena = Arena.ofConfined();
        header.wrap(arena.allocate(FrameHeader.LENGTH), 0);
        encode();
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public FrameHeader encode() {
        msn = (msn + 1) & 0xFFFF;
        return header.flags(FrameHeader.VERSION << 6 | FrameHeader.FLAG_MORE_SEGMENTS)
                .opcode(Opcode.SEND_MIDDLE)
                .msn(msn)
                .messageOffsetAndSegment(3 * SEGMENT_SIZE, 3)
                .icrc(0)
                .timestamp(0)
                .timestampEcho(0)
                .immData(0)
                .length(SEGMENT_SIZE)
                .extLength(0)
                .subflow(1);
    }

    @Benchmark
    public int decode() {
        int error = FrameValidator.validateHeader(header, SEGMENT_SIZE);
        return error + header.msn() + header.messageOffset() + (int) header.length() + header.subflow();
    }
}
