package io.zcnet.examples;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One operation at one size, as rank 0 of {@code zcnet allreduce} reports it: the RESULT line that
 * bench/collectives.sh reads from every peer (Gloo's and MPI's print the same with their impl=), with
 * the times and bandwidths defined as there: avg, min, p50 and max are the slowest rank's mean, fastest,
 * median and slowest operation (max against p50 is the spread), cpu the largest of the ranks' process CPU time
 * (user and system) per timed operation; algbw = bytes / avg and busbw = algbw times the operation's
 * {@linkplain CollectiveOp#busFactor bus factor}, in Gbit/s (10^9 bits).
 */
record CollectiveResult(String op, String algo, int ranks, long bytes, long warmup, long iters, double avgMicros,
        double minMicros, double p50Micros, double maxMicros, double cpuMicros, double algbwGbps, double busbwGbps, boolean ok) {

    static final String PREFIX = "RESULT impl=zcnet ";

    /**
     * {@code RESULT impl=zcnet op=OP algo=ALGO ranks=N bytes=B warmup=N iters=N avg_us=T min_us=T p50_us=T
     * max_us=T cpu_us=T algbw_gbps=X busbw_gbps=X check=ok|FAILED}.
     */
    String line() {
        return String.format(Locale.ROOT, PREFIX + "op=%s algo=%s ranks=%d bytes=%d warmup=%d iters=%d avg_us=%.2f"
                        + " min_us=%.2f p50_us=%.2f max_us=%.2f cpu_us=%.2f algbw_gbps=%.4f busbw_gbps=%.4f check=%s", op, algo,
                ranks, bytes, warmup, iters, avgMicros, minMicros, p50Micros, maxMicros, cpuMicros, algbwGbps, busbwGbps, ok ? "ok" : "FAILED");
    }

    /** The result a {@link #line()} names, or null for any other line. */
    static CollectiveResult parse(String line) {
        if (!line.startsWith(PREFIX)) {
            return null;
        }
        Map<String, String> f = new HashMap<>();
        for (String field : line.substring(PREFIX.length()).trim().split("\\s+")) {
            int eq = field.indexOf('=');
            if (eq > 0) {
                f.put(field.substring(0, eq), field.substring(eq + 1));
            }
        }
        try {
            return new CollectiveResult(f.get("op"), f.get("algo"), Integer.parseInt(f.get("ranks")),
                    Long.parseLong(f.get("bytes")), Long.parseLong(f.get("warmup")), Long.parseLong(f.get("iters")),
                    Double.parseDouble(f.get("avg_us")), Double.parseDouble(f.get("min_us")),
                    Double.parseDouble(f.get("p50_us")), Double.parseDouble(f.get("max_us")),
                    Double.parseDouble(f.get("cpu_us")),
                    Double.parseDouble(f.get("algbw_gbps")),
                    Double.parseDouble(f.get("busbw_gbps")), "ok".equals(f.get("check")));
        } catch (NullPointerException | NumberFormatException e) {
            throw new IllegalArgumentException("not a whole RESULT line: " + line, e);
        }
    }
}
