package io.zcnet.jmh.rx;

import io.zcnet.ring.EventLoopConfig;

import java.util.Locale;
import java.util.Map;

/**
 * Bulk transfer through one framed connection, both ends in this process: RDMA WRITEs of {@code --size}
 * bytes (default 1 MiB) from zc-tx into a region registered at zc-rx, {@code --window} (default 8) messages
 * in flight. Prints the {@link MeasuredRun} lines plus the receiver's direct-placement share.
 */
public final class ZcnetBulk {
    private static final String USAGE = "ZcnetBulk [--seconds 5] [--size 1048576] [--window 8] [--engine uring|nio]"
            + " [--icrc false]";

    private ZcnetBulk() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = MeasuredRun.arguments(args, USAGE);
        double seconds = Double.parseDouble(a.getOrDefault("seconds", "5"));
        int size = Integer.parseInt(a.getOrDefault("size", String.valueOf(1 << 20)));
        int window = Integer.parseInt(a.getOrDefault("window", "8"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(a.getOrDefault("engine", "uring"));
        boolean icrc = Boolean.parseBoolean(a.getOrDefault("icrc", "false"));
        try (FramedLink link = new FramedLink(engine, FramedLink.Kind.WRITE, size, window, icrc)) {
            MeasuredRun.measure("zcnet-" + engine.name().toLowerCase(), 2, seconds, link::delivered, link::payloadBytes,
                    link::syscalls, link::check, () -> {
                        try {
                            return String.format(Locale.ROOT, "direct_share=%.4f icrc=%s", link.directShare(), icrc);
                        } catch (Exception e) {
                            return "direct_share=n/a";
                        }
                    });
            System.err.println(link.describe());
        }
    }
}
