package io.zcnet.examples;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What the tests of the Wireshark dissector need from the machine: Linux, root (to capture), tcpdump and
 * tshark ({@link DebianPackages}: installed when missing), looked at once per JVM; and a way to run them.
 */
final class CaptureTools {

    /** The dissector under test, in the repository this module sits in. */
    static final Path DISSECTOR = Path.of("..", "tools", "wireshark", "zcnet.lua").toAbsolutePath().normalize();

    private static boolean probed;
    private static String unavailable;

    private CaptureTools() {
    }

    /** Skips the calling test, with the reason, unless tcpdump and tshark can run here. */
    static void assumeAvailable() throws Exception {
        String reason = unavailableReason();
        assumeTrue(reason == null, reason);
    }

    /** Null when tcpdump and tshark can run here, else one line saying why not. */
    private static synchronized String unavailableReason() throws Exception {
        if (!probed) {
            probed = true;
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                unavailable = "capturing on loopback needs Linux";
            } else if (!run(List.of("id", "-u"), 10).strip().equals("0")) {
                unavailable = "needs root to capture with tcpdump (and to install it)";
            } else {
                String missing = DebianPackages.ensure(() -> works("tcpdump", "--version") && works("tshark", "--version"),
                        "tshark", "tcpdump");
                unavailable = missing == null ? null : "tcpdump or tshark: " + missing;
            }
        }
        return unavailable;
    }

    /** Runs {@code argv} to completion within {@code seconds} and returns its standard output; fails otherwise. */
    static String run(List<String> argv, long seconds) throws Exception {
        Process p = new ProcessBuilder(argv).start();
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(argv.getFirst() + " did not finish in " + seconds + " s");
        }
        if (p.exitValue() != 0) {
            fail(String.join(" ", argv) + " exited " + p.exitValue() + ": " + new String(err.get(), StandardCharsets.UTF_8));
        }
        return new String(out, StandardCharsets.UTF_8);
    }

    private static byte[] readAll(InputStream in) {
        try {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }

    private static boolean works(String... argv) {
        try {
            return new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }
}
