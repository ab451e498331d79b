package io.zcnet.jmh.rx;

import io.zcnet.ring.EventLoopConfig;

import java.util.Map;

/**
 * Bulk RDMA WRITEs over one queue pair with one or several subflows, both ends in this process, driven on
 * the loop threads ({@link QueuePairLink}): the queue-pair counterpart of {@link ZcnetBulk}, against
 * {@code iperf3 -P <subflows>} in {@code bench/bulk.sh}.
 *
 * <pre>QueuePairBulk --engine uring|nio --seconds S --size 1048576 --window 16 --subflows 1 --icrc false</pre>
 */
public final class QueuePairBulk {
    private QueuePairBulk() {
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args, Map.of("engine", "uring", "seconds", "5", "size", "1048576",
                "window", "16", "subflows", "1", "icrc", "false"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(options.text("engine"));
        String impl = "zcnet-qp-" + engine.name().toLowerCase();
        DeliveryCount delivered = new DeliveryCount();
        try (QueuePairLink link = new QueuePairLink(engine, QueuePairLink.Kind.WRITE, options.integer("size"),
                options.integer("window"), options.integer("subflows"), Boolean.parseBoolean(options.text("icrc")),
                delivered)) {
            MeasuredInterval.run(impl, delivered, MeasuredInterval.BULK_WARMUP, options.integer("seconds"));
            link.check();
            System.out.println("DETAIL " + link.describe());
        } catch (Exception | Error e) {
            MeasuredInterval.abort(impl, e);
        }
    }
}
