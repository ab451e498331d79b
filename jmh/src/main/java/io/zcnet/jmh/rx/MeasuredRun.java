package io.zcnet.jmh.rx;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The measurement protocol the {@code bench/} scripts read, shared by every program they compare: warm up
 * unmeasured, print {@code MEASURING pid=N} (so a script can attach a system-call counter for exactly the
 * interval), measure for the given seconds, print one {@code RESULT key=value ...} line. CPU time is the
 * whole process's user plus system time over the interval ({@code /proc/self/stat}, in clock ticks of
 * {@code getconf CLK_TCK}, 100 on Linux x86-64 and arm64 unless the script passes {@code -Dclk.tck}).
 */
final class MeasuredRun {
    private static final long TICKS_PER_SECOND = Long.getLong("clk.tck", 100);

    private MeasuredRun() {
    }

    /** {@code --name value} pairs; every value must be given as the next argument. */
    static Map<String, String> arguments(String[] args, String usage) {
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --name value pairs; usage: " + usage);
            }
            out.put(args[i].substring(2), args[i + 1]);
        }
        return out;
    }

    /**
     * Warms up for {@code warmupSeconds}, then measures {@code seconds}, and prints the RESULT line with
     * the messages and bytes {@code messages}/{@code bytes} counted over the interval, plus {@code extra}.
     */
    static void measure(String impl, double warmupSeconds, double seconds, LongSupplier messages, LongSupplier bytes,
            LongSupplier syscalls, Runnable check, java.util.function.Supplier<String> extra) throws Exception {
        sleep(warmupSeconds);
        check.run();
        long pid = ProcessHandle.current().pid();
        System.out.println("MEASURING pid=" + pid);
        System.out.flush();
        long m0 = messages.getAsLong();
        long b0 = bytes.getAsLong();
        long s0 = syscalls.getAsLong();
        long cpu0 = cpuTicks();
        long t0 = System.nanoTime();
        sleep(seconds);
        long t1 = System.nanoTime();
        long cpu1 = cpuTicks();
        long m = messages.getAsLong() - m0;
        long b = bytes.getAsLong() - b0;
        long s = syscalls.getAsLong() - s0;
        check.run();
        double elapsed = (t1 - t0) / 1e9;
        double cpu = (double) (cpu1 - cpu0) / TICKS_PER_SECOND;
        System.out.println(String.format(Locale.ROOT,
                "RESULT impl=%s messages=%d bytes=%d seconds=%.3f msg_per_s=%.1f gbit_per_s=%.3f cpu_seconds=%.2f"
                        + " cpu_s_per_gb=%.3f syscalls_per_msg=%s pid=%d %s",
                impl, m, b, elapsed, m / elapsed, b * 8 / elapsed / 1e9, cpu, b == 0 ? 0 : cpu / (b / 1e9),
                s < 0 || m == 0 ? "n/a" : String.format(Locale.ROOT, "%.3f", (double) s / m), pid, extra.get()));
        System.out.flush();
    }

    /** User plus system time of this process so far, in clock ticks (fields 14 and 15 of /proc/self/stat). */
    static long cpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        // The command name (field 2) may hold spaces; the fields after it follow its closing parenthesis.
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    }

    private static void sleep(double seconds) throws InterruptedException {
        Thread.sleep((long) (seconds * 1000));
    }
}
