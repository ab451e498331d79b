package io.zcnet.examples;

import java.io.Console;
import java.io.PrintWriter;
import java.util.Locale;

/**
 * Shows a running transfer: on a terminal one line redrawn in place (a bar, the rate since the last redraw
 * and the bytes so far), elsewhere one plain line per second; or, when given an interval
 * ({@link #plainEvery}), plain lines at that interval wherever the output goes, for a time series of the
 * rate. {@link #update} compares two longs and allocates only on the calls it prints; {@link #due()} says
 * when the next line is due, for a caller that sleeps in between. The calling thread only.
 */
final class ProgressMeter {
    private static final long TERMINAL_INTERVAL = 250_000_000L;
    private static final long PLAIN_INTERVAL = 1_000_000_000L;
    private static final int BAR = 30;

    private final PrintWriter out;
    private final boolean terminal;
    private final BulkPlan plan;
    private final long interval;
    private final String plainFormat;
    private long start;
    private long lastNanos;
    private long lastBytes;
    private boolean drawn;

    ProgressMeter(PrintWriter out, boolean terminal, BulkPlan plan) {
        this(out, terminal, plan, terminal ? TERMINAL_INTERVAL : PLAIN_INTERVAL, "%.1f");
    }

    private ProgressMeter(PrintWriter out, boolean terminal, BulkPlan plan, long interval, String secondsFormat) {
        this.out = out;
        this.terminal = terminal;
        this.plan = plan;
        this.interval = interval;
        this.plainFormat = "progress: seconds=" + secondsFormat + " gbit/s=%.3f bytes=%d";
    }

    /**
     * Plain lines every {@code intervalNanos} (at least 1 ms), on a terminal too, their seconds to the
     * millisecond: {@code progress: seconds=0.200 gbit/s=0.612 bytes=15302656}, the rate being that of
     * the interval since the previous line.
     */
    static ProgressMeter plainEvery(PrintWriter out, BulkPlan plan, long intervalNanos) {
        if (intervalNanos < 1_000_000) {
            throw new IllegalArgumentException("a progress interval is at least 1 ms, got " + intervalNanos + " ns");
        }
        return new ProgressMeter(out, false, plan, intervalNanos, "%.3f");
    }

    /** Whether standard output is an interactive terminal that can redraw a line. */
    static boolean onTerminal() {
        Console console = System.console();
        return console != null && console.isTerminal() && !"dumb".equals(System.getenv("TERM"));
    }

    void start(long now) {
        start = now;
        lastNanos = now;
        lastBytes = 0;
    }

    /** When, in {@link System#nanoTime()}'s terms, {@link #update} prints next. */
    long due() {
        return lastNanos + interval;
    }

    void update(long now, long bytes) {
        if (now - lastNanos < interval) {
            return;
        }
        double gbits = (bytes - lastBytes) * 8.0 / (now - lastNanos);
        lastNanos = now;
        lastBytes = bytes;
        if (terminal) {
            double done = plan.timed() ? (double) (now - start) / plan.nanos() : (double) bytes / plan.totalBytes();
            int filled = (int) Math.min(BAR, Math.round(done * BAR));
            out.print(String.format(Locale.ROOT, "\r[%s%s] %3.0f%% %8.3f gbit/s %10.3f GB ", "#".repeat(filled),
                    "-".repeat(BAR - filled), Math.min(100, done * 100), gbits, bytes / 1e9));
            drawn = true;
        } else {
            out.println(String.format(Locale.ROOT, plainFormat, (now - start) / 1e9, gbits, bytes));
        }
        out.flush();
    }

    /** Clears the redrawn line, so the result line starts on a clean one. */
    void finish() {
        if (drawn) {
            out.print("\r" + " ".repeat(BAR + 40) + "\r");
            out.flush();
            drawn = false;
        }
    }
}
