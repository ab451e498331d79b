package io.zcnet.examples;

import io.zcnet.qp.QpStatistics;

import java.util.Locale;

/**
 * The outcome of a bulk run as the client reports it, and the one result line it prints: space-separated
 * {@code key=value} tokens with no space inside a value, so {@code split(" ")} then {@code split("=", 2)}
 * parses it.
 *
 * @param plan         what was moved
 * @param subflows     subflows the queue pair had
 * @param live         of those, the ones still alive at the end on the client's side (a failed path's is not)
 * @param bytes        payload bytes of the completed data work requests
 * @param nanos        from the first post to the last completion
 * @param subflowBytes payload bytes each subflow of the data's sender carried, by subflow index
 * @param framesResent frames the data's sender sent again after a subflow failed
 * @param bytesResent  payload bytes of those frames
 * @param mismatches   messages that arrived wrong or not at all (counted only when verifying)
 * @param engine       the client's engine, as {@code uring} or {@code nio}
 */
record BulkResult(BulkPlan plan, int subflows, int live, long bytes, long nanos, long[] subflowBytes, long framesResent,
        long bytesResent, long mismatches, String engine) {

    /**
     * {@code bulk: op=.. message=.. subflows=.. live=.. bytes=.. seconds=.. gbit/s=.. shares=[i:p%,..] resent=f/b
     * verify=.. engine=..}.
     */
    String line() {
        return "bulk: op=" + plan.op().label() + " message=" + plan.messageSize() + " subflows=" + subflows
                + " live=" + live + " bytes=" + bytes + " seconds=" + seconds(nanos) + " gbit/s=" + gbits(bytes, nanos)
                + " shares=" + shares(subflowBytes) + " resent=" + framesResent + "/" + bytesResent
                + " verify=" + verdict(plan.verify(), mismatches) + " engine=" + engine;
    }

    boolean verified() {
        return mismatches == 0;
    }

    static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e9);
    }

    static String gbits(long bytes, long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos == 0 ? 0.0 : bytes * 8.0 / nanos);
    }

    /** {@code off}, {@code ok}, or {@code failed(n)} with the number of messages that did not check out. */
    static String verdict(boolean verify, long mismatches) {
        return !verify ? "off" : mismatches == 0 ? "ok" : "failed(" + mismatches + ")";
    }

    /** Each subflow's share of {@code bytes}, in whole percent: {@code [0:26%,1:25%,...]}. */
    static String shares(long[] bytes) {
        long total = 0;
        for (long b : bytes) {
            total += b;
        }
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < bytes.length; i++) {
            s.append(i == 0 ? "" : ",").append(i).append(':').append(total == 0 ? 0 : Math.round(100.0 * bytes[i] / total))
                    .append('%');
        }
        return s.append(']').toString();
    }

    /** Subflows of a queue pair that are alive. */
    static int live(QpStatistics stats) {
        int n = 0;
        for (QpStatistics.SubflowStatistics s : stats.subflows()) {
            n += s.alive() ? 1 : 0;
        }
        return n;
    }

    /** Payload bytes per subflow of a queue pair, by subflow index. */
    static long[] subflowBytes(QpStatistics stats) {
        int n = 0;
        for (QpStatistics.SubflowStatistics s : stats.subflows()) {
            n = Math.max(n, s.index() + 1);
        }
        long[] bytes = new long[n];
        for (QpStatistics.SubflowStatistics s : stats.subflows()) {
            bytes[s.index()] = s.payloadBytes();
        }
        return bytes;
    }
}
