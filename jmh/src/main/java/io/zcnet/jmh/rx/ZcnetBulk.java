package io.zcnet.jmh.rx;

import io.zcnet.ring.EventLoopConfig;

import java.util.Map;

/**
 * Bulk transfer through one framed connection, both ends in this process: RDMA WRITEs of {@code --size}
 * bytes (default 1 MiB) from zc-tx into a region registered at zc-rx, {@code --window} (default 8) messages
 * in flight. Prints the {@link MeasuredInterval} RESULT line, then a DETAIL line with the receiver's share
 * of payload bytes the kernel wrote straight into the region, and what each side did.
 *
 * <pre>ZcnetBulk --engine uring|nio --seconds S --size 1048576 --window 8 --icrc false</pre>
 */
public final class ZcnetBulk {
    private ZcnetBulk() {
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args, Map.of("engine", "uring", "seconds", "5",
                "size", String.valueOf(1 << 20), "window", "8", "icrc", "false"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(options.text("engine"));
        String impl = "zcnet-" + engine.name().toLowerCase();
        DeliveryCount delivered = new DeliveryCount();
        try (FramedLink link = new FramedLink(engine, FramedLink.Kind.WRITE, options.integer("size"),
                options.integer("window"), options.flag("icrc"), delivered)) {
            MeasuredInterval.run(impl, delivered, MeasuredInterval.BULK_WARMUP, options.integer("seconds"));
            link.check();
            System.out.printf("DETAIL direct_share=%.4f %s%n", link.directShare(), link.describe());
        } catch (Exception | Error e) {
            MeasuredInterval.abort(impl, e);
        }
    }
}
