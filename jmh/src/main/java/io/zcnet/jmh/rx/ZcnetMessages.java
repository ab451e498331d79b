package io.zcnet.jmh.rx;

import io.zcnet.ring.EventLoopConfig;

import java.util.Map;

/**
 * Small messages through one framed connection, both ends in this process: SENDs of {@code --size} bytes
 * (default 64) from zc-tx to zc-rx, each placed into a posted receive and delivered as one completion,
 * {@code --window} (default 1024) in flight. Prints the {@link MeasuredRun} lines; system calls are the
 * two loops' own counts.
 */
public final class ZcnetMessages {
    private static final String USAGE = "ZcnetMessages [--seconds 5] [--size 64] [--window 1024] [--engine uring|nio]"
            + " [--icrc false]";

    private ZcnetMessages() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> a = MeasuredRun.arguments(args, USAGE);
        double seconds = Double.parseDouble(a.getOrDefault("seconds", "5"));
        int size = Integer.parseInt(a.getOrDefault("size", "64"));
        int window = Integer.parseInt(a.getOrDefault("window", "1024"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(a.getOrDefault("engine", "uring"));
        boolean icrc = Boolean.parseBoolean(a.getOrDefault("icrc", "false"));
        try (FramedLink link = new FramedLink(engine, FramedLink.Kind.SEND, size, window, icrc)) {
            MeasuredRun.measure("zcnet-" + engine.name().toLowerCase(), 2, seconds, link::delivered, link::payloadBytes,
                    link::syscalls, link::check, () -> "icrc=" + icrc + " window=" + window);
            System.err.println(link.describe());
        }
    }
}
