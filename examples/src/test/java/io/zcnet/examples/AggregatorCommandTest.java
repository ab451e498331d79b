package io.zcnet.examples;

import static io.zcnet.examples.CliTest.run;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code zcnet aggregator} as a process of its own: it says where it listens, local ranks of {@code zcnet allreduce
 * --aggregator} reduce through it (its report lines count their chunks), it ends on SIGTERM, and bad options are
 * refused before it listens.
 */
class AggregatorCommandTest {
    private static final Pattern LISTENING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+) \\(engine (\\w+)\\)");
    private static final Pattern REPORT = Pattern.compile("zcnet aggregator: \\d+ job\\(s\\), \\d+ connection\\(s\\), (\\d+) chunks");

    @Test
    void anAggregatorProcessServesLocalRanksAndEndsOnSigterm() throws Exception {
        List<String> command = new ArrayList<>(RankProcesses.javaCommand());
        command.addAll(List.of("aggregator", "--listen", "127.0.0.1:0", "--report", "1"));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (java.io.IOException ignored) {
                // the process ended
            }
        });
        try {
            String first = lines.poll(30, TimeUnit.SECONDS);
            assertNotNull(first, "the aggregator said nothing");
            Matcher m = LISTENING.matcher(first);
            assertTrue(m.find() && first.endsWith("open to jobs without a secret"), first);
            String at = "127.0.0.1:" + m.group(1);
            String output = run(0, "allreduce", "--ranks", "2", "--aggregator", at, "--min-bytes", "256K",
                    "--max-bytes", "512K", "--budget", "0.02", "--warmup", "0.01");
            assertTrue(output.contains("all checks ok"), output);
            long chunks = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // A report a second; one written during the run counts only the chunks up to then.
            while (chunks < 3 && System.nanoTime() < deadline) {
                String line = lines.poll(2, TimeUnit.SECONDS);
                Matcher r = line == null ? null : REPORT.matcher(line);
                if (r != null && r.find()) {
                    chunks = Math.max(chunks, Long.parseLong(r.group(1)));
                }
            }
            assertTrue(chunks >= 3, "the report counts the ranks' chunks: " + chunks);
            p.destroy(); // SIGTERM: the shutdown hook closes every job's queue pairs
            assertTrue(p.waitFor(10, TimeUnit.SECONDS), "the aggregator still runs 10 s after SIGTERM");
        } finally {
            p.destroyForcibly();
        }
    }

    @Test
    void badOptionsAreRefusedBeforeItListens() {
        assertTrue(run(1, "aggregator", "--listen", "127.0.0.1:0", "--job", "9:zz").contains("the secret is not hex"));
        assertTrue(run(1, "aggregator", "--listen", "127.0.0.1:0", "--job", "9").contains("--job needs ID:SECRET"));
        assertTrue(run(1, "aggregator", "--listen", "127.0.0.1:0", "--job", "9:0011").contains("16..64 bytes"));
        assertTrue(run(1, "aggregator", "--listen", "127.0.0.1:0", "--types", "quux").contains("--types: unknown 'quux'"));
        assertTrue(run(1, "aggregator", "--listen", "127.0.0.1:0", "--chunk", "100").contains("multiple of 64"));
        assertTrue(run(2, "aggregator").contains("--listen"), "--listen is required");
    }
}
