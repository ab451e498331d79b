package io.zcnet.jmh.rx;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time (user + system, every thread) this process has consumed, read from {@code /proc/self/stat}:
 * fields 14 {@code utime} and 15 {@code stime}, in clock ticks (proc(5)). Ticks per second are asked of
 * {@code getconf CLK_TCK} once, when the clock is made, rather than assumed to be 100: Java has no
 * {@code sysconf}. The resolution is one tick (10 ms at 100 Hz), small against a measured interval of
 * seconds. Safe for any thread.
 */
final class ProcessCpuClock {
    private static final Path STAT = Path.of("/proc/self/stat");
    /** utime and stime counted from field 3 (the state), which is the first after the command name. */
    private static final int UTIME = 14 - 3;
    private static final int STIME = 15 - 3;

    private final long ticksPerSecond;

    ProcessCpuClock() throws IOException, InterruptedException {
        Process getconf = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
        String answer = new String(getconf.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).strip();
        if (getconf.waitFor() != 0 || !answer.matches("[1-9][0-9]*")) {
            throw new IOException("'getconf CLK_TCK' answered '" + answer + "'");
        }
        ticksPerSecond = Long.parseLong(answer);
    }

    /** CPU seconds consumed by this process since it started. */
    double seconds() throws IOException {
        String stat = Files.readString(STAT, StandardCharsets.US_ASCII);
        // Field 2, the command name, is in parentheses and may itself hold spaces and parentheses.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long ticks = Long.parseLong(fields[UTIME]) + Long.parseLong(fields[STIME]);
        return (double) ticks / ticksPerSecond;
    }
}
