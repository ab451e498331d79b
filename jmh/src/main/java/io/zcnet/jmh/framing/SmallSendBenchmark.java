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
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The receive side's framing work for one small SEND, without I/O: a burst of {@value #BURST} 64-byte
 * SENDs, lying back to back as one multishot receive brings them (a 16 KiB buffer holds about 150), each
 * into a receive posted for it, through validation, judging, the copy, in-order completion and the poll
 * of its completion. Score: ns per message (the burst is one invocation of {@value #BURST} operations).
 * The queue-pair engine's own work per message (its rings, the application's poll and repost) comes on
 * top. Expect 0 B/op under -prof gc.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class SmallSendBenchmark {
    static final int BURST = 256;
    private static final int SIZE = 64;
    private static final int WINDOW = 1024;
    private static final int FRAME = FrameHeader.LENGTH + UntaggedExtension.LENGTH + SIZE;

    private Arena arena;
    private MessageAssembler assembler;
    private CompletionQueue completions;
    private final Completion completion = new Completion();
    private final FrameHeader header = new FrameHeader();
    private final UntaggedExtension extension = new UntaggedExtension();
    private int receiveKey;
    /** The burst's frames, back to back; their MSN and RSN fields are rewritten before each burst. */
    private MemorySegment burst;
    private int msn;
    private long rsn;

    @Setup
    public void setUp() {
        arena = Arena.ofShared();
        FramingConfig config = new FramingConfig(64 * 1024, false, WINDOW);
        MemoryRegistry registry = new MemoryRegistry();
        completions = new CompletionQueue(WINDOW);
        assembler = new MessageAssembler(config, registry, WINDOW, completions, new FlowControl(config));
        receiveKey = registry.register(arena.allocate((long) SIZE * BURST), Access.LOCAL_WRITE).localKey();
        MemorySegment payload = arena.allocate(SIZE).fill((byte) 0x5A);
        burst = arena.allocate((long) FRAME * BURST);
        Segmenter segmenter = new Segmenter(config);
        for (int i = 0; i < BURST; i++) {
            segmenter.beginSend(0, 0, payload, 0, SIZE);
            int written = segmenter.writeFrame(0, burst, (long) i * FRAME);
            MemorySegment.copy(payload, 0, burst, (long) i * FRAME + written, SIZE);
        }
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public long receiveBurst() {
        for (int i = 0; i < BURST; i++) {
            assembler.postReceive(rsn + i, receiveKey, (long) i * SIZE, SIZE);
        }
        long result = 0;
        for (int i = 0; i < BURST; i++) {
            long at = (long) i * FRAME;
            header.wrap(burst, at).msn(msn);
            extension.wrap(burst, at + FrameHeader.LENGTH).rsn((int) rsn);
            result += assembler.onFrame(burst, at, FRAME);
            msn = (msn + 1) & 0xFFFF;
            rsn++;
        }
        while (completions.poll(completion)) {
            result += completion.byteCount();
        }
        return result;
    }
}
