package io.zcnet.jmh.framing;

import io.zcnet.buffer.Access;
import io.zcnet.buffer.MemoryRegistry;
import io.zcnet.framing.Completion;
import io.zcnet.framing.CompletionQueue;
import io.zcnet.framing.FlowControl;
import io.zcnet.framing.FrameHeader;
import io.zcnet.framing.FramingConfig;
import io.zcnet.framing.MessageAssembler;
import io.zcnet.framing.PlacementTarget;
import io.zcnet.framing.Segmenter;
import io.zcnet.framing.UntaggedExtension;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
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
 * Direct placement (header first) of a 1 MiB SEND arriving as sixteen 64 KiB segments, in order or in a
 * fixed random order: per segment {@code beginPlacement} on the 36-byte header and RSN, then {@code commit},
 * and in-order completion. With {@code payload=none} nothing writes the payload (the kernel's
 * {@code recv} would): the op is the bookkeeping alone. With {@code payload=copy} a
 * {@code MemorySegment.copy} into the target stands in for that kernel copy, so the figure compares with
 * {@link PlacementBenchmark}. One op = one message = 1 MiB: GB/s = 1.048576e6 / (ns per op). ICRC off:
 * its cost is one CRC32C pass over the payload (see SegmentationBenchmark). Expect 0 B/op under -prof gc.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class DirectPlacementBenchmark {

    private static final int SEGMENT = 64 * 1024;
    private static final int SEGMENTS = 16;
    private static final int MSNS = 1 << 16;
    /** A SEND frame's header and extension (its RSN). */
    private static final int HEADER = FrameHeader.LENGTH + UntaggedExtension.LENGTH;

    @Param({"inOrder", "random"})
    public String order;

    @Param({"none", "copy"})
    public String payload;

    private Arena arena;
    private MessageAssembler assembler;
    private CompletionQueue completions;
    private final Completion completion = new Completion();
    private int receiveKey;
    private MemorySegment source;
    // headers[segment]: the header and extension of each segment, MSN and RSN rewritten per op.
    private MemorySegment headers;
    private final int[] arrival = new int[SEGMENTS];
    private PlacementTarget target;
    private boolean copy;
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
        source = arena.allocate(SEGMENT * SEGMENTS);
        for (long i = 0; i < source.byteSize(); i++) {
            source.set(ValueLayout.JAVA_BYTE, i, (byte) i);
        }
        headers = arena.allocate((long) HEADER * SEGMENTS);
        Segmenter segmenter = new Segmenter(config);
        segmenter.beginSend(0, 0, source, 0, SEGMENT * SEGMENTS);
        for (int s = 0; s < SEGMENTS; s++) {
            segmenter.writeFrame(s, headers, (long) s * HEADER);
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
        target = new PlacementTarget(arena.allocate(SEGMENT));
        copy = payload.equals("copy");
        header = new FrameHeader();
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public int placeOneMiB() {
        assembler.postReceive(msn, receiveKey, 0, SEGMENT * SEGMENTS);
        int result = 0;
        for (int i = 0; i < SEGMENTS; i++) {
            int s = arrival[i];
            long at = (long) s * HEADER;
            header.wrap(headers, at).msn(msn);
            extension.wrap(headers, at + FrameHeader.LENGTH).rsn(rsn);
            result += assembler.beginPlacement(headers, at, HEADER, target);
            if (copy) {
                MemorySegment.copy(source, (long) s * SEGMENT, target.segment(), target.offset(), target.length());
            }
            result += assembler.commit(target);
        }
        completions.poll(completion);
        msn = (msn + 1) & (MSNS - 1);
        rsn++;
        return result + completion.byteCount();
    }
}
