package io.zcnet.examples;

import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.uring.Uring;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.zcnet.examples.CliTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code zcnet bulk} with both ends in this process, on each engine: every operation verified byte for byte,
 * runs bounded by bytes that end on a short message, and no allocation per message on the client's thread.
 */
class BulkRunTest {
    private static final Pattern RESULT = Pattern.compile("^bulk: (.*)$", Pattern.MULTILINE);
    private static final Pattern PROGRESS = Pattern.compile(
            "^progress: seconds=(\\d+\\.\\d{3}) gbit/s=(\\d+\\.\\d{3}) bytes=(\\d+)$", Pattern.MULTILINE);

    /** The {@code key=value} tokens of the one result line in {@code output}. */
    static Map<String, String> result(String output) {
        Matcher m = RESULT.matcher(output);
        assertTrue(m.find(), () -> "no result line in:\n" + output);
        String line = m.group(1);
        assertTrue(!m.find(), () -> "more than one result line in:\n" + output);
        Map<String, String> tokens = new LinkedHashMap<>();
        for (String token : line.split(" ")) {
            String[] kv = token.split("=", 2);
            assertEquals(2, kv.length, () -> "not key=value: '" + token + "' in " + line);
            tokens.put(kv[0], kv[1]);
        }
        return tokens;
    }

    /** Skips with the reason where {@code engine} is io_uring and io_uring cannot run. */
    static void assumeUsable(EventLoopConfig.Choice engine) {
        assumeTrue(engine != EventLoopConfig.Choice.URING || Uring.availability().usable(),
                () -> "io_uring not usable: " + Uring.availability().reason());
    }

    private static String name(EventLoopConfig.Choice engine) {
        return engine.name().toLowerCase(Locale.ROOT);
    }

    @ParameterizedTest(name = "{0} {1} over {2} subflows")
    @CsvSource({"URING, write, 3", "NIO, write, 3", "URING, read, 3", "NIO, read, 3", "URING, send, 3", "NIO, send, 3"})
    void everyOperationArrivesIntact(EventLoopConfig.Choice engine, String op, int subflows) {
        assumeUsable(engine);
        Map<String, String> r = result(run(0, "bulk", "--engine", name(engine), "--op", op, "--verify", "--seconds", "0.3",
                "--message", "256K", "--subflows", String.valueOf(subflows)));
        assertEquals("ok", r.get("verify"), r::toString);
        assertTrue(Long.parseLong(r.get("bytes")) > 0, r::toString);
        assertEquals(op, r.get("op"));
        assertEquals(name(engine), r.get("engine"));
        assertEquals(String.valueOf(subflows), r.get("subflows"));
        assertEquals(String.valueOf(subflows), r.get("live"), r::toString);
        assertEquals(subflows, r.get("shares").split(",").length, r::toString);
        assertTrue(r.get("resent").matches("\\d+/\\d+"), r::toString);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"URING", "NIO"})
    void aRunWithAShortSilenceTimeoutArrivesIntact(EventLoopConfig.Choice engine) {
        assumeUsable(engine);
        // Heartbeats every 50 ms keep idle subflows alive; a busy loop that misses one only costs resends.
        Map<String, String> r = result(run(0, "bulk", "--engine", name(engine), "--op", "read", "--verify", "--seconds",
                "0.5", "--message", "256K", "--subflows", "3", "--silence-ms", "200"));
        assertEquals("ok", r.get("verify"), r::toString);
        assertEquals("3", r.get("subflows"), r::toString);
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"URING, write", "NIO, write", "URING, send", "NIO, send", "URING, read", "NIO, read"})
    void aRunBoundedByBytesMovesExactlyThoseAndEndsOnAShortMessage(EventLoopConfig.Choice engine, String op) {
        assumeUsable(engine);
        Map<String, String> r = result(run(0, "bulk", "--engine", name(engine), "--op", op, "--verify", "--bytes",
                "3000001", "--message", "64K", "--window", "5"));
        assertEquals("3000001", r.get("bytes"), r::toString);
        assertEquals("ok", r.get("verify"), r::toString);
        assertEquals("65536", r.get("message"));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"URING", "NIO"})
    void withAnIntervalTheRunPrintsATimeSeriesOfItsRate(EventLoopConfig.Choice engine) {
        assumeUsable(engine);
        String output = run(0, "bulk", "--engine", name(engine), "--seconds", "0.6", "--interval-ms", "100",
                "--message", "64K", "--subflows", "2");
        Map<String, String> r = result(output);
        Matcher line = PROGRESS.matcher(output);
        double lastSeconds = 0;
        long lastBytes = 0;
        int lines = 0;
        while (line.find()) {
            double seconds = Double.parseDouble(line.group(1));
            long bytes = Long.parseLong(line.group(3));
            assertTrue(seconds > lastSeconds && bytes >= lastBytes, output);
            double expected = (bytes - lastBytes) * 8 / ((seconds - lastSeconds) * 1e9);
            assertEquals(expected, Double.parseDouble(line.group(2)), 0.01 + expected * 0.05, output);
            lastSeconds = seconds;
            lastBytes = bytes;
            lines++;
        }
        assertTrue(lines >= 3 && lines <= 7, () -> "expected about 6 lines, one per 100 ms:\n" + output);
        assertTrue(lastBytes <= Long.parseLong(r.get("bytes")), output);
    }

    /**
     * The data moves on the loop thread; the calling thread waits and prints progress lines, which allocate
     * per line, by the clock, not per message: an interval longer than any run keeps them out of the count
     * (a loaded machine stretches the long run past a second, and its line would be counted), and the
     * warm-up is a long run.
     */
    @Test
    void theClientThreadAllocatesNothingPerMessage() {
        String[] args = {"bulk", "--op", "write", "--message", "4K", "--window", "16", "--engine", "nio",
                "--interval-ms", "3600000", "--bytes", ""};
        long few = 200;
        long many = 20_200;
        for (int i = 0; i < 2; i++) { // warm up: classes, the JIT, and what only a longer run does (the wait's
            allocatedBy(args, few);    // first wake-up links a VarHandle access mode); the first runs after
            allocatedBy(args, many);   // the other tests still allocate 100 KB or so more than later ones
        }
        long base = allocatedBy(args, few);
        long more = allocatedBy(args, many);
        assertTrue(more - base < many - few, () -> (more - base) + " more bytes allocated for " + (many - few)
                + " more messages: not less than one per message");
    }

    /** Bytes this thread allocated running {@code args} with {@code messages} 4 KiB messages. */
    private static long allocatedBy(String[] args, long messages) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        args[args.length - 1] = String.valueOf(messages * 4096);
        long before = threads.getCurrentThreadAllocatedBytes();
        result(run(0, args));
        return threads.getCurrentThreadAllocatedBytes() - before;
    }
}
