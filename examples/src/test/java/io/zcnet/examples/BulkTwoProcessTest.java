package io.zcnet.examples;

import io.zcnet.ring.EventLoopConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.zcnet.examples.BulkRunTest.assumeUsable;
import static io.zcnet.examples.BulkRunTest.result;
import static io.zcnet.examples.CliTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code zcnet bulk --listen} in a child JVM and {@code --connect} in this one: the server says where it
 * listens, serves one run, prints its own summary and exits by itself.
 */
class BulkTwoProcessTest {
    private static final Pattern LISTENING = Pattern.compile("listening on (\\S+):(\\d+)");

    @ParameterizedTest(name = "{0} {1} over {2} subflows")
    @CsvSource({"URING, write, 2", "NIO, read, 2"})
    void aServerProcessServesOneVerifiedRunAndExits(EventLoopConfig.Choice engine, String op, int subflows)
            throws Exception {
        assumeUsable(engine);
        String engineName = engine.name().toLowerCase(Locale.ROOT);
        Process server = new ProcessBuilder(javaRunning("bulk", "--listen", "127.0.0.1:0", "--engine", engineName))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(server.getInputStream(),
                StandardCharsets.UTF_8))) {
            String first = out.readLine();
            assertNotNull(first, "the server printed nothing");
            Matcher at = LISTENING.matcher(first);
            assertTrue(at.find(), first);
            Map<String, String> client = result(run(0, "bulk", "--connect", at.group(1) + ":" + at.group(2),
                    "--engine", engineName, "--op", op, "--verify", "--seconds", "0.3", "--subflows",
                    String.valueOf(subflows)));
            assertTrue(server.waitFor(30, TimeUnit.SECONDS), "the server did not exit after the run");
            assertEquals(0, server.exitValue());
            String summary = out.readLine();
            assertNotNull(summary, "the server printed no summary");
            assertTrue(summary.startsWith("bulk server: op=" + op + " "), summary);
            assertTrue(summary.contains(" bytes=" + client.get("bytes") + " "), summary + " vs " + client);
            assertTrue(summary.contains(" subflows=" + subflows + " "), summary);
            assertEquals("ok", client.get("verify"), client::toString);
            assertEquals(String.valueOf(subflows), client.get("subflows"));
        } finally {
            server.destroyForcibly();
        }
    }

    private static List<String> javaRunning(String... args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ZcnetCli.class.getName());
        cmd.addAll(List.of(args));
        return cmd;
    }
}
