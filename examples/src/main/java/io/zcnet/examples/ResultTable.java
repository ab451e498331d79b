package io.zcnet.examples;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The human-readable form of {@code zcnet allreduce}'s results: a row per operation and size as they
 * arrive, then one summary line. With a bound (the --netns rate), each bus bandwidth also as its share of
 * it. Rows may come from another thread than the summary; calls must not overlap.
 */
final class ResultTable {
    private static final String ROW = "%-15s %-16s %7s %7s %11s %11s %10s %10s %s";

    /** The bound B in Gbit/s, or 0 where there is none. */
    private final double boundGbps;
    private final List<CollectiveResult> results = new ArrayList<>();

    ResultTable(double boundGbps) {
        this.boundGbps = boundGbps;
    }

    String header() {
        return String.format(Locale.ROOT, ROW, "op", "algo", "size", "iters", "avg us", "p50 us", "algbw", "busbw",
                boundGbps > 0 ? "busbw/B  check" : "check")
                + "\n" + String.format(Locale.ROOT, ROW, "", "", "", "", "", "", "Gbit/s", "Gbit/s", "");
    }

    String row(CollectiveResult r) {
        results.add(r);
        String check = r.ok() ? "ok" : "FAILED";
        return String.format(Locale.ROOT, ROW, r.op(), r.algo(), size(r.bytes()), r.iters(),
                String.format(Locale.ROOT, "%.1f", r.avgMicros()), String.format(Locale.ROOT, "%.1f", r.p50Micros()),
                String.format(Locale.ROOT, "%.3f", r.algbwGbps()), String.format(Locale.ROOT, "%.3f", r.busbwGbps()),
                boundGbps > 0 ? String.format(Locale.ROOT, "%-8.2f %s", r.busbwGbps() / boundGbps, check) : check);
    }

    /**
     * {@code summary: 12 results, all checks ok; at the largest size: allreduce:auto busbw 1.234 Gbit/s at 64M,
     * ...}: per operation and algorithm (with a bound, each busbw's share of it; a barrier's mean time).
     */
    String summary() {
        if (results.isEmpty()) {
            return "summary: no results";
        }
        long failed = results.stream().filter(r -> !r.ok()).count();
        Map<String, CollectiveResult> largest = new LinkedHashMap<>();
        for (CollectiveResult r : results) {
            largest.merge(r.op() + ":" + r.algo(), r, (a, b) -> b.bytes() >= a.bytes() ? b : a);
        }
        List<String> figures = new ArrayList<>();
        for (Map.Entry<String, CollectiveResult> e : largest.entrySet()) {
            CollectiveResult r = e.getValue();
            figures.add(r.bytes() == 0
                    ? String.format(Locale.ROOT, "%s %.1f us", e.getKey(), r.avgMicros())
                    : String.format(Locale.ROOT, "%s busbw %.3f Gbit/s at %s%s", e.getKey(), r.busbwGbps(), size(r.bytes()),
                            boundGbps > 0 ? String.format(Locale.ROOT, " (%.2f of B)", r.busbwGbps() / boundGbps) : ""));
        }
        return "summary: " + results.size() + " results, " + (failed == 0 ? "all checks ok" : failed + " checks FAILED")
                + (figures.isEmpty() ? "" : "; at the largest size: " + String.join(", ", figures));
    }

    boolean isEmpty() {
        return results.isEmpty();
    }

    boolean allOk() {
        return results.stream().allMatch(CollectiveResult::ok);
    }

    /** 1K, 64M, 3G: bytes in binary units where whole, else as they are. */
    static String size(long bytes) {
        String[] units = {"", "K", "M", "G"};
        int u = 0;
        while (u < units.length - 1 && bytes >= 1024 && bytes % 1024 == 0) {
            bytes /= 1024;
            u++;
        }
        return bytes + units[u];
    }
}
