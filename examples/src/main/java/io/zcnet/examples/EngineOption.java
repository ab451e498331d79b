package io.zcnet.examples;

import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;
import picocli.CommandLine.Option;

/** The {@code --engine} and {@code --busy-poll} options shared by the commands that open event loops. */
final class EngineOption {
    @Option(names = "--engine", paramLabel = "auto|uring|nio", defaultValue = "${sys:zcnet.engine:-auto}",
            description = "Engine: auto (io_uring when usable, else NIO), uring or nio. Default: ${DEFAULT-VALUE}.")
    String engine;

    @Option(names = "--busy-poll",
            description = "Poll without ever sleeping in the kernel (Agrona busy-spin): lowest latency, one core at 100%.")
    boolean busyPoll;

    EventLoopConfig config() {
        EventLoopConfig config = EventLoopConfig.defaults().withEngine(EventLoopConfig.parseChoice(engine));
        return busyPoll ? config.withIdle(LoopIdle.busySpin()) : config;
    }
}
