package io.zcnet.jmh.rx;

import java.io.IOException;
import java.time.Duration;
import java.util.Locale;

/**
 * The one measurement every rx program makes, so that zcnet's figures and its peers' mean the same
 * thing. Called by the main thread once both ends run: it lets the run warm up unmeasured (one of the
 * warm-ups below, the same for every implementation of a workload), prints {@code MEASURING pid=N}
 * (a script attaches its system-call counter then), sleeps the measured seconds and prints one line
 * <pre>RESULT impl=I messages=M bytes=B seconds=T msg_per_s=R gbit_per_s=G cpu_seconds=C pid=N</pre>
 * from the differences over the interval: messages and payload bytes delivered to the receiving
 * handler, elapsed {@code System.nanoTime}, and the whole process's user + system CPU time (both ends,
 * and the JVM's own threads). Gbit/s counts payload bytes, 10^9 bits. A program that measures more over
 * the same interval (round-trip latencies) passes a {@link Probe}, whose fields end the line.
 */
final class MeasuredInterval {
    /**
     * A measurement of its own over the measured interval: {@link #begin} is called as
     * {@code MEASURING} is printed, {@link #end} as the interval ends, on the main thread both times.
     */
    interface Probe {
        void begin();

        /** The interval's figures as {@code key=value} pairs separated by single spaces. */
        String end();
    }

    private static final Probe NONE = new Probe() {
        @Override
        public void begin() {
        }

        @Override
        public String end() {
            return "";
        }
    };

    /**
     * Warm-up of the small-message programs. On the project's 2-core VM the JIT keeps compiling for
     * 5-6 s under this load ({@code -XX:+PrintCompilation}), and Netty's rate climbs by half over that
     * time; a 2 s warm-up measured the climb, not the program.
     */
    static final Duration MESSAGES_WARMUP = Duration.ofSeconds(6);
    /** Warm-up of the bulk programs: their rate is flat after about 1.5 s (the per-byte work is the kernel's). */
    static final Duration BULK_WARMUP = Duration.ofSeconds(2);

    private MeasuredInterval() {
    }

    /** Measures {@code delivered} for {@code seconds} after {@code warmup}; fails if nothing was delivered. */
    static void run(String impl, DeliveryCount delivered, Duration warmup, int seconds)
            throws IOException, InterruptedException {
        run(impl, delivered, warmup, seconds, NONE);
    }

    /** {@link #run(String, DeliveryCount, Duration, int)}, with {@code probe}'s fields at the end of the line. */
    static void run(String impl, DeliveryCount delivered, Duration warmup, int seconds, Probe probe)
            throws IOException, InterruptedException {
        ProcessCpuClock cpu = new ProcessCpuClock();
        long pid = ProcessHandle.current().pid();
        Thread.sleep(warmup);
        System.out.println("MEASURING pid=" + pid);
        System.out.flush();
        long messages = delivered.messages();
        long bytes = delivered.bytes();
        double cpuSeconds = cpu.seconds();
        probe.begin();
        long start = System.nanoTime();

        Thread.sleep(Duration.ofSeconds(seconds));

        messages = delivered.messages() - messages;
        bytes = delivered.bytes() - bytes;
        cpuSeconds = cpu.seconds() - cpuSeconds;
        double elapsed = (System.nanoTime() - start) / 1e9;
        String probed = probe.end();
        if (messages == 0) {
            throw new IllegalStateException(impl + ": no message delivered in the measured interval");
        }
        System.out.printf(Locale.ROOT,
                "RESULT impl=%s messages=%d bytes=%d seconds=%.3f msg_per_s=%.1f gbit_per_s=%.3f cpu_seconds=%.2f pid=%d%s%n",
                impl, messages, bytes, elapsed, messages / elapsed, bytes * 8 / elapsed / 1e9, cpuSeconds, pid,
                probed.isEmpty() ? "" : " " + probed);
        System.out.flush();
    }

    /**
     * Ends the process at once, without a RESULT: a run whose connection broke or whose handler threw
     * measured something else than it claims. For the event loops' {@code exceptionCaught}.
     */
    static void abort(String impl, Throwable cause) {
        System.err.println(impl + ": the run failed");
        cause.printStackTrace();
        System.exit(1);
    }
}
