package io.zcnet.jmh.rx;

import io.zcnet.ring.EventLoopConfig;

import java.util.Map;

/**
 * Small messages through one framed connection, both ends in this process: SENDs of {@code --size} bytes
 * (default 64) from zc-tx to zc-rx, each placed into a posted receive and delivered as one completion,
 * {@code --window} (default 1024) in flight. Prints the {@link MeasuredInterval} RESULT line, then a
 * DETAIL line with the two loops' system calls per message and what each side did.
 *
 * <pre>ZcnetMessages --engine uring|nio --seconds S --size 64 --window 1024 --icrc false</pre>
 */
public final class ZcnetMessages {
    private ZcnetMessages() {
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args,
                Map.of("engine", "uring", "seconds", "5", "size", "64", "window", "1024", "icrc", "false"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(options.text("engine"));
        String impl = "zcnet-" + engine.name().toLowerCase();
        DeliveryCount delivered = new DeliveryCount();
        try (FramedLink link = new FramedLink(engine, FramedLink.Kind.SEND, options.integer("size"),
                options.integer("window"), options.flag("icrc"), delivered)) {
            long syscalls = link.syscalls();
            long messages = delivered.messages();
            MeasuredInterval.run(impl, delivered, MeasuredInterval.MESSAGES_WARMUP, options.integer("seconds"));
            link.check();
            System.out.printf("DETAIL loop_syscalls_per_msg=%.4f %s%n",
                    (double) (link.syscalls() - syscalls) / (delivered.messages() - messages), link.describe());
        } catch (Exception | Error e) {
            MeasuredInterval.abort(impl, e);
        }
    }
}
