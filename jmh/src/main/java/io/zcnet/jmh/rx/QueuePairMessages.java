package io.zcnet.jmh.rx;

import io.zcnet.qp.QpConfig;
import io.zcnet.ring.EventLoopConfig;

import java.util.Map;

/**
 * Small SENDs over one queue pair, both ends in this process, driven on the loop threads
 * ({@link QueuePairLink}): the queue-pair counterpart of {@link ZcnetMessages} and {@link NettyMessages},
 * measured by the same {@link MeasuredInterval}.
 *
 * <pre>QueuePairMessages --engine uring|nio --seconds S --size 64 --window 1024 --signal-every 512 --icrc false --inline false</pre>
 * {@code --inline true} sends each message as inline data ({@code WorkRequest.inline}, at most 4096 bytes).
 * {@code --signal-every} (default half the window) is how many SENDs the client posts per signaled one, and so
 * per completion it waits for before posting as many again.
 */
public final class QueuePairMessages {
    private QueuePairMessages() {
    }

    /** The option, or half the window when it is 0 (not given). */
    private static int signalEvery(RunOptions options) {
        int given = options.integer("signal-every");
        return given != 0 ? given : Math.max(1, options.integer("window") / 2);
    }

    public static void main(String[] args) throws Exception {
        RunOptions options = RunOptions.parse(args,
                Map.of("engine", "uring", "seconds", "5", "size", "64", "window", "1024", "signal-every", "0",
                        "icrc", "false", "inline", "false"));
        EventLoopConfig.Choice engine = EventLoopConfig.parseChoice(options.text("engine"));
        boolean inline = options.flag("inline");
        String impl = "zcnet-qp-" + engine.name().toLowerCase() + (inline ? "-inline" : "");
        DeliveryCount delivered = new DeliveryCount();
        try (QueuePairLink link = new QueuePairLink(engine,
                inline ? QueuePairLink.Kind.INLINE_SEND : QueuePairLink.Kind.SEND, options.integer("size"),
                options.integer("window"), signalEvery(options), 1, options.flag("icrc"),
                QpConfig.defaults().segmentSize(), delivered)) {
            MeasuredInterval.run(impl, delivered, MeasuredInterval.MESSAGES_WARMUP, options.integer("seconds"));
            link.check();
            System.out.println("DETAIL " + link.describe());
        } catch (Exception | Error e) {
            MeasuredInterval.abort(impl, e);
        }
    }
}
