package io.zcnet.examples;

import io.zcnet.ring.EventLoopConfig;
import io.zcnet.ring.LoopIdle;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code --engine} and {@code --busy-poll}: the options of the commands that run event loops of their own
 * (queue-pair contexts choose their loops' idling themselves, so {@code bulk} takes only {@link EngineOption}).
 */
final class LoopOptions {
    @Mixin
    EngineOption engine;

    @Option(names = "--busy-poll",
            description = "Poll without ever sleeping in the kernel (Agrona busy-spin): lowest latency, one core at 100%%.")
    boolean busyPoll;

    EventLoopConfig config() {
        EventLoopConfig config = EventLoopConfig.defaults().withEngine(engine.choice());
        return busyPoll ? config.withIdle(LoopIdle.busySpin()) : config;
    }
}
