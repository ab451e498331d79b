package io.zcnet.jmh.rx;

import io.zcnet.qp.QpConfig;
import io.zcnet.ring.EventLoopConfig;

import java.util.Map;

/**
 * Small SENDs over one queue pair, both ends in this process, driven on the loop threads
 * ({@link QueuePairLink}): the queue-pair counterpart of {@link ZcnetMessages} and {@link NettyMessages},
 * measured by the same {@link MeasuredInterval}.
 *
 * <pre>QueuePairMessages --engine uring|nio --seconds S --size 64 --window 1024 --icrc false --inline false</pre>
 * {@code --inline true} sends each message as inline data ({@code WorkRequest.inline}, at most 4096 bytes).
 */
public final class QueuePairMessages {
    private QueuePairMessages() {
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args,
                Map.of("engine", "uring", "seconds", "5", "size", "64", "window", "1024", "icrc", "false",
                        "inline", "false"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(options.text("engine"));
        boolean inline = Boolean.parseBoolean(options.text("inline"));
        String impl = "zcnet-qp-" + engine.name().toLowerCase() + (inline ? "-inline" : "");
        DeliveryCount delivered = new DeliveryCount();
        try (QueuePairLink link = new QueuePairLink(engine,
                inline ? QueuePairLink.Kind.INLINE_SEND : QueuePairLink.Kind.SEND, options.integer("size"),
                options.integer("window"), 1, Boolean.parseBoolean(options.text("icrc")),
                QpConfig.defaults().segmentSize(), delivered)) {
            MeasuredInterval.run(impl, delivered, MeasuredInterval.MESSAGES_WARMUP, options.integer("seconds"));
            link.check();
            System.out.println("DETAIL " + link.describe());
        } catch (Exception | Error e) {
            MeasuredInterval.abort(impl, e);
        }
    }
}
