package io.zcnet.jmh.framing;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.framing.Completion;
import io.zcnet.framing.CompletionQueue;
import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.Segmenter;
import io.zcnet.framing.UntaggedExtension;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
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
 * Placement of a 1 MiB SEND arriving as sixteen 64 KiB segments, in order or in a fixed random order,
 * into a posted receive, through validation, window and receive lookup, copy and in-order completion.
 * One op = one message = 1 MiB: GB/s = 1.048576e6 / (ns per op). Expect 0 B/op under -prof gc.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class PlacementBenchmark {

    private static final int SEGMENT = 64 * 1024;
    private static final int SEGMENTS = 16;
    private static final int MSNS = 1 << 16;
    /** A SEND frame's header and extension (its RSN). */
    private static final int HEADER = FrameHeader.LENGTH + UntaggedExtension.LENGTH;

    @Param({"inOrder", "random"})
    public String order;

    private Arena arena;
    private MessageAssembler assembler;
    private CompletionQueue completions;
    private final Completion completion = new Completion();
    private int receiveKey;
    // frames[msn-slot][segment]: header + payload, contiguous, rewritten per MSN only in setup.
    private MemorySegment frames;
    private final int[] arrival = new int[SEGMENTS];
    private int msn;
    /** Receives posted so far: the RSN of the next op's SEND. */
    private int rsn;
    private FrameHeader header;
    private final UntaggedExtension extension = new UntaggedExtension();

    @Setup
    public void setUp() {
        arena = Arena.ofShared(); // registered memory must be reachable from every thread
        FramingConfig config = new FramingConfig(SEGMENT, false, 64);
        completions = new CompletionQueue(64);
        MemoryRegistry registry = new MemoryRegistry();
        assembler = new MessageAssembler(config, registry, 64, completions, new FlowControl(config));
        receiveKey = registry.register(arena.allocate(SEGMENT * SEGMENTS), Access.LOCAL_WRITE).localKey();
        MemorySegment source = arena.allocate(SEGMENT * SEGMENTS);
        for (long i = 0; i < source.byteSize(); i++) {
            source.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        int stride = HEADER + SEGMENT;
        frames = arena.allocate((long) stride * SEGMENTS);
        Segmenter segmenter = new Segmenter(config);
        segmenter.beginSend(0, 0, source, 0, SEGMENT * SEGMENTS);
        for (int s = 0; s < SEGMENTS; s++) {
            segmenter.writeFrame(s, frames, (long) s * stride);
            MemorySegment.copy(source, segmenter.payloadOffset(), frames, (long) s * stride + HEADER, SEGMENT);
            arrival[s] = s;
        }
        if (order.equals("random")) {
            Random random = new Random(42);
            for (int i = SEGMENTS - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = arrival[i];
                arrival[i] = arrival[j];
                arrival[j] = t;
            }
        }
        header = new FrameHeader();
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public int placeOneMiB() {
        assembler.postReceive(msn, receiveKey, 0, SEGMENT * SEGMENTS);
        int stride = HEADER + SEGMENT;
        int result = 0;
        for (int i = 0; i < SEGMENTS; i++) {
            long at = (long) arrival[i] * stride;
            // Each op is the next MSN and the next receive; the ICRC covers both, so this benchmark runs with
            // the ICRC off (its cost, one CRC32C pass over the payload, is what SegmentationBenchmark's
            // icrc=true adds).
            header.wrap(frames, at).msn(msn);
            extension.wrap(frames, at + FrameHeader.LENGTH).rsn(rsn);
            result += assembler.onFrame(frames, at, stride);
        }
        completions.poll(completion);
        msn = (msn + 1) & (MSNS - 1);
        rsn++;
        return result + completion.byteCount();
    }
}
