package io.zcnet.jmh.rx;

import io.zcnet.ring.EventLoopConfig;

import java.util.Map;

/**
 * Bulk RDMA WRITEs over one queue pair with one or several subflows, both ends in this process, driven on
 * the loop threads ({@link QueuePairLink}): the queue-pair counterpart of {@link ZcnetBulk}, against
 * {@code iperf3 -P <subflows>} in {@code bench/qp-loopback.sh}. Segments of 256 KiB by default, what a bulk
 * transfer wants (a quarter of the receive operations of the 64 KiB default, which suits mixed traffic and
 * keeps a queue pair's deferred-frame store at 4 MiB).
 *
 * <pre>QueuePairBulk --engine uring|nio --seconds S --size 1048576 --window 16 --subflows 1 --icrc false --segment 262144</pre>
 */
public final class QueuePairBulk {
    private QueuePairBulk() {
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args, Map.of("engine", "uring", "seconds", "5", "size", "1048576",
                "window", "16", "subflows", "1", "icrc", "false", "segment", "262144"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(options.text("engine"));
        String impl = "zcnet-qp-" + engine.name().toLowerCase();
        DeliveryCount delivered = new DeliveryCount();
        try (QueuePairLink link = new QueuePairLink(engine, QueuePairLink.Kind.WRITE, options.integer("size"),
                options.integer("window"), options.integer("window") / 4, options.integer("subflows"), options.flag("icrc"),
                options.integer("segment"), delivered)) {
            MeasuredInterval.run(impl, delivered, MeasuredInterval.BULK_WARMUP, options.integer("seconds"));
            link.check();
            System.out.println("DETAIL " + link.describe());
        } catch (Exception | Error e) {
            MeasuredInterval.abort(impl, e);
        }
    }
}
