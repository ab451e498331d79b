package io.zcnet.examples;

import java.util.Locale;

/** Formats echo results as aligned table rows. */
final class Reports {
    private Reports() {
    }

    static String header() {
        return String.format(Locale.ROOT, "%-22s %-7s %12s %9s %9s %9s %9s %9s %8s %6s",
                "phase", "engine", "msgs/s", "MB/s", "p50 us", "p90 us", "p99 us", "p99.9 us", "sys/msg", "errors");
    }

    static String row(String phase, EchoClient.Result r) {
        return String.format(Locale.ROOT, "%-22s %-7s %12.0f %9.1f %9.1f %9.1f %9.1f %9.1f %8.3f %6d",
                phase, r.engine().name().toLowerCase(Locale.ROOT), r.messagesPerSecond(), r.megabytesPerSecond(),
                r.micros(50), r.micros(90), r.micros(99), r.micros(99.9), r.syscallsPerMessage(), r.errors());
    }
}
