package io.zcnet.ring.fallback;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The fallback as a user meets it: a real process on a kernel that refuses io_uring. The kernel is made
 * to refuse with {@code kernel.io_uring_disabled=2} (the switch distributions and container hosts use)
 * for the lifetime of one child JVM, then restored. Needs root to write the sysctl; skipped otherwise.
 *
 * <p>The sysctl is the host's, not this process's: for that second every process on the host is refused io_uring.
 * Two runs of this test at once (two builds on one host) would each save what the other set and one could leave
 * io_uring disabled for good, so the whole save, set and restore holds a host-wide lock file.
 */
class UringRefusedFallbackTest {
    private static final Path SYSCTL = Path.of("/proc/sys/kernel/io_uring_disabled");
    private static final Path LOCK = Path.of(System.getProperty("java.io.tmpdir"), "zcnet-io_uring_disabled.lock");

    @Test
    void refusedIoUringFallsBackToNioWithOneClearReason() throws Exception {
        assumeTrue(Files.isWritable(SYSCTL), "needs root to set kernel.io_uring_disabled (run as root, as CI does)");
        List<String> lines;
        String stderr;
        try (FileChannel lock = FileChannel.open(LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock held = lock.lock()) {
            String original = Files.readString(SYSCTL).trim();
            Files.writeString(SYSCTL, "2");
            try {
                Process child = new ProcessBuilder(childCommand()).start();
                assertTrue(child.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
                lines = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
                stderr = new String(child.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, child.exitValue(), "child failed: " + stderr);
            } finally {
                Files.writeString(SYSCTL, original);
            }
        }
        assertTrue(lines.contains("engine=NIO"), "automatic choice must fall back to NIO: " + lines);
        String reason = lines.stream().filter(l -> l.startsWith("reason=")).findFirst().orElse("");
        assertTrue(reason.contains("EPERM") && reason.contains("io_uring_disabled"),
                "the reason names the errno and the sysctl: " + reason);
        long warnings = stderr.lines().filter(l -> l.contains("using the NIO engine")).count();
        assertEquals(1, warnings, "the fallback is reported exactly once on stderr: " + stderr);
        String explicit = lines.stream().filter(l -> l.startsWith("explicit-uring=")).findFirst().orElse("");
        assertTrue(explicit.startsWith("explicit-uring=refused") && explicit.contains("EPERM"),
                "an explicit io_uring request fails with the reason instead of falling back: " + explicit);
    }

    private static List<String> childCommand() throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(FallbackProbe.class.getName());
        return cmd;
    }
}
